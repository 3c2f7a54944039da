// Package untrusted writes inputs whose names, paths and messages carry
// line breaks of every kind followed by GitHub Actions workflow commands,
// and checks what a command printed of them: no line of its output may
// begin a workflow command, nor break where the command did not mean it.
package untrusted

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Injection follows every untrusted string of the inputs: each line break
// a runner or a terminal honours (LF, CR, CR LF, VT, FF, NEL, the line and
// paragraph separators, an escape sequence that returns the cursor), each
// followed by a workflow command.
const Injection = "\n::error::pwned\r::error::pwned\r\n::error::pwned\v::error::pwned\f::error::pwned" +
	"\u0085::error::pwned\u2028::error::pwned\u2029::error::pwned\x1b[2K\x1b[1G::error::pwned"

// ruleInjection is Injection without LF and CR, which the server refuses
// in a rule's message.
const ruleInjection = "\u0085::error::pwned\u2028::error::pwned\x1b[2K\x1b[1G::error::pwned"

// Files are the inputs Write makes.
type Files struct {
	Dir string
	// CRD defines Widget (widgets.hostile.example.com): a property name,
	// a rule's message and a multi-line rule carry commands.
	CRD string
	// Objects is a directory of one file, ObjectsFile (its name carries
	// Injection; -f splits a name at a line break, as a CSV reader does, so
	// the directory is what -f names): a Widget whose name and
	// namespace carry Injection, with an unknown field whose name does, and
	// an object of a kind no CRD defines, the kind beginning with a command.
	Objects, ObjectsFile string
	// Old is Objects' Widget as it was: check-update's --old.
	Old string
	// BadCRD is a CRD the server refuses: its name and kind carry Injection.
	BadCRD string
	// Test is a test suite of CRD (its name carries Injection): a case
	// whose name, and an expectation whose message, carry Injection.
	Test string
	// KRMConfig is a CRDCheck of CRD, for the KRM function.
	KRMConfig string
}

// Write writes the inputs into dir.
func Write(t testing.TB, dir string) Files {
	t.Helper()
	f := Files{
		Dir:       dir,
		CRD:       filepath.Join(dir, "crd.yaml"),
		Objects:   filepath.Join(dir, "objects"),
		Old:       filepath.Join(dir, "old.yaml"),
		BadCRD:    filepath.Join(dir, "bad-crd.yaml"),
		Test:      filepath.Join(dir, "suite"+Injection+".test.yaml"),
		KRMConfig: filepath.Join(dir, "check.yaml"),
	}
	f.ObjectsFile = filepath.Join(f.Objects, "objects"+Injection+".yaml")
	if err := os.Mkdir(f.Objects, 0o755); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { return fmt.Sprintf("%q", s) } // a YAML double-quoted scalar
	widget := func(note string) string {
		return `apiVersion: hostile.example.com/v1
kind: Widget
metadata:
  name: ` + q("name"+Injection) + `
  namespace: ` + q("namespace"+Injection) + `
spec:
  note: ` + note + `
  ` + q("field"+Injection) + `: 1
`
	}
	for name, text := range map[string]string{
		f.CRD: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.hostile.example.com
spec:
  group: hostile.example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              note: {type: string, x-kubernetes-mutability: Immutable}
              ` + q("property"+Injection) + `: {type: string}
            x-kubernetes-validations:
            - rule: "self.note != 'refused'"
              message: ` + q("message"+ruleInjection) + `
            - rule: ` + q("self.note != '''\n::error::pwned\n  ::error::pwned\n'''") + `
              message: a rule of several lines
`,
		f.ObjectsFile: widget("refused") + `---
apiVersion: hostile.example.com/v1
kind: ` + q("::error::kind"+Injection) + `
metadata:
  name: ` + q("::error::name"+Injection) + `
`,
		f.Old: widget("before"),
		f.BadCRD: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ` + q("bad"+Injection) + `
spec:
  group: hostile.example.com
  names: {kind: ` + q("::error::Kind"+Injection) + `, plural: bads}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`,
		f.Test: `crds: crd.yaml
cases:
- name: ` + q("case"+Injection) + `
  object:
    apiVersion: hostile.example.com/v1
    kind: Widget
    metadata: {name: w, namespace: ns}
    spec: {note: refused}
  expect:
    result: refused
    errors:
    - {field: spec, message: ` + q("expectation"+Injection) + `}
- name: ` + q("::error::case without expectation"+Injection) + `
  object:
    apiVersion: hostile.example.com/v1
    kind: Widget
    metadata: {name: w, namespace: ns}
    spec: {note: fine}
`,
		f.KRMConfig: `apiVersion: crd.kubectl.dev/v1alpha1
kind: CRDCheck
metadata: {name: check}
crdPaths: [crd.yaml]
`,
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// Violations are what is wrong in out, text a command printed (its own
// line breaks are '\n'): a line that begins a workflow command after what
// the runner trims, and a line break of another kind or a control
// character (a tab excepted) anywhere.
func Violations(out string) []string {
	var bad []string
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeftFunc(line, trimmed), "::") {
			bad = append(bad, fmt.Sprintf("line %d begins a workflow command: %q", i+1, line))
		}
		if j := strings.IndexFunc(line, control); j >= 0 {
			bad = append(bad, fmt.Sprintf("line %d holds %q: %q", i+1, []rune(line[j:])[0], line))
		}
	}
	return bad
}

// JSONViolations are what is wrong in out, JSON (data, printed as its
// encoder writes it, every string quoted): a line that begins a workflow
// command, and a CR, which ends a line for the runner. (encoding/json
// writes C1 controls and bidirectional ones as they are.)
func JSONViolations(out string) []string {
	var bad []string
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeftFunc(line, trimmed), "::") {
			bad = append(bad, fmt.Sprintf("line %d begins a workflow command: %q", i+1, line))
		}
		if strings.Contains(line, "\r") {
			bad = append(bad, fmt.Sprintf("line %d holds a CR: %q", i+1, line))
		}
	}
	return bad
}

// YAMLViolations are what is wrong in out, YAML documents: a CR only. YAML
// is data, printed as its encoder writes it, and may begin a line with
// "::" (a plain key, a line of a block scalar, a long string folded at a
// blank or at U+0085, which YAML takes for a line break): the Action runs
// a command whose documents go to the log with workflow commands stopped.
func YAMLViolations(out string) []string {
	var bad []string
	for i, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "\r") {
			bad = append(bad, fmt.Sprintf("line %d holds a CR: %q", i+1, line))
		}
	}
	return bad
}

// trimmed is what the runner trims from a line before it looks for "::".
func trimmed(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }

// control is a character that breaks a line, moves the cursor or turns
// the text around, which printed text must hold only escaped.
func control(r rune) bool {
	return r != '\t' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r))
}

// githubCommand is a line of -o github: a command, its properties escaped
// (no colon), then its message.
var githubCommand = regexp.MustCompile(`^::(error|warning|notice)( [^:\r]*)?::[^\r]*$`)

// GitHubViolations are what is wrong in out, the report of -o github: a
// line that is not a command of its own, properties a value broke out of,
// or a CR (which ends a line for the runner).
func GitHubViolations(out string) []string {
	var bad []string
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !githubCommand.MatchString(line) {
			bad = append(bad, fmt.Sprintf("line %d is not a command of -o github: %q", i+1, line))
		}
	}
	return bad
}

// Shown is how text output shows prefix+Injection: escaped, on one line
// (its start).
func Shown(prefix string) string {
	return prefix + `\n::error::pwned\r::error::pwned\r\n::error::pwned\v`
}
