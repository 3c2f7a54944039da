package layering

import (
	"strings"
	"testing"
)

// The plugin and the KRM function pull OCI sources with internal/source's
// own registry client: no registry library, and none of what
// go-containerregistry brought with it (klauspost/compress's 40 MB module,
// docker/cli and its credential helpers), is linked into them, so that a
// newcomer's first go run does not download them (issue 44). The tests'
// in-process registry (go-containerregistry's pkg/registry) is test-only.
func TestNoRegistryLibraryInPlugin(t *testing.T) {
	statSources(t, "../../cmd")
	statSources(t, "../../pkg")
	statSources(t, "../../internal")
	heavy := []string{"github.com/google/go-containerregistry", "github.com/klauspost/compress",
		"github.com/docker/cli", "github.com/docker/docker-credential-helpers"}
	g := load(t, "../../cmd/kubectl-crd", "../../pkg/filter")
	for _, pkg := range g.roots {
		if c := g.chain(pkg, heavy, nil); c != nil {
			t.Errorf("%s links a registry library or its dependencies (internal/source has its own client):\n\t%s", pkg, strings.Join(c, "\n\t-> "))
		}
	}
	for _, front := range []string{"cmd/kubectl-crd", "pkg/filter"} {
		if g.chain(module+front, []string{module + "internal/source"}, nil) == nil {
			t.Errorf("%s does not fetch OCI sources through internal/source: the test sees nothing", front)
		}
	}
}
