// Package layering holds the test of the project's dependency direction:
// plugin → engine and filter → engine, never the other way, and plugin and
// filter never import each other.
package layering

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/kubectl-crd/kubectl-crd/"

// packages lists the packages matching pattern with their direct imports
// and all their dependencies.
func packages(t *testing.T, pattern string) map[string][2][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	pkgs := map[string][2][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		pkgs[f[0]] = [2][]string{strings.Fields(f[1]), strings.Fields(f[2])}
	}
	return pkgs
}

// statSources stats every Go file below dir: go test caches a result until
// a file the test opened or stat'ed changes, and the go list it runs is
// not seen.
func statSources(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".go") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDependencyDirection(t *testing.T) {
	statSources(t, "../../pkg")
	for _, rule := range []struct {
		pattern string
		// directly: no package of the pattern imports these (prefixes).
		directly []string
		// at all: none depends on these, even through others.
		atAll []string
	}{
		// The engine is the semantics: no CLI, no cluster client.
		{"../../pkg/engine/...", []string{"github.com/spf13/cobra", "k8s.io/cli-runtime", "k8s.io/client-go"}, []string{module + "pkg/plugin", module + "pkg/filter"}},
		{"../../pkg/plugin/...", nil, []string{module + "pkg/filter"}},
		{"../../pkg/filter/...", []string{"k8s.io/cli-runtime", "k8s.io/client-go"}, []string{module + "pkg/plugin"}},
	} {
		pkgs := packages(t, rule.pattern)
		if len(pkgs) == 0 {
			t.Fatalf("%s: no packages", rule.pattern)
		}
		for pkg, deps := range pkgs {
			for _, imp := range deps[0] {
				for _, bad := range rule.directly {
					if strings.HasPrefix(imp, bad) {
						t.Errorf("%s imports %s", pkg, imp)
					}
				}
			}
			for _, dep := range deps[1] {
				for _, bad := range rule.atAll {
					if strings.HasPrefix(dep, bad) {
						t.Errorf("%s depends on %s", pkg, dep)
					}
				}
			}
		}
	}
}
