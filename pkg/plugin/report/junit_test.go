package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

func TestJUnit(t *testing.T) {
	doc := render(t, JUnit, sample())
	d := reportcheck.JUnit(t, []byte(doc)) // junit-10.xsd's schema, and the counts
	if d.Name != "kubectl crd prune" {
		t.Errorf("testsuites %q", d.Name)
	}
	if tests, failing := d.Totals(); tests != sampleTestcases || failing != sampleFailing || d.Skipped() != sampleSkipped {
		t.Errorf("tests=%d failures=%d skipped=%d, want %d, %d, %d", tests, failing, d.Skipped(), sampleTestcases, sampleFailing, sampleSkipped)
	}
	// A suite per file, in the order of their first objects; the cluster's
	// objects in the command's.
	var suites []string
	for _, s := range d.Suites {
		suites = append(suites, s.Name+" "+s.File)
	}
	want := []string{"apps/widget.yaml apps/widget.yaml", "dir with space/a,b:c.yaml dir with space/a,b:c.yaml", "- -",
		"/abs/thing.yaml /abs/thing.yaml", "crds/widget.yaml crds/widget.yaml", "kubectl crd prune "}
	if diff := cmp.Diff(want, suites); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	cases := d.Cases()
	first := cases[0]
	if first.Name != "Widget team-a/w" || first.ClassName != "apps/widget.yaml" {
		t.Errorf("first testcase %q of %q", first.Name, first.ClassName)
	}
	// Words that need escaping come back as they were (NUL, which XML
	// cannot hold, as U+FFFD); the text says where, as a stack trace would.
	words := "the server would refuse it: spec.size: Invalid value: 100%, a \"size\": <must be\r\nless> & 1\uFFFD"
	if len(first.Failures) != 1 || first.Failures[0].Message != words || first.Failures[0].Type != "Invalid" ||
		first.Failures[0].Text != words+"\nat apps/widget.yaml:2\nfield spec.size\n" {
		t.Errorf("failure %+v, want message %q", first.Failures, words)
	}
	// Not lost: the findings that do not fail, the notes on the inputs.
	for _, w := range []string{`Warning: Widget team-a/w: pruned unknown field "spec.colour" (apps/widget.yaml:9)`, "Note: Widget team-a/w: written again without its comments (apps/widget.yaml:2)"} {
		if !strings.Contains(first.SystemOut, w) {
			t.Errorf("system-out %q lacks %q", first.SystemOut, w)
		}
	}
	if s := d.Suites[4]; s.Tests != 0 || !strings.Contains(s.SystemErr, "Warning: CustomResourceDefinition widgets.example.com: a warning, of the server (crds/widget.yaml:1)") {
		t.Errorf("the suite of a note: %+v", s)
	}
	if c := cases[2]; c.Skipped == nil || len(c.Failures) != 0 || !strings.Contains(c.SystemOut, "no CustomResourceDefinition") {
		t.Errorf("an object of no CRD, not failing: %+v", c)
	}
	if c := cases[3]; c.Skipped != nil || len(c.Failures) != 1 || c.Failures[0].Type != "MissingCRD" || c.Failures[0].Text != c.Failures[0].Message+"\nat /abs/thing.yaml:1\n" {
		t.Errorf("an object of no CRD, failing: %+v", c)
	}
	if c := cases[4]; c.ClassName != "prune" || c.Failures[0].Text != c.Failures[0].Message+"\n" {
		t.Errorf("an object of the cluster: %+v", c)
	}
}

// The objects of one file are one suite, whatever came between them; the
// notes on the inputs go to the suite of their file.
func TestJUnitSuitePerFile(t *testing.T) {
	obj := func(file, name string, status Status) Object {
		o := Object{Ref: document.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Name: name}, Location: Location{File: file, Line: 1}, Status: status}
		o.Findings = []Item{{Finding: finding.Finding{Check: finding.Invalid, Severity: finding.Error, Message: "refused"}, Fails: name == "b"}}
		return o
	}
	d := reportcheck.JUnit(t, []byte(render(t, JUnit, []Object{
		obj("a.yaml", "a", Checked), obj("b.yaml", "b", Checked), obj("a.yaml", "c", InputNote), obj("a.yaml", "d", Checked),
	})))
	var got []string
	for _, s := range d.Suites {
		for _, c := range s.Cases {
			got = append(got, s.File+": "+c.Name)
		}
		if s.SystemErr != "" {
			got = append(got, s.File+": "+s.SystemErr)
		}
	}
	want := []string{"a.yaml: Widget a", "a.yaml: Widget d", "a.yaml: Warning: Widget c: refused (a.yaml:1)\n", "b.yaml: Widget b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	if d.Failures != 1 || d.Suites[1].Failures != 1 {
		t.Errorf("failures: %d in all, %d in b.yaml's", d.Failures, d.Suites[1].Failures)
	}
}

func TestJUnitEmpty(t *testing.T) {
	d := reportcheck.JUnit(t, []byte(render(t, JUnit, nil)))
	if d.Tests != 0 {
		t.Errorf("%d tests", d.Tests)
	}
}
