package report

import (
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
)

func TestSARIF(t *testing.T) {
	doc := render(t, SARIF, sample())
	levels := map[string]int{}
	total := 0
	for _, f := range reportcheck.SARIF(t, []byte(doc)) {
		levels[f.Level]++
		total++
	}
	if total != sampleFindings || levels["error"] != sampleFailing {
		t.Errorf("levels %v: want %d results, %d errors", levels, sampleFindings, sampleFailing)
	}
	if levels["note"] != 2 {
		t.Errorf("levels %v: want 2 notes (Reformatted, CRDChange info)", levels)
	}
	for _, want := range []string{
		`"uri": "dir%20with%20space/a,b:c.yaml"`, // no result: an object without findings
		`"uri": "file:///abs/thing.yaml"`,
		`"uri": "-"`,
		`"startLine": 9`,
	} {
		if want == `"uri": "dir%20with%20space/a,b:c.yaml"` {
			if strings.Contains(doc, "dir%20with") {
				t.Errorf("a result for an object without findings")
			}
			continue
		}
		if !strings.Contains(doc, want) {
			t.Errorf("no %s in\n%s", want, doc)
		}
	}
}

func TestSARIFEmpty(t *testing.T) {
	doc := render(t, SARIF, nil)
	if found := reportcheck.SARIF(t, []byte(doc)); len(found) != 0 {
		t.Errorf("results in an empty run: %v", found)
	}
	if !strings.Contains(doc, `"results": []`) {
		t.Errorf("no empty results:\n%s", doc)
	}
}
