package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An input that holds no objects: kubectl apply refuses it, and prune and
// check-update, against the same cluster, say that nothing was checked
// (exit 0: a warning). A file with an object is something to both.
func TestNoObjectsAgreesWithKubectl(t *testing.T) {
	applyExampleCRD(t)
	dir := t.TempDir()
	kubectl := kubectls[0].Path
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	// An empty List is left out: this server has no core group, so kubectl
	// cannot map v1 List before it would expand it.
	for _, tc := range []struct {
		name, content string
		objects       bool
	}{
		{"empty", "", false},
		{"separators", "---\n---\n", false},
		{"comments", "# nothing\n---\n# here\n", false},
		{"nulls", "null\n---\n~\n", false},
		{"a CRD", string(crd), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			x := NewTest(t)
			k := x.Run(kubectl, "apply", "--dry-run=server", "-f", file)
			kubectlNone := strings.Contains(k.Stderr, "no objects")
			if kubectlNone != !tc.objects || (k.Code == 0) != tc.objects {
				t.Fatalf("kubectl apply: exit %d, stderr:\n%s", k.Code, k.Stderr)
			}
			warning := "Warning: no objects in the input (" + file + "): nothing was checked\n"
			for _, args := range [][]string{
				{"prune", "-f", file},
				{"check-update", "-f", file},
			} {
				r := x.Run("kubectl-crd", args...)
				if r.Code != 0 || strings.Contains(r.Stderr, warning) != kubectlNone {
					t.Errorf("%s: exit %d, stderr:\n%s\nkubectl apply says (exit %d):\n%s", strings.Join(args, " "), r.Code, r.Stderr, k.Code, k.Stderr)
				}
				if !tc.objects && r.Stdout != "" {
					t.Errorf("%s: stdout %q", strings.Join(args, " "), r.Stdout)
				}
			}
		})
	}
}
