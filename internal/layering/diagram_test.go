package layering

import (
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
)

// layerOf is the box of docs/architecture.md's diagram a package of the
// module is drawn in; "" for one it does not draw (hack's, the tests').
func layerOf(pkg string) string {
	rel := strings.TrimPrefix(pkg, module)
	switch {
	case rel == pkg, under(pkg, testSupport), rel == "internal/layering", rel == "internal/release":
		return ""
	case under(rel, "pkg/plugin"):
		return "pkg/plugin"
	case rel == "pkg/engine/strategy":
		return rel
	case under(rel, "pkg/engine"):
		return "pkg/engine/..."
	case rel == "internal/source", rel == "pkg/filter", under(rel, "cmd"):
		return rel
	case under(rel, "internal"):
		return "internal/*"
	}
	return rel
}

// diagramArrows are the imports the diagram draws, from box to box
// (strategy's arrow to the engine names the packages: engineOfStrategy).
var diagramArrows = []string{
	"cmd/kubectl-crd -> pkg/plugin",
	"cmd/kubectl-crd -> pkg/filter",
	"pkg/plugin -> pkg/engine/...",
	"pkg/filter -> pkg/engine/...",
	"pkg/plugin -> pkg/engine/strategy",
	"pkg/filter -> pkg/engine/strategy",
	"pkg/engine/strategy -> pkg/engine/...",
	"pkg/plugin -> internal/source",
	"pkg/filter -> internal/source",
	"pkg/plugin -> internal/*",
	"pkg/filter -> internal/*",
}

// The text beside the diagram allows these too: the helpers of the
// layers it does not draw an arrow from.
var describedArrows = []string{
	"cmd/kubectl-crd -> internal/*",
	"cmd/crd-helm -> internal/*",
	"internal/source -> internal/*",
	"pkg/engine/... -> internal/*",
}

// engineOfStrategy are the engine's packages strategy's arrow points to;
// engineHelpers the helpers the engine may import, as the text says.
var (
	engineOfStrategy = []string{"pkg/engine/schema", "pkg/engine/update", "pkg/engine/fieldpath", "pkg/engine/kubeversion"}
	engineHelpers    = []string{"internal/ordered", "internal/cachedir", "internal/fileread"}
)

// The layer diagram of docs/architecture.md draws the imports as they
// are: every import from one box to another is an arrow drawn (or one
// the text beside it names), every arrow drawn is an import, and the
// dotted arrow is the companion internal/source runs.
func TestLayerDiagram(t *testing.T) {
	for _, dir := range []string{"../../cmd", "../../pkg", "../../internal"} {
		statSources(t, dir)
	}
	data, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(data), "## The layers\n")
	diagram, _, _ := strings.Cut(rest, "\n```\n\n")
	allowed := map[string]bool{}
	for _, a := range append(append([]string{}, diagramArrows...), describedArrows...) {
		allowed[a] = true
	}
	found := map[string]bool{}
	g := load(t, "../../cmd/...", "../../pkg/...", "../../internal/...")
	for _, pkg := range g.roots {
		from := layerOf(pkg)
		if from == "" {
			continue
		}
		for _, imp := range g.imports[pkg] {
			to := layerOf(imp)
			if !strings.HasPrefix(imp, module) || to == "" || to == from {
				continue
			}
			arrow := from + " -> " + to
			found[arrow] = true
			rel := strings.TrimPrefix(imp, module)
			switch {
			case !allowed[arrow]:
				t.Errorf("%s imports %s: %s is no arrow of %s's diagram", pkg, imp, arrow, architecture)
			case from == "pkg/engine/..." && to == "internal/*" && !slices.Contains(engineHelpers, rel):
				t.Errorf("%s imports %s: the engine's helpers are %v (%s)", pkg, imp, engineHelpers, architecture)
			case from == "pkg/engine/strategy" && to == "pkg/engine/..." && !slices.Contains(engineOfStrategy, rel):
				t.Errorf("%s imports %s: the diagram draws its arrow to %v (%s)", pkg, imp, engineOfStrategy, architecture)
			}
		}
	}
	var missing []string
	for _, a := range diagramArrows {
		if !found[a] {
			missing = append(missing, a)
		}
		for _, box := range strings.Split(a, " -> ") {
			if !strings.Contains(diagram, box) {
				t.Errorf("%s's diagram does not draw %s", architecture, box)
			}
		}
	}
	sort.Strings(missing)
	for _, a := range missing {
		t.Errorf("%s's diagram draws %s, which no package imports", architecture, a)
	}
	var strategyLine string
	for _, line := range strings.Split(diagram, "\n") {
		if strings.Contains(line, "pkg/engine/strategy") {
			strategyLine = line
		}
	}
	for _, p := range engineOfStrategy {
		if !slices.Contains(g.imports[module+"pkg/engine/strategy"], module+p) || !strings.Contains(strategyLine, path.Base(p)) {
			t.Errorf("the diagram's arrow from pkg/engine/strategy to %s: not drawn, or no import", p)
		}
	}
	// The dotted arrow: internal/source runs crd-helm, a command of its own.
	if !strings.Contains(diagram, "internal/source ┄┄▶ cmd/crd-helm") {
		t.Errorf("%s's diagram does not draw internal/source running cmd/crd-helm", architecture)
	}
	helm, err := os.ReadFile("../../internal/source/helm.go")
	if err != nil || !strings.Contains(string(helm), `const Companion = "crd-helm"`) {
		t.Errorf("internal/source no longer runs the companion crd-helm (%v)", err)
	}
	if c := g.chain(module+"internal/source", []string{module + "cmd/crd-helm", "helm.sh"}, nil); c != nil {
		t.Errorf("internal/source links what it should run:\n\t%s", strings.Join(c, "\n\t-> "))
	}
}
