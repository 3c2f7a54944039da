package report

import (
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
)

func TestGitHubEscaping(t *testing.T) {
	for _, tc := range []struct{ in, data, property string }{
		{"plain words", "plain words", "plain words"},
		{"100%", "100%25", "100%25"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"a:b,c", "a:b,c", "a%3Ab%2Cc"},
		{"%0A", "%250A", "%250A"}, // escaped once, not read as an escape
		{"::error::", "::error::", "%3A%3Aerror%3A%3A"},
	} {
		if got := EscapeData(tc.in); got != tc.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := EscapeProperty(tc.in); got != tc.property {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tc.in, got, tc.property)
		}
	}
}

func TestGitHub(t *testing.T) {
	out := render(t, GitHub, sample())
	// The notice of which minor answered, then a line per finding.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+sampleFindings {
		t.Fatalf("%d lines for %d findings:\n%s", len(lines), sampleFindings, out)
	}
	levels := map[string]int{}
	for _, f := range reportcheck.GitHub(t, out) {
		levels[f.Level]++
	}
	if levels["error"] != sampleFailing || levels["notice"] != 2 || levels["warning"] != sampleFindings-sampleFailing-2 {
		t.Errorf("levels %v", levels)
	}
	for _, want := range []string{
		`::warning file=apps/widget.yaml,line=9,title=Prune%3A Widget team-a/w::pruned unknown field "spec.colour"`,
		`::error file=apps/widget.yaml,line=2,title=Invalid%3A Widget team-a/w::the server would refuse it: spec.size: Invalid value: 100%25, a "size": <must be%0D%0Aless> & 1` + "\x00",
		`::error file=/abs/thing.yaml,line=1,title=MissingCRD%3A Thing t::no CustomResourceDefinition`,
		`::notice title=CRDChange%3A Widget prod/live::version v2 added`,
		`::warning file=crds/widget.yaml,line=1,title=CRDWarning%3A CustomResourceDefinition widgets.example.com::a warning, of the server`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
