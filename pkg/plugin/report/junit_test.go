package report

import (
	"encoding/xml"
	"strings"
	"testing"
)

// junitDoc is a JUnit document as read back.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name      string `xml:"name,attr"`
		Tests     int    `xml:"tests,attr"`
		Failures  int    `xml:"failures,attr"`
		Errors    int    `xml:"errors,attr"`
		Skipped   int    `xml:"skipped,attr"`
		SystemErr string `xml:"system-err"`
		Cases     []struct {
			Name      string `xml:"name,attr"`
			ClassName string `xml:"classname,attr"`
			Failures  []struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// ReadJUnit parses a JUnit document strictly and checks that its counts
// are those of its elements: tests the testcases, failures the failure
// elements, skipped the skipped ones, for testsuites and its one suite.
func ReadJUnit(t *testing.T, doc []byte) junitDoc {
	t.Helper()
	var d junitDoc
	dec := xml.NewDecoder(strings.NewReader(string(doc)))
	dec.Strict = true
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("not well-formed JUnit XML: %v\n%s", err, doc)
	}
	if len(d.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(d.Suites))
	}
	s := d.Suites[0]
	failures, skipped := 0, 0
	for _, c := range s.Cases {
		if c.Name == "" || c.ClassName == "" {
			t.Errorf("testcase without name or classname: %+v", c)
		}
		failures += len(c.Failures)
		if c.Skipped != nil {
			skipped++
		}
	}
	if s.Tests != len(s.Cases) || s.Failures != failures || s.Skipped != skipped || s.Errors != 0 {
		t.Errorf("testsuite counts tests=%d failures=%d skipped=%d errors=%d; its elements: %d, %d, %d",
			s.Tests, s.Failures, s.Skipped, s.Errors, len(s.Cases), failures, skipped)
	}
	if d.Tests != s.Tests || d.Failures != s.Failures || d.Skipped != s.Skipped {
		t.Errorf("testsuites counts %d/%d/%d differ from its suite's", d.Tests, d.Failures, d.Skipped)
	}
	return d
}

func TestJUnit(t *testing.T) {
	doc := render(t, JUnit, sample())
	d := ReadJUnit(t, []byte(doc))
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
	d := ReadJUnit(t, []byte(render(t, JUnit, nil)))
	if d.Tests != 0 {
		t.Errorf("%d tests", d.Tests)
	}
}
