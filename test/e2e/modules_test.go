package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The modules the suite builds apart (kubectl, the test API server) build
// what they share with kubectl-crd and crd-helm at the same versions: a
// module at another version (one go-logr under klog was enough) compiles
// all that depends on it again, and a fresh machine paid minutes of both
// cores for it in the suite's setup. (Runs with -short.)
func TestModulesShareVersions(t *testing.T) {
	root := repoRoot()
	plugin := moduleVersions(t, root, "./cmd/kubectl-crd", "./cmd/crd-helm")
	for _, dir := range []string{"test/kubectl", "test/apiserver"} {
		shared := 0
		for path, v := range moduleVersions(t, filepath.Join(root, dir), ".") {
			if pv, ok := plugin[path]; ok {
				shared++
				if pv != v {
					t.Errorf("%s builds %s %s, kubectl-crd %s: set it to %s in %s/go.mod", dir, path, v, pv, pv, dir)
				}
			}
		}
		if shared == 0 {
			t.Errorf("%s shares no module with kubectl-crd", dir)
		}
	}
}

// moduleVersions lists the modules of the packages pkgs build, in dir,
// with their versions.
func moduleVersions(t *testing.T, dir string, pkgs ...string) map[string]string {
	t.Helper()
	list := exec.Command("go", append([]string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}"}, pkgs...)...)
	list.Dir = dir
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", dir, err)
	}
	versions := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, v, ok := strings.Cut(line, " "); ok {
			versions[path] = v
		}
	}
	return versions
}
