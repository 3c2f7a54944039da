// Package report renders the findings of a run in the formats CI systems
// read: SARIF 2.1.0 (code scanning), JUnit XML (test reports) and GitHub
// workflow commands (annotations). The engine decides what is found and
// what fails the run; the plugin hands each object or CRD it checked here,
// with its findings and the gate's verdict on each; a renderer only words
// and places them. Each renderer writes exactly one document, once the run
// is over (Finish): until then what it renders goes to a spool, so that a
// run of any size takes the memory of one object. docs/reports.md says
// what maps to what.
package report

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// The formats, as -o names them.
const (
	SARIF  = "sarif"
	JUnit  = "junit"
	GitHub = "github"
)

// Formats are the report formats, in the order -o lists them.
var Formats = []string{SARIF, JUnit, GitHub}

// IsFormat says whether format is one of Formats.
func IsFormat(format string) bool {
	for _, f := range Formats {
		if f == format {
			return true
		}
	}
	return false
}

// Tool is the program that ran, and the command.
type Tool struct {
	Name    string // kubectl-crd
	Version string // the build's ("dev" for a build from a clone)
	// InformationURI is the project's home; the rules' help links are into
	// its docs/ at the release's tag (main for a development build).
	InformationURI string
	Command        string // prune, check-update, explain-structural, test
}

// docsRef is the revision of the docs the help links point to.
func (t Tool) docsRef() string {
	if t.Version == "" || t.Version == "dev" || strings.Contains(t.Version, "-") {
		return "main"
	}
	return t.Version
}

// Status says how an object counts.
type Status int

const (
	// Checked: the object or CRD went through the command's checks.
	Checked Status = iota
	// NotChecked: no CRD defines its kind (MissingCRD); a JUnit testcase
	// that is skipped unless a finding fails the run.
	NotChecked
	// InputNote: findings about an input that is no object the command
	// checks (the reader's warnings, a CRD of --crd-file): results and
	// annotations, but no JUnit testcase (its suite's system-err).
	InputNote
	// Skipped: a test case run for the record only (kubectl crd test, a
	// case without an expectation): a JUnit testcase skipped, whose
	// message is its findings' (notes, not its system-out).
	Skipped
)

// Location is where an object or a finding is: the file as given on the
// command line ("-" for standard input, "" for an object of the cluster),
// its 1-based line and column (0: unknown).
type Location struct {
	File         string
	Line, Column int
}

// Object is one object or CRD of the run, and what was found in it.
type Object struct {
	Ref document.ObjectRef
	// Name is what the report calls it when that is not the object's
	// Ref: a test case's name (kubectl crd test).
	Name string
	Location
	Status   Status
	Findings []Item
}

// Item is a finding and the gate's verdict on it (Fails), as the engine
// decided it: a renderer never judges a finding again.
type Item = finding.Judged

// Level is how a format ranks a finding: error exactly when it fails the
// run, note for what is listed for the record (Info, and the notes of no
// check), warning for the rest.
func Level(it Item) string {
	switch {
	case it.Fails:
		return "error"
	case it.Severity == finding.Info || it.Check == "":
		return "note"
	}
	return "warning"
}

// RuleID is the finding's rule: its check, or Note for a finding of none.
func RuleID(it Item) string {
	if it.Check == "" {
		return NoteRule
	}
	return string(it.Check)
}

// where is the location of a finding of obj: its own line, else the
// object's, else 1 (a file is there, and every result has a line).
func where(obj Object, it Item) Location {
	loc := obj.Location
	if it.Line > 0 {
		loc.Line, loc.Column = it.Line, 0
	}
	if loc.Line < 1 && loc.File != "" {
		loc.Line, loc.Column = 1, 0
	}
	return loc
}

// name is the object as the text output names it: its Name, else its
// kind, namespace and name.
func name(obj Object) string {
	if obj.Name != "" {
		return obj.Name
	}
	return obj.Ref.String()
}

// URI is a file name as given, as a URI reference: a relative path stays
// relative, with / and its special characters escaped; an absolute one is
// a file: URI; standard input is "-".
func URI(file string) string {
	if file == "-" || file == "" {
		return file
	}
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // C:/x on Windows
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// Spool is where a renderer keeps what it rendered until Finish:
// safewrite.Spool, or a buffer in tests. JUnit reads its parts back in
// another order (Seek): a suite per file.
type Spool interface {
	io.ReadWriteSeeker
	Rewind() error
}

// Writer renders a report one object at a time.
type Writer interface {
	// Add renders obj.
	Add(obj Object) error
	// Finish writes the report, one document, to out.
	Finish(out io.Writer) error
}

// New is the renderer of format, rendering into spool until Finish.
func New(format string, tool Tool, spool Spool) (Writer, error) {
	switch format {
	case SARIF:
		return newSARIF(tool, spool), nil
	case JUnit:
		return newJUnit(tool, spool), nil
	case GitHub:
		return newGitHub(tool, spool), nil
	}
	return nil, fmt.Errorf("unknown report format %q", format)
}

// copySpool rewinds spool and copies it to out.
func copySpool(out io.Writer, spool Spool) error {
	if err := spool.Rewind(); err != nil {
		return err
	}
	_, err := io.Copy(out, spool)
	return err
}
