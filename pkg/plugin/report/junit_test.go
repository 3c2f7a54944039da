package report

import (
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
)

func TestJUnit(t *testing.T) {
	doc := render(t, JUnit, sample())
	d := reportcheck.JUnit(t, []byte(doc))
	s := d.Suites[0]
	if s.Name != "kubectl crd prune" {
		t.Errorf("suite %q", s.Name)
	}
	if s.Tests != sampleTestcases || s.Failures != sampleFailing || s.Skipped != sampleSkipped {
		t.Errorf("tests=%d failures=%d skipped=%d, want %d, %d, %d", s.Tests, s.Failures, s.Skipped, sampleTestcases, sampleFailing, sampleSkipped)
	}
	first := s.Cases[0]
	if first.Name != "Widget team-a/w" || first.ClassName != "apps/widget.yaml" {
		t.Errorf("first testcase %q of %q", first.Name, first.ClassName)
	}
	// Words that need escaping come back as they were (NUL, which XML
	// cannot hold, as U+FFFD).
	want := "the server would refuse it: spec.size: Invalid value: 100%, a \"size\": <must be\r\nless> & 1\uFFFD"
	if len(first.Failures) != 1 || first.Failures[0].Message != want || first.Failures[0].Type != "Invalid" {
		t.Errorf("failure %+v, want message %q", first.Failures, want)
	}
	// Not lost: the findings that do not fail, the notes on the inputs.
	for _, w := range []string{`Warning: Widget team-a/w: pruned unknown field "spec.colour" (apps/widget.yaml:9)`, "Note: Widget team-a/w: written again without its comments (apps/widget.yaml:2)"} {
		if !strings.Contains(first.SystemOut, w) {
			t.Errorf("system-out %q lacks %q", first.SystemOut, w)
		}
	}
	if !strings.Contains(s.SystemErr, "Warning: CustomResourceDefinition widgets.example.com: a warning, of the server (crds/widget.yaml:1)") {
		t.Errorf("system-err %q", s.SystemErr)
	}
	if c := s.Cases[2]; c.Skipped == nil || len(c.Failures) != 0 || !strings.Contains(c.SystemOut, "no CustomResourceDefinition") {
		t.Errorf("an object of no CRD, not failing: %+v", c)
	}
	if c := s.Cases[3]; c.Skipped != nil || len(c.Failures) != 1 || c.Failures[0].Type != "MissingCRD" {
		t.Errorf("an object of no CRD, failing: %+v", c)
	}
	if c := s.Cases[4]; c.ClassName != "prune" {
		t.Errorf("an object of the cluster: classname %q", c.ClassName)
	}
}

func TestJUnitEmpty(t *testing.T) {
	d := reportcheck.JUnit(t, []byte(render(t, JUnit, nil)))
	if d.Tests != 0 {
		t.Errorf("%d tests", d.Tests)
	}
}
