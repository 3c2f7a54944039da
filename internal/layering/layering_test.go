// Package layering holds the test of the project's dependency direction:
// plugin → engine and filter → engine, never the other way, and plugin and
// filter never import each other; of the engine's weight: which of its
// packages may bring the API server's registry code, client-go and etcd; of
// the test fixtures (internal/testsupport), which no shipped package
// imports; and of docs/architecture.md's table of packages, which names
// every one, and its layer diagram, which draws the imports
// (diagram_test.go).
package layering

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
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

// load lists the packages matching the patterns and every package they
// depend on.
func load(t *testing.T, patterns ...string) graph {
	t.Helper()
	pattern := strings.Join(patterns, " ")
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}|{{.DepOnly}}|{{join .Imports \" \"}}"}, patterns...)
	out, err := exec.Command("go", args...).Output()
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

// testSupport holds the fixtures of the tests and benchmarks.
const testSupport = module + "internal/testsupport"

// Test fixtures stay out of what is shipped: no package of cmd/, pkg/ or
// internal/ other than the fixtures themselves (nor the tests: go list
// -deps leaves out their imports) depends on internal/testsupport, even
// through another package. hack/ and test/ are tools and tests, and may.
func TestNoTestSupport(t *testing.T) {
	for _, dir := range []string{"../../cmd", "../../pkg", "../../internal"} {
		statSources(t, dir)
	}
	g := load(t, "../../cmd/...", "../../pkg/...", "../../internal/...")
	for _, pkg := range g.roots {
		if under(pkg, testSupport) {
			continue
		}
		if c := g.chain(pkg, []string{testSupport}, nil); c != nil {
			t.Errorf("%s depends on the test fixtures %s (for tests only):\n\t%s", pkg, c[len(c)-1], strings.Join(c, "\n\t-> "))
		}
	}
}

// architecture is the document whose table says where each concept lives.
const architecture = "../../docs/architecture.md"

// backquoted is a backquoted name in a cell of the table.
var backquoted = regexp.MustCompile("`([^`]+)`")

// conceptTable returns the paths that the package column of the table
// "Where each concept lives" in docs/architecture.md names: each
// backquoted name with a slash, relative to the module root (a package, a
// file in one, or a tree ending in /...).
func conceptTable(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	in, column := false, -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#"):
			in = line == "## Where each concept lives"
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			if column >= 0 {
				in = false // the table is over
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if column < 0 {
			for i, c := range cells {
				if strings.TrimSpace(c) == "package" {
					column = i
				}
			}
			if column < 0 {
				t.Fatalf("%s: the table of \"Where each concept lives\" has no package column: %s", architecture, line)
			}
			continue
		}
		if column >= len(cells) {
			t.Errorf("%s: a row of the table without a package column: %s", architecture, line)
			continue
		}
		for _, m := range backquoted.FindAllStringSubmatch(cells[column], -1) {
			if strings.Contains(m[1], "/") {
				paths = append(paths, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("%s: no table \"Where each concept lives\" naming packages", architecture)
	}
	return paths
}

// The table of docs/architecture.md names every package of pkg/ and
// internal/ (the test fixtures under internal/testsupport, and this
// package, may be named or not), and nothing that does not exist. A row
// may name several packages, or a file of a package, which names the
// package.
func TestConceptTable(t *testing.T) {
	statSources(t, "../../pkg")
	statSources(t, "../../internal")
	named := map[string]bool{}
	var trees []string // named with /...: every package below
	for _, p := range conceptTable(t) {
		tree := strings.TrimSuffix(p, "/...")
		if _, err := os.Stat(filepath.Join("../..", filepath.FromSlash(tree))); err != nil {
			t.Errorf("%s names %s, which does not exist", architecture, p)
		}
		switch {
		case tree != p:
			trees = append(trees, module+tree)
		case strings.HasSuffix(p, ".go"):
			named[path.Dir(p)] = true
		default:
			named[p] = true
		}
	}
	g := load(t, "../../pkg/...", "../../internal/...")
	for _, pkg := range g.roots {
		rel := strings.TrimPrefix(pkg, module)
		if under(pkg, testSupport) || pkg == module+"internal/layering" || named[rel] || anyUnder(pkg, trees) {
			continue
		}
		t.Errorf("%s: the table of \"Where each concept lives\" does not name %s: add a row for it (concept | `%s` | the names to know)", architecture, rel, rel)
	}
}

// The Helm SDK renders charts in the companion crd-helm, never in
// kubectl-crd: its packages' start-up work (a JSON Schema compiler's
// tables, among others) would cost every run of kubectl crd, --help too
// (docs/performance.md). internal/source runs the companion instead.
func TestNoHelmInPlugin(t *testing.T) {
	statSources(t, "../../cmd")
	statSources(t, "../../pkg")
	statSources(t, "../../internal")
	g := load(t, "../../cmd/kubectl-crd")
	for _, pkg := range g.roots {
		if c := g.chain(pkg, []string{"helm.sh"}, nil); c != nil {
			t.Errorf("kubectl-crd links the Helm SDK (only cmd/crd-helm may):\n\t%s", strings.Join(c, "\n\t-> "))
		}
	}
	if c := load(t, "../../cmd/crd-helm"); c.chain(module+"cmd/crd-helm", []string{"helm.sh/helm/v4/pkg/engine"}, nil) == nil {
		t.Errorf("cmd/crd-helm does not render with the Helm SDK's engine")
	}
}
