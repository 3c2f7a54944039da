package document_test

import (
	"testing"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// NodeLine finds a field in a kyaml node tree as Line does in a document:
// a key's line, an item's, through an alias and a merge key, the last of
// a key written twice; 0 for what is not there.
func TestNodeLine(t *testing.T) {
	n, err := kyaml.Parse("base: &b\n  size: 1\nspec:\n  <<: *b\n  name: a\n  name: b\n  list:\n  - x\n  - y\nref: *b\n")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"spec.name":    6,
		"spec.list[1]": 9,
		"spec.size":    2,
		"ref.size":     2,
		"spec.missing": 0,
		"spec.list[2]": 0,
	} {
		if got := document.NodeLine(n.YNode(), fieldpath.Parse(path)); got != want {
			t.Errorf("%s: line %d, want %d", path, got, want)
		}
	}
}
