// Package layering holds the test of the project's dependency direction:
// plugin → engine and filter → engine, never the other way, and plugin and
// filter never import each other; and of the engine's weight: which of its
// packages may bring the API server's registry code, client-go and etcd.
package layering

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/kubectl-crd/kubectl-crd/"

// serverStrategy is the one engine package that may depend on client-go and
// etcd: the API server's registry strategies, which it runs, live in
// packages that import them. Every other engine package knows it through an
// interface, so the weight is chosen by the front ends that pass it in.
const serverStrategy = module + "pkg/engine/strategy"

// graph is the import graph of some packages and all their dependencies
// (without tests): each package's direct imports.
type graph struct {
	imports map[string][]string
	// roots are the packages of the pattern listed, not their dependencies.
	roots []string
}

// load lists the packages matching pattern and every package they depend on.
func load(t *testing.T, pattern string) graph {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{.DepOnly}}|{{join .Imports \" \"}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pattern, err)
	}
	g := graph{imports: map[string][]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		g.imports[f[0]] = strings.Fields(f[2])
		if f[1] == "false" {
			g.roots = append(g.roots, f[0])
		}
	}
	sort.Strings(g.roots)
	if len(g.roots) == 0 {
		t.Fatalf("%s: no packages", pattern)
	}
	return g
}

// under reports whether pkg is path or a package below it.
func under(pkg, path string) bool {
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}

// chain is the shortest import chain from pkg to a package under one of
// bad, pkg first; nil when pkg depends on none. A package under one of
// through is not looked into: what it brings is accepted.
func (g graph) chain(pkg string, bad, through []string) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range g.imports[p] {
			if _, seen := prev[imp]; seen || anyUnder(imp, through) {
				continue
			}
			prev[imp] = p
			if anyUnder(imp, bad) {
				var out []string
				for q := imp; q != ""; q = prev[q] {
					out = append([]string{q}, out...)
				}
				return out
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

func anyUnder(pkg string, paths []string) bool {
	for _, p := range paths {
		if under(pkg, p) {
			return true
		}
	}
	return false
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
		// directly: no package of the pattern imports these.
		directly []string
		// atAll: none depends on these, even through others.
		atAll []string
	}{
		// The engine is the semantics: no CLI, no cluster client.
		{"../../pkg/engine/...", []string{"github.com/spf13/cobra", "k8s.io/cli-runtime", "k8s.io/client-go"}, []string{module + "pkg/plugin", module + "pkg/filter", "k8s.io/cli-runtime"}},
		{"../../pkg/plugin/...", nil, []string{module + "pkg/filter"}},
		{"../../pkg/filter/...", []string{"k8s.io/cli-runtime", "k8s.io/client-go"}, []string{module + "pkg/plugin", "k8s.io/cli-runtime"}},
	} {
		g := load(t, rule.pattern)
		for _, pkg := range g.roots {
			for _, imp := range g.imports[pkg] {
				if anyUnder(imp, rule.directly) {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
			if c := g.chain(pkg, rule.atAll, nil); c != nil {
				t.Errorf("%s depends on %s:\n\t%s", pkg, c[len(c)-1], strings.Join(c, "\n\t-> "))
			}
		}
	}
}

// The engine's weight is a decision: only serverStrategy brings client-go
// and etcd, and cobra comes with nothing but the server's feature gates.
func TestEngineWeight(t *testing.T) {
	statSources(t, "../../pkg")
	g := load(t, "../../pkg/engine/...")
	heavy := []string{"k8s.io/client-go", "go.etcd.io"}
	// k8s.io/component-base is accepted: the server's code that the engine
	// calls (defaulting, CEL, validation) reads its feature gates through
	// it, and its flag helpers import cobra. Nothing else may bring cobra.
	featureGates := []string{"k8s.io/component-base"}
	found := false
	for _, pkg := range g.roots {
		if pkg == serverStrategy {
			found = true
		} else if c := g.chain(pkg, heavy, nil); c != nil {
			t.Errorf("%s depends on %s (only %s may):\n\t%s", pkg, c[len(c)-1], serverStrategy, strings.Join(c, "\n\t-> "))
		}
		if c := g.chain(pkg, []string{"github.com/spf13/cobra"}, featureGates); c != nil {
			t.Errorf("%s depends on cobra other than through k8s.io/component-base:\n\t%s", pkg, strings.Join(c, "\n\t-> "))
		}
	}
	if !found {
		t.Errorf("%s is not an engine package: name the one that brings client-go", serverStrategy)
	}
}
