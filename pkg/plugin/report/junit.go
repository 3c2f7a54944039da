package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// JUnit XML, as test report tabs read it (GitLab, Jenkins, Azure DevOps),
// valid against the strict schema CI servers validate with (junit-10.xsd,
// as Jenkins' xunit plugin uses): one testsuite per input file (named by
// it, its file attribute, where readers such as GitHub's JUnit actions
// find the file), one testcase per object or CRD checked (or per test
// case, kubectl crd test) of the class of its file, a failure per finding
// that fails the run, at its file and line in the failure's text; the
// other findings are the testcase's system-out, the notes on the inputs
// its suite's system-err (an input with a finding that fails the run is a
// testcase: a rule no case exercises under kubectl crd test
// --coverage=error). The schema allows a testcase no file attribute, and
// testsuites no skipped count nor properties: each suite's properties say
// which Kubernetes minor answered.

// junitSuite is the suite of one file ("": objects of the cluster), its
// counts, where its testcases are in the spool and its notes.
type junitSuite struct {
	file                     string
	tests, failures, skipped int
	// spans of the spool hold its testcases, in order.
	spans []span
	notes []string
}

// span is a part of the spool, from start to end.
type span struct{ start, end int64 }

type junitWriter struct {
	tool  Tool
	spool Spool
	// suites by their file's first object, and by file.
	suites []*junitSuite
	byFile map[string]*junitSuite
	// written is what the spool holds.
	written int64
	// properties of every suite: which minor answered (Finish).
	properties string
}

func newJUnit(tool Tool, spool Spool) *junitWriter {
	return &junitWriter{tool: tool, spool: spool, byFile: map[string]*junitSuite{}}
}

// suite is the suite of file, created on first use.
func (j *junitWriter) suite(file string) *junitSuite {
	s := j.byFile[file]
	if s == nil {
		s = &junitSuite{file: file}
		j.byFile[file] = s
		j.suites = append(j.suites, s)
	}
	return s
}

// Add writes the testcase of obj, or keeps the notes of an input: an
// input with a finding that fails the run is a testcase of its own, so
// that every run that fails shows a failure.
func (j *junitWriter) Add(obj Object) error {
	suite := j.suite(obj.File)
	if obj.Status == InputNote && !slices.ContainsFunc(obj.Findings, func(it Item) bool { return it.Fails }) {
		for _, it := range obj.Findings {
			suite.notes = append(suite.notes, textLine(obj, it))
		}
		return nil
	}
	b, failures, skipped := j.testcase(obj)
	n, err := j.spool.Write(b)
	if k := len(suite.spans); k > 0 && suite.spans[k-1].end == j.written {
		suite.spans[k-1].end += int64(n)
	} else {
		suite.spans = append(suite.spans, span{j.written, j.written + int64(n)})
	}
	j.written += int64(n)
	suite.tests++
	suite.failures += failures
	if skipped {
		suite.skipped++
	}
	return err
}

// testcase is the testcase element of obj, its failures, and whether it
// is skipped.
func (j *junitWriter) testcase(obj Object) (_ []byte, failures int, skipped bool) {
	class := obj.File
	if class == "" {
		class = j.tool.Command // an object of the cluster
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `    <testcase name="%s" classname="%s"`, attr(name(obj)), attr(class))
	head := b.Len()
	b.WriteString(">\n")
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
		fmt.Fprintf(&b, `      <failure message="%s" type="%s">%s</failure>`+"\n", attr(it.Message), attr(RuleID(it)), text(failureText(obj, it)))
	}
	if obj.Status == NotChecked && failures == 0 {
		fmt.Fprintf(&b, `      <skipped message="%s"/>`+"\n", attr("not checked: no CustomResourceDefinition for "+obj.Ref.APIVersion+", kind "+obj.Ref.Kind))
		skipped = true
	}
	if obj.Status == Skipped && failures == 0 {
		fmt.Fprintf(&b, `      <skipped message="%s"/>`+"\n", attr(strings.Join(skip, "\n")))
		skipped = true
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
	return b.Bytes(), failures, skipped
}

// failureText is the text of a failure: its words, then where it is
// ("at FILE:LINE", as readers that look for a line in a stack trace find
// it) and its field.
func failureText(obj Object, it Item) string {
	s := it.Message + "\n"
	if at := where(obj, it); at.File != "" {
		s += "at " + locationText(at) + "\n"
	}
	if it.Path != "" {
		s += "field " + it.Path + "\n"
	}
	return s
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

// Finish writes the document: testsuites with the run's counts, then each
// suite with its own, its testcases from the spool and its notes. A run of
// no object is one empty suite, of the command.
func (j *junitWriter) Finish(out io.Writer) error {
	command := "kubectl crd " + j.tool.Command
	j.properties = answerProperties(kubeversion.Current())
	if len(j.suites) == 0 {
		j.suite("")
	}
	tests, failures := 0, 0
	for _, s := range j.suites {
		tests += s.tests
		failures += s.failures
	}
	if _, err := fmt.Fprintf(out, "%s<testsuites name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", xml.Header, attr(command), tests, failures); err != nil {
		return err
	}
	for _, s := range j.suites {
		if err := j.writeSuite(out, s, command); err != nil {
			return err
		}
	}
	_, err := io.WriteString(out, "</testsuites>\n")
	return err
}

// writeSuite writes a suite: named by its file, else by the command.
func (j *junitWriter) writeSuite(out io.Writer, s *junitSuite, command string) error {
	name, file := command, ""
	if s.file != "" {
		name, file = s.file, fmt.Sprintf(` file="%s"`, attr(s.file))
	}
	if _, err := fmt.Fprintf(out, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\"%s>\n%s",
		attr(name), s.tests, s.failures, s.skipped, file, j.properties); err != nil {
		return err
	}
	for _, sp := range s.spans {
		if _, err := j.spool.Seek(sp.start, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyN(out, j.spool, sp.end-sp.start); err != nil {
			return err
		}
	}
	if len(s.notes) > 0 {
		if _, err := fmt.Fprintf(out, "    <system-err>%s</system-err>\n", text(strings.Join(s.notes, "\n")+"\n")); err != nil {
			return err
		}
	}
	_, err := io.WriteString(out, "  </testsuite>\n")
	return err
}

// answerProperties are the properties element of a suite: which minor
// answered, kubeversion.Stamp's members (testsuites may hold none).
func answerProperties(a kubeversion.Answer) string {
	var b strings.Builder
	b.WriteString("    <properties>\n")
	for _, p := range a.Stamp().Properties() {
		fmt.Fprintf(&b, "      <property name=\"%s\" value=\"%s\"/>\n", attr(p.Name), attr(p.Value))
	}
	b.WriteString("    </properties>\n")
	return b.String()
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
