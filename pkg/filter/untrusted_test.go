package filter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/untrusted"
)

// TestUntrustedTextEscaped: what the function prints on stderr (its
// results as text, its errors) shows names, namespaces, kinds, fields,
// file names and messages escaped, each result on its line; no line
// begins a workflow command. The ResourceList on stdout is data.
func TestUntrustedTextEscaped(t *testing.T) {
	f := untrusted.Write(t, t.TempDir())
	t.Chdir(f.Dir) // crdPaths are relative to the working directory
	objects, err := os.ReadFile(f.ObjectsFile)
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(f.KRMConfig)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(f.Dir, "missing"+untrusted.Injection)
	if err := os.WriteFile(filepath.Join(f.Dir, "missing.yaml"), []byte(string(config)+"previous: ["+quote(missing)+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(string(config)) +
		"items:\n" + items(string(objects))
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		shown []string
	}{
		{"standalone", "", []string{f.KRMConfig, f.ObjectsFile}, 1,
			[]string{untrusted.Shown("name"), untrusted.Shown("namespace"), untrusted.Shown("field"), untrusted.Shown("::error::kind")}},
		{"a ResourceList", list, nil, 1, []string{untrusted.Shown("name"), untrusted.Shown("::error::kind")}},
		{"a path that does not exist", "", []string{"missing.yaml", f.ObjectsFile}, 2, []string{untrusted.Shown("missing")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runStandalone(t, strings.NewReader(c.stdin), c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			for _, v := range untrusted.YAMLViolations(stdout) {
				t.Errorf("stdout: %s", v)
			}
			for _, v := range untrusted.Violations(stderr) {
				t.Errorf("stderr: %s", v)
			}
			for _, s := range c.shown {
				if !strings.Contains(stderr, s) {
					t.Errorf("%s is not shown; stderr:\n%s", s, stderr)
				}
			}
		})
	}
}

// quote is s as a YAML double-quoted scalar.
func quote(s string) string { return fmt.Sprintf("%q", s) }

// indent indents YAML by two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// items makes the documents of a stream the items of a list.
func items(stream string) string {
	var out strings.Builder
	for _, d := range strings.Split(stream, "---\n") {
		out.WriteString("- " + strings.ReplaceAll(strings.TrimSuffix(d, "\n"), "\n", "\n  ") + "\n")
	}
	return out.String()
}
