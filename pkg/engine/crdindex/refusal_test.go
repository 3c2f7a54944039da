package crdindex_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// A file of a CRD the server accepts, one it refuses (no schema for its
// version: not structural), and one it cannot decode.
const refusedCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {kind: Gizmo, plural: gizmos}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions: {name: v1}
`

// The server's verdict on each CRD of an index is the catalog's (what a
// run that uses the CRD says), whether decided now or read back from the
// cache.
func TestRefusalIsTheCatalogs(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "crds.yaml")
	if err := os.WriteFile(name, []byte(refusedCRDs), 0o644); err != nil {
		t.Fatal(err)
	}
	c := crdindex.Cache{Dir: filepath.Join(dir, "cache"), Build: "test"}
	for _, run := range []string{"indexed", "cached"} {
		idx, err := c.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(idx.Entries) != 3 {
			t.Fatalf("%s: %d entries, want 3", run, len(idx.Entries))
		}
		for i, e := range idx.Entries {
			got, err := e.Refusal(strategy.Validators{})
			if err != nil {
				t.Fatal(err)
			}
			d, err := e.Document()
			if err != nil {
				t.Fatal(err)
			}
			cat := catalog.New(catalog.Options{Server: strategy.Validators{}})
			_, _, err = cat.AddPrepared(cat.PrepareCRD(d))
			want := ""
			var ie *document.InputError
			if errors.As(err, &ie) {
				want = ie.Msg
			} else if err != nil {
				t.Fatal(err)
			}
			if got != want || (i > 0) != (got != "") {
				t.Errorf("%s: %s: refusal %q, want the catalog's %q", run, e.GroupKind, got, want)
			}
		}
		if got, _ := idx.Entries[1].Refusal(strategy.Validators{}); !strings.Contains(got, "is invalid") {
			t.Errorf("%s: the Gizmo CRD: %q, want the server's validation error", run, got)
		}
		for i, e := range idx.Entries {
			if !idx.Checked(i) {
				refusal, warnings, _ := e.Verdict(strategy.Validators{})
				idx.SetVerdict(i, refusal, warnings)
			}
		}
		idx.Keep()
	}
	// The verdict is kept with the index: one file per content, holding it.
	kept, err := filepath.Glob(filepath.Join(c.Dir, "*", "*", "index.json"))
	if err != nil || len(kept) != 1 {
		t.Fatalf("indexes kept: %v %v", kept, err)
	}
	if b, _ := os.ReadFile(kept[0]); !strings.Contains(string(b), `"refusal"`) {
		t.Errorf("the index kept holds no refusal:\n%s", b)
	}
}

// An entry of a CRD already read (a schema source on standard input) is
// checked when asked.
func TestRefusalFromDocument(t *testing.T) {
	docs, err := document.Read(strings.NewReader(refusedCRDs), "-")
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		got, err := crdindex.FromDocument(d).Refusal(strategy.Validators{})
		if err != nil || (i > 0) != (got != "") {
			t.Errorf("document %d: refusal %q, %v", i, got, err)
		}
	}
}
