package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/untrusted"
)

// TestUntrustedText runs every command of the built binary on inputs whose
// object names and namespaces, kinds, a CRD's name, kind, property names
// and rules, file names, test cases' names and expectations, a chart's
// file name and an OCI layer's title carry each line break a runner or a
// terminal honours followed by "::error::pwned": no line of stdout or
// stderr begins a workflow command (the runner trims white space first)
// or breaks where the command did not mean it, but -o github's own
// commands, each on its line with its properties escaped; the untrusted
// text shows, escaped. Stdout of JSON documents is data, checked for
// lines beginning "::" and CRs only; of YAML, which may begin a line with
// "::" (docs/ci.md: the Action stops commands around it), for CRs only.
func TestUntrustedText(t *testing.T) {
	f := untrusted.Write(t, t.TempDir())
	bad, err := os.ReadFile(f.BadCRD)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := os.ReadFile(f.ObjectsFile)
	if err != nil {
		t.Fatal(err)
	}
	chart := helmChart{"Chart.yaml": []byte("apiVersion: v2\nname: hostile\nversion: 1.0.0\n"),
		"templates/crd" + untrusted.Injection + ".yaml": bad}.dir(t, filepath.Join(t.TempDir(), "hostile"))
	reg := newOCIRegistry(t, false)
	oci, _ := reg.push(t, "hostile/crds:1", []ociFile{{title: "crd" + untrusted.Injection + ".yaml", data: bad}})
	config, err := os.ReadFile(f.KRMConfig)
	if err != nil {
		t.Fatal(err)
	}
	var list strings.Builder
	list.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  " +
		strings.ReplaceAll(strings.TrimSpace(string(config)), "\n", "\n  ") + "\nitems:\n")
	for _, d := range strings.Split(string(objects), "---\n") {
		list.WriteString("- " + strings.ReplaceAll(strings.TrimSuffix(d, "\n"), "\n", "\n  ") + "\n")
	}
	offline := []string{"--offline", "--crd-file", f.CRD, "-f", f.Objects}
	for _, c := range []struct {
		args   []string
		stdin  string
		code   int
		stdout string // "text", "github" (-o github's commands), "json" or "yaml" (documents: data)
		shown  []string
	}{
		{args: append([]string{"prune"}, offline...), code: 1, stdout: "yaml",
			shown: []string{untrusted.Shown("name"), untrusted.Shown("namespace"), untrusted.Shown("field"), untrusted.Shown("objects"), untrusted.Shown(`\x3a:error::kind`)}},
		{args: append([]string{"prune", "-o", "github"}, offline...), code: 1, stdout: "github"},
		{args: append([]string{"prune", "--diff"}, offline...), code: 1, stdout: "text", shown: []string{`+++ "b/`}},
		{args: append([]string{"prune", "--report", "-", "-o", "json"}, offline...), code: 1, stdout: "json"},
		{args: append([]string{"check-update", "--old", f.Old}, offline...), code: 1, stdout: "text",
			shown: []string{untrusted.Shown("name"), `message\u0085::error::pwned\u2028`}},
		{args: append([]string{"check-update", "-o", "github", "--old", f.Old}, offline...), code: 1, stdout: "github"},
		{args: []string{"explain-structural", "-f", f.CRD}, stdout: "text", shown: []string{untrusted.Shown("property"), "\n     " + `\x3a:error::pwned`}},
		{args: []string{"explain-structural", "-f", f.BadCRD}, code: 1, stdout: "text", shown: []string{untrusted.Shown("bad")}},
		{args: []string{"explain-structural", "-f", f.BadCRD, "-o", "yaml"}, code: 1, stdout: "yaml"},
		{args: []string{"explain-structural", "-f", f.BadCRD, "-o", "github"}, code: 1, stdout: "github"},
		{args: []string{"lower-mutability", "-f", f.CRD, "-f", f.Objects}, stdout: "yaml"},
		{args: []string{"lower-mutability", "-f", f.BadCRD}, code: 2, stdout: "text", shown: []string{untrusted.Shown("bad")}},
		{args: []string{"test", "--coverage", f.Test}, code: 1, stdout: "text",
			shown: []string{untrusted.Shown("case"), untrusted.Shown("expectation"), untrusted.Shown("suite"), untrusted.Shown(`\x3a:error::case without expectation`)}},
		{args: []string{"test", "-o", "github", f.Test}, code: 1, stdout: "github"},
		{args: []string{"krm", f.KRMConfig, f.ObjectsFile}, code: 1, stdout: "yaml", shown: []string{untrusted.Shown("name"), untrusted.Shown("field")}},
		{args: []string{"krm"}, stdin: list.String(), code: 1, stdout: "yaml", shown: []string{untrusted.Shown("name")}},
		{args: []string{"prune", "--offline", "--crd-file", chart, "-f", f.Objects}, code: 1, stdout: "yaml", shown: []string{untrusted.Shown("templates/crd")}},
		{args: []string{"prune", "--crd-file", oci, "-f", f.Objects}, code: 2, stdout: "text", shown: []string{untrusted.Shown("crd")}},
	} {
		t.Run(strings.Join(c.args[:1], " "), func(t *testing.T) {
			r := NewTest(t).WithDir(f.Dir).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir()).WithStdin(c.stdin).Run("kubectl-crd", c.args...)
			what := fmt.Sprintf("kubectl-crd %q: exit %d\nstdout:\n%s\nstderr:\n%s", c.args, r.Code, r.Stdout, r.Stderr)
			if r.Code != c.code {
				t.Errorf("exit %d, want %d: %s", r.Code, c.code, what)
			}
			check := map[string]func(string) []string{
				"text": untrusted.Violations, "github": untrusted.GitHubViolations, "json": untrusted.JSONViolations, "yaml": untrusted.YAMLViolations,
			}[c.stdout]
			for _, v := range check(r.Stdout) {
				t.Errorf("stdout: %s\n%s", v, what)
			}
			for _, v := range untrusted.Violations(r.Stderr) {
				t.Errorf("stderr: %s\n%s", v, what)
			}
			if c.stdout == "github" && !strings.Contains(r.Stdout, "::error ") {
				t.Errorf("no -o github command: %s", what)
			}
			for _, s := range c.shown {
				if !strings.Contains(r.Stdout+r.Stderr, s) {
					t.Errorf("%s is not shown: %s", s, what)
				}
			}
		})
	}
}
