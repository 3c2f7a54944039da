package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit XML, as test report tabs read it (GitLab, Jenkins, Azure DevOps):
// one testsuite of the command, one testcase per object or CRD checked, a
// failure per finding that fails the run; the other findings are the
// testcase's system-out, the notes on the inputs the suite's system-err.

type junitCase struct {
	XMLName   xml.Name       `xml:"testcase"`
	Name      string         `xml:"name,attr"`
	ClassName string         `xml:"classname,attr"`
	File      string         `xml:"file,attr,omitempty"`
	Failures  []junitFailure `xml:"failure"`
	Skipped   *junitSkipped  `xml:"skipped"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// junitSuite is the head of the suite (and of testsuites), its counts.
type junitSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
}

type junitWriter struct {
	tool  Tool
	spool Spool
	// counts: failures counts the failure elements, the findings that fail.
	tests, failures, skipped int
	notes                    []string
}

func newJUnit(tool Tool, spool Spool) *junitWriter { return &junitWriter{tool: tool, spool: spool} }

// Add writes the testcase of obj, or keeps the notes of an input.
func (j *junitWriter) Add(obj Object) error {
	if obj.Status == InputNote {
		for _, it := range obj.Findings {
			j.notes = append(j.notes, textLine(obj, it))
		}
		return nil
	}
	tc := junitCase{Name: name(obj), ClassName: obj.File, File: obj.File}
	if tc.ClassName == "" {
		tc.ClassName = j.tool.Command
	}
	var out strings.Builder
	for _, it := range obj.Findings {
		if !it.Fails {
			out.WriteString(textLine(obj, it) + "\n")
			continue
		}
		text := locationText(where(obj, it))
		if it.Path != "" {
			text += ": " + it.Path
		}
		tc.Failures = append(tc.Failures, junitFailure{Message: it.Message, Type: it.RuleID(), Text: text + "\n" + it.Message})
	}
	tc.SystemOut = out.String()
	if obj.Status == NotChecked && len(tc.Failures) == 0 {
		tc.Skipped = &junitSkipped{Message: "not checked: no CustomResourceDefinition for " + obj.Ref.APIVersion + ", kind " + obj.Ref.Kind}
		j.skipped++
	}
	j.tests++
	j.failures += len(tc.Failures)
	b, err := xml.MarshalIndent(tc, "    ", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(j.spool, "%s\n", b)
	return err
}

// textLine is a finding as the text output prints it.
func textLine(obj Object, it Item) string {
	level := "Warning"
	switch it.Level() {
	case "error":
		level = "Error"
	case "note":
		level = "Note"
	}
	line := fmt.Sprintf("%s: %s: %s", level, name(obj), it.Message)
	if at := where(obj, it); at.File != "" {
		line += " (" + locationText(at) + ")"
	}
	return line
}

func locationText(at Location) string {
	s := at.File
	if at.Line > 0 {
		s += fmt.Sprintf(":%d", at.Line)
		if at.Column > 0 {
			s += fmt.Sprintf(":%d", at.Column)
		}
	}
	return s
}

// Finish writes the document: the suites' heads with their counts, the
// testcases from the spool, the notes.
func (j *junitWriter) Finish(out io.Writer) error {
	suite := junitSuite{Name: "kubectl crd " + j.tool.Command, Tests: j.tests, Failures: j.failures, Skipped: j.skipped}
	head, err := xml.Marshal(suite)
	if err != nil {
		return err
	}
	// The attributes of <junitSuite ...></junitSuite>, for both heads.
	attrs := strings.TrimSuffix(strings.TrimPrefix(string(head), "<junitSuite"), "></junitSuite>")
	if _, err := fmt.Fprintf(out, "%s<testsuites%s>\n  <testsuite%s>\n", xml.Header, attrs, attrs); err != nil {
		return err
	}
	if err := copySpool(out, j.spool); err != nil {
		return err
	}
	if len(j.notes) > 0 {
		var esc strings.Builder
		if err := xml.EscapeText(&esc, []byte(strings.Join(j.notes, "\n")+"\n")); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "    <system-err>%s</system-err>\n", esc.String()); err != nil {
			return err
		}
	}
	_, err = io.WriteString(out, "  </testsuite>\n</testsuites>\n")
	return err
}
