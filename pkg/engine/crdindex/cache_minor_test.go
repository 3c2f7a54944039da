package crdindex

import (
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// An index keeps the server's verdict on each CRD, a minor's verdict: the
// key of a file differs by the minor answering.
func TestCacheKeyByMinor(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	c := Cache{Dir: t.TempDir(), Build: "b"}
	keys := map[string]kubeversion.Minor{}
	for _, m := range kubeversion.Supported() {
		if _, err := kubeversion.Use(m); err != nil {
			t.Fatal(err)
		}
		k := c.key("crds.yaml", []byte("kind: CustomResourceDefinition\n"))
		if other, ok := keys[k]; ok {
			t.Fatalf("%s and %s share the key %s", other, m, k)
		}
		keys[k] = m
	}
}
