package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// memSpool is a Spool in memory.
type memSpool struct {
	data []byte
	r    int
}

func (m *memSpool) Write(p []byte) (int, error) { m.data = append(m.data, p...); return len(p), nil }
func (m *memSpool) Read(p []byte) (int, error) {
	if m.r == len(m.data) {
		return 0, io.EOF
	}
	n := copy(p, m.data[m.r:])
	m.r += n
	return n, nil
}
func (m *memSpool) Rewind() error { m.r = 0; return nil }
func (m *memSpool) Seek(offset int64, whence int) (int64, error) {
	if whence != io.SeekStart || offset < 0 || offset > int64(len(m.data)) {
		return 0, fmt.Errorf("seek %d from %d", offset, whence)
	}
	m.r = int(offset)
	return offset, nil
}

var testTool = Tool{Name: "kubectl-crd", Version: "v0.9.0", InformationURI: "https://github.com/kubectl-crd/kubectl-crd", Command: "prune"}

// sample is a run with every kind of object and finding: failing and not,
// of no check, an object without a finding, one of no CRD (failing and
// not), a note on an input, an object of the cluster, and words that need
// escaping in every format.
func sample() []Object {
	widget := document.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "team-a", Name: "w"}
	return []Object{
		{Ref: widget, Location: Location{File: "apps/widget.yaml", Line: 2}, Findings: []Item{
			{Finding: finding.Finding{Check: finding.Prune, Reason: "UnknownField", Path: "spec.colour", Severity: finding.Warning,
				Message: `pruned unknown field "spec.colour"`, Line: 9}},
			{Finding: finding.Finding{Check: finding.Invalid, Reason: "FieldValueInvalid", Path: "spec.size", Severity: finding.Error,
				Message: "the server would refuse it: spec.size: Invalid value: 100%, a \"size\": <must be\r\nless> & 1\x00"}, Fails: true},
			{Finding: finding.Finding{Severity: finding.Warning, Reason: "Reformatted", Message: "written again without its comments", Line: 2}},
		}},
		{Ref: document.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Name: "clean"}, Location: Location{File: "dir with space/a,b:c.yaml", Line: 12}},
		{Ref: document.ObjectRef{APIVersion: "exampel.com/v1", Kind: "Widget", Name: "typo"}, Location: Location{File: "-", Line: 1}, Status: NotChecked,
			Findings: []Item{{Finding: finding.Finding{Check: finding.MissingCRD, Severity: finding.Warning, Message: "no CustomResourceDefinition for exampel.com/v1, kind Widget: not checked", Line: 1}}}},
		{Ref: document.ObjectRef{APIVersion: "other.com/v1", Kind: "Thing", Name: "t"}, Location: Location{File: "/abs/thing.yaml"}, Status: NotChecked,
			Findings: []Item{{Finding: finding.Finding{Check: finding.MissingCRD, Severity: finding.Warning, Message: "no CustomResourceDefinition for other.com/v1, kind Thing: not checked"}, Fails: true}}},
		{Ref: document.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}, Location: Location{File: "crds/widget.yaml", Line: 1}, Status: InputNote,
			Findings: []Item{{Finding: finding.Finding{Check: finding.CRDWarning, Severity: finding.Warning, Message: "a warning, of the server"}}}},
		{Ref: document.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "prod", Name: "live"}, Findings: []Item{
			{Finding: finding.Finding{Check: finding.CRDChange, Severity: finding.Info, Message: "version v2 added"}},
			{Finding: finding.Finding{Check: finding.DataLoss, Severity: finding.Error, Message: `loses "spec.x" under the new CRD`}, Fails: true},
		}},
	}
}

// counts of sample: findings, those that fail, objects that are testcases, skipped.
const (
	sampleFindings  = 8
	sampleFailing   = 3
	sampleTestcases = 5
	sampleSkipped   = 1
)

func render(t *testing.T, format string, objects []Object) string {
	t.Helper()
	w, err := New(format, testTool, &memSpool{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		if err := w.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := w.Finish(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestItemLevel(t *testing.T) {
	for _, tc := range []struct {
		it   Item
		want string
	}{
		{Item{Finding: finding.Finding{Check: finding.Invalid, Severity: finding.Error}, Fails: true}, "error"},
		{Item{Finding: finding.Finding{Check: finding.Invalid, Severity: finding.Error}}, "warning"}, // --fail-on leaves it out
		{Item{Finding: finding.Finding{Check: finding.Prune, Severity: finding.Warning}}, "warning"},
		{Item{Finding: finding.Finding{Check: finding.Prune, Severity: finding.Warning}, Fails: true}, "error"},
		{Item{Finding: finding.Finding{Check: finding.CRDChange, Severity: finding.Info}}, "note"},
		{Item{Finding: finding.Finding{Severity: finding.Warning}}, "note"},
	} {
		if got := Level(tc.it); got != tc.want {
			t.Errorf("%+v: level %q, want %q", tc.it, got, tc.want)
		}
	}
}

func TestURI(t *testing.T) {
	for file, want := range map[string]string{
		"-":                    "-",
		"apps/widget.yaml":     "apps/widget.yaml",
		"./a.yaml":             "./a.yaml",
		"../up/a.yaml":         "../up/a.yaml",
		"dir with space/a.yml": "dir%20with%20space/a.yml",
		"a:b.yaml":             "./a:b.yaml",
		"x#1?.yaml":            "x%231%3F.yaml",
		"/abs/thing.yaml":      "file:///abs/thing.yaml",
	} {
		if got := URI(file); got != want {
			t.Errorf("URI(%q) = %q, want %q", file, got, want)
		}
	}
}

func TestRulesCoverEveryCheck(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if seen[r.ID] {
			t.Errorf("rule %s twice", r.ID)
		}
		seen[r.ID] = true
		if r.Short == "" || r.Help == "" {
			t.Errorf("rule %s without its words", r.ID)
		}
	}
	for _, c := range finding.Checks {
		if !seen[string(c)] {
			t.Errorf("check %s has no rule", c)
		}
	}
	// Note and TestCase are the rules of no check.
	for _, id := range []string{NoteRule, TestCaseRule} {
		if !seen[id] {
			t.Errorf("no rule %s", id)
		}
	}
	if len(Rules) != len(finding.Checks)+2 {
		t.Errorf("%d rules for %d checks, Note and TestCase", len(Rules), len(finding.Checks))
	}
}

func TestNewUnknownFormat(t *testing.T) {
	if _, err := New("xml", testTool, &memSpool{}); err == nil {
		t.Error("no error for format xml")
	}
	for _, f := range Formats {
		if !IsFormat(f) {
			t.Errorf("IsFormat(%q) = false", f)
		}
	}
	if IsFormat("json") {
		t.Error("json is no report format")
	}
}

func TestDocsRef(t *testing.T) {
	for version, want := range map[string]string{"dev": "main", "": "main", "v1.2.3": "v1.2.3", "v1.2.3-4-gabc": "main"} {
		tool := testTool
		tool.Version = version
		if got := Rules[0].HelpURI(tool); !strings.Contains(got, "/blob/"+want+"/docs/reports.md#prune") {
			t.Errorf("version %q: help %s, want it at %s", version, got, want)
		}
	}
}

// Every rule's help link leads to a heading of docs/reports.md.
func TestRulesHaveDocs(t *testing.T) {
	data, err := os.ReadFile("../../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			headings[strings.ToLower(strings.TrimSpace(h))] = true
		}
	}
	for _, r := range Rules {
		if !headings[r.Anchor()] {
			t.Errorf("rule %s: docs/reports.md has no heading \"### %s\" for %s", r.ID, r.ID, r.HelpURI(testTool))
		}
	}
}

// Every format says which minor answered and how, as it is when the
// report is written: an older one emulated by the embedded code, or the
// embedded one by its own code.
func TestReportsSayWhichMinorAnswered(t *testing.T) {
	t.Cleanup(func() {
		if _, err := kubeversion.Use(kubeversion.Embedded); err != nil {
			t.Error(err)
		}
	})
	for _, m := range []kubeversion.Minor{kubeversion.Oldest, kubeversion.Embedded} {
		t.Run(m.String(), func(t *testing.T) {
			answer, err := kubeversion.Use(m)
			if err != nil {
				t.Fatal(err)
			}
			want := kubeversion.Stamp{Version: m.String(), Emulated: m != kubeversion.Embedded, By: "kube-apiserver " + answer.Code}
			if want.Emulated {
				want.CompatibilityVersion = (m - 1).String()
			}
			want.Differences = answer.Differences()
			if got := reportcheck.SARIFKubernetes(t, []byte(render(t, SARIF, sample()))); !reflect.DeepEqual(got, want) {
				t.Errorf("SARIF: %+v, want %+v", got, want)
			}
			d := reportcheck.JUnit(t, []byte(render(t, JUnit, sample())))
			if got := d.Kubernetes(t); !reflect.DeepEqual(got, want) || len(d.Suites) < 2 {
				t.Errorf("JUnit: %+v in %d suites, want %+v in each", got, len(d.Suites), want)
			}
			words := reportcheck.GitHubKubernetes(t, render(t, GitHub, nil))
			if words != answer.Verdicts() || strings.Contains(words, "emulated by") != want.Emulated {
				t.Errorf("GitHub: %q, want %q", words, answer.Verdicts())
			}
		})
	}
}
