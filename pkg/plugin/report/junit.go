package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// JUnit XML, as test report tabs read it (GitLab, Jenkins, Azure DevOps):
// one testsuite of the command, one testcase per object or CRD checked (or
// per test case, kubectl crd test), a
// failure per finding that fails the run; the other findings are the
// testcase's system-out, the notes on the inputs the suite's system-err
// (an input with a finding that fails the run is a testcase: a rule no
// case exercises under kubectl crd test --coverage=error).

// junitSuite is the head of the suite (and of testsuites), its counts.
type junitSuite struct {
	Name                             string
	Tests, Failures, Errors, Skipped int
}

func (s junitSuite) attrs() string {
	return fmt.Sprintf(` name="%s" tests="%d" failures="%d" errors="%d" skipped="%d"`, attr(s.Name), s.Tests, s.Failures, s.Errors, s.Skipped)
}

type junitWriter struct {
	tool  Tool
	spool Spool
	// counts: failures counts the failure elements, the findings that fail.
	tests, failures, skipped int
	notes                    []string
}

func newJUnit(tool Tool, spool Spool) *junitWriter { return &junitWriter{tool: tool, spool: spool} }

// Add writes the testcase of obj, or keeps the notes of an input: an
// input with a finding that fails the run is a testcase of its own, so
// that every run that fails shows a failure.
func (j *junitWriter) Add(obj Object) error {
	if obj.Status == InputNote && !slices.ContainsFunc(obj.Findings, func(it Item) bool { return it.Fails }) {
		for _, it := range obj.Findings {
			j.notes = append(j.notes, textLine(obj, it))
		}
		return nil
	}
	class := obj.File
	if class == "" {
		class = j.tool.Command // an object of the cluster
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `    <testcase name="%s" classname="%s"`, attr(name(obj)), attr(class))
	if obj.File != "" {
		fmt.Fprintf(&b, ` file="%s"`, attr(obj.File))
	}
	head := b.Len()
	b.WriteString(">\n")
	failures := 0
	var out strings.Builder
	var skip []string
	for _, it := range obj.Findings {
		if !it.Fails && obj.Status == Skipped {
			skip = append(skip, it.Message)
			continue
		}
		if !it.Fails {
			out.WriteString(textLine(obj, it) + "\n")
			continue
		}
		failures++
		where := locationText(where(obj, it))
		if it.Path != "" {
			where += ": " + it.Path
		}
		fmt.Fprintf(&b, `      <failure message="%s" type="%s">%s</failure>`+"\n", attr(it.Message), attr(RuleID(it)), text(where+"\n"+it.Message))
	}
	if obj.Status == NotChecked && failures == 0 {
		fmt.Fprintf(&b, `      <skipped message="%s"/>`+"\n", attr("not checked: no CustomResourceDefinition for "+obj.Ref.APIVersion+", kind "+obj.Ref.Kind))
		j.skipped++
	}
	if obj.Status == Skipped && failures == 0 {
		fmt.Fprintf(&b, `      <skipped message="%s"/>`+"\n", attr(strings.Join(skip, "\n")))
		j.skipped++
	}
	if out.Len() > 0 {
		fmt.Fprintf(&b, "      <system-out>%s</system-out>\n", text(out.String()))
	}
	if b.Len() == head+2 {
		b.Truncate(head) // no children
		b.WriteString("/>\n")
	} else {
		b.WriteString("    </testcase>\n")
	}
	j.tests++
	j.failures += failures
	_, err := j.spool.Write(b.Bytes())
	return err
}

// textLine is a finding as the text output prints it.
func textLine(obj Object, it Item) string {
	level := "Warning"
	switch Level(it) {
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
	if _, err := fmt.Fprintf(out, "%s<testsuites%s>\n  <testsuite%s>\n", xml.Header, suite.attrs(), suite.attrs()); err != nil {
		return err
	}
	if err := copySpool(out, j.spool); err != nil {
		return err
	}
	if len(j.notes) > 0 {
		if _, err := fmt.Fprintf(out, "    <system-err>%s</system-err>\n", text(strings.Join(j.notes, "\n")+"\n")); err != nil {
			return err
		}
	}
	_, err := io.WriteString(out, "  </testsuite>\n</testsuites>\n")
	return err
}

// text escapes character data: &, < and > (and a carriage return, which
// a reader would take for a line end); a character XML 1.0 cannot hold is
// U+FFFD.
func text(s string) string { return escapeXML(s, false) }

// attr escapes an attribute's value: also ", and the line ends and tabs
// a reader would turn into spaces.
func attr(s string) string { return escapeXML(s, true) }

func escapeXML(s string, inAttr bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\r':
			b.WriteString("&#xD;")
		case inAttr && r == '"':
			b.WriteString("&quot;")
		case inAttr && r == '\n':
			b.WriteString("&#xA;")
		case inAttr && r == '\t':
			b.WriteString("&#x9;")
		case !xmlChar(r):
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// xmlChar says whether XML 1.0 can hold r (its production Char).
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
