package plugin

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/untrusted"
)

// TestUntrustedTextEscaped: names, namespaces, kinds, file names, a
// CRD's property names, rules and messages, test cases' names and
// expectations carry line breaks and workflow commands; no line any
// command prints, on stdout or stderr, begins a command or breaks where
// the command did not mean it, and the untrusted text shows escaped.
func TestUntrustedTextEscaped(t *testing.T) {
	f := untrusted.Write(t, t.TempDir())
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		shown  []string // in stdout or stderr, escaped
		stdout string   // what stdout is: "text", "github" (-o github), "json" or "yaml" (documents: data)
	}{
		{"prune", []string{"prune", "--offline", "--crd-file", f.CRD, "-f", f.Objects}, ExitFindings,
			[]string{untrusted.Shown("name"), untrusted.Shown("namespace"), untrusted.Shown("field"), untrusted.Shown("objects"), untrusted.Shown(`\x3a:error::kind`)}, "yaml"},
		{"prune -o github", []string{"prune", "--offline", "--crd-file", f.CRD, "-f", f.Objects, "-o", "github"}, ExitFindings, []string{untrusted.Shown("name")}, "github"},
		{"prune --diff", []string{"prune", "--offline", "--crd-file", f.CRD, "-f", f.Objects, "--diff"}, ExitFindings, []string{`+++ "b/`}, "text"},
		{"prune --report -", []string{"prune", "--offline", "--crd-file", f.CRD, "-f", f.Objects, "--report", "-"}, ExitFindings, nil, "json"},
		{"a file that does not exist", []string{"prune", "--offline", "-f", filepath.Join(f.Dir, "x\r::error::pwned\u2028::error::pwned")}, ExitInput, []string{`x\r::error::pwned\u2028::error::pwned`}, "text"},
		{"check-update", []string{"check-update", "--offline", "--crd-file", f.CRD, "-f", f.Objects, "--old", f.Old}, ExitFindings,
			[]string{untrusted.Shown("name"), `message\u0085::error::pwned`}, "text"},
		{"explain-structural", []string{"explain-structural", "-f", f.CRD}, ExitOK, []string{untrusted.Shown("property")}, "text"},
		{"explain-structural, a refused CRD", []string{"explain-structural", "-f", f.BadCRD}, ExitFindings, []string{untrusted.Shown("bad")}, "text"},
		{"explain-structural -o github", []string{"explain-structural", "-f", f.BadCRD, "-o", "github"}, ExitFindings, nil, "github"},
		{"lower-mutability", []string{"lower-mutability", "-f", f.CRD, "-f", f.Objects}, ExitOK, nil, "yaml"},
		{"lower-mutability, a refused CRD", []string{"lower-mutability", "-f", f.BadCRD}, ExitInput, []string{untrusted.Shown("bad")}, "text"},
		{"test", []string{"test", "--coverage", f.Test}, ExitFindings, []string{untrusted.Shown("case"), untrusted.Shown("expectation"), untrusted.Shown("suite")}, "text"},
		{"test -o github", []string{"test", f.Test, "-o", "github"}, ExitFindings, nil, "github"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", c.args...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			check := map[string]func(string) []string{
				"text": untrusted.Violations, "github": untrusted.GitHubViolations, "json": untrusted.JSONViolations, "yaml": untrusted.YAMLViolations,
			}[c.stdout]
			for _, v := range check(r.stdout) {
				t.Errorf("stdout: %s", v)
			}
			for _, v := range untrusted.Violations(r.stderr) {
				t.Errorf("stderr: %s", v)
			}
			for _, s := range c.shown {
				if !strings.Contains(r.stdout+r.stderr, s) {
					t.Errorf("%s is not shown; stdout:\n%s\nstderr:\n%s", s, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestUntrustedErrorEscaped: the error a command returns is printed on
// one line, escaped, whatever it holds; one of several joined errors
// (errors.Join) a line each; a usage error keeps its help line.
func TestUntrustedErrorEscaped(t *testing.T) {
	for _, c := range []struct {
		err    error
		stderr string
	}{
		{inputError(errors.New("open x" + untrusted.Injection + ": no such file")), "error: " + untrusted.Shown("open x")},
		{inputError(errors.Join(errors.New("a"+untrusted.Injection), errors.New("::error::b"))), "error: " + untrusted.Shown("a")},
		{errors.New("internal" + untrusted.Injection), "error: " + untrusted.Shown("internal")},
	} {
		fail := &cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return c.err }}
		var out, errOut bytes.Buffer
		Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"fail"}, fail)
		if !strings.HasPrefix(errOut.String(), c.stderr) {
			t.Errorf("%q: stderr %q, want it to begin with %q", c.err, errOut.String(), c.stderr)
		}
		for _, v := range untrusted.Violations(errOut.String()) {
			t.Errorf("%q: %s", c.err, v)
		}
	}
	r := run(t, "", "prune", "--no-such-flag"+untrusted.Injection)
	if !strings.HasSuffix(r.stderr, "\nSee 'kubectl crd prune --help'.\n") || strings.Count(r.stderr, "\n") != 2 {
		t.Errorf("a usage error: stderr %q, want two lines, the second the help's", r.stderr)
	}
	for _, v := range untrusted.Violations(r.stderr) {
		t.Errorf("a usage error: %s", v)
	}
}
