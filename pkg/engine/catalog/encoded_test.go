package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// encodedCRDs are a CRD the server accepts, one with a mutability marker,
// one in apiextensions.k8s.io/v1beta1 and one the server refuses (no
// schema).
const encodedCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, default: 1}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: sprockets.example.com}
spec:
  group: example.com
  names: {plural: sprockets, kind: Sprocket}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          teeth: {type: integer, x-kubernetes-mutability: Immutable}
---
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {plural: gadgets, kind: Gadget}
  scope: Cluster
  version: v1
  validation:
    openAPIV3Schema:
      type: object
      properties:
        size: {type: integer}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {kind: Gizmo, plural: gizmos}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
`

// readCRD is what a run reads of a CRD it adds.
type readCRD struct {
	ref     document.ObjectRef
	crd     *apiextensionsv1.CustomResourceDefinition
	markers map[string]*update.Schema
}

// A cache of CRD indexes keeps each CRD a run used, that the server
// accepts and that has no mutability marker, decoded
// (schema.CRD.Encoded), and a warm run reads it from there without reading
// its document: the CRD as a run without the cache decodes it. One whose
// decoded form no longer reads is decoded from its document.
func TestCachedCRDsReadDecoded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "crds.yaml")
	if err := os.WriteFile(file, []byte(encodedCRDs), 0o644); err != nil {
		t.Fatal(err)
	}
	objects := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: x, namespace: n}\n---\n" +
		"apiVersion: example.com/v1\nkind: Sprocket\nmetadata: {name: x, namespace: n}\n---\n" +
		"apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: x}\n"
	// run is the CRDs a run adds, by name.
	run := func(cache crdindex.Cache) map[string]readCRD {
		t.Helper()
		idx, err := cache.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		l := New(Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}}).Load(finding.DefaultGate())
		l.Index(idx)
		if err := l.Inputs(readDocs(objects, "o.yaml"), false, nil); err != nil {
			t.Fatal(err)
		}
		if err := l.Added(); err != nil {
			t.Fatal(err)
		}
		out := map[string]readCRD{}
		for _, a := range l.CRDs {
			out[a.CRD.Name()] = readCRD{a.Ref, a.CRD.Object, l.cat.markers[a.CRD.GroupKind()]}
		}
		return out
	}
	same := func(when string, got, want map[string]readCRD) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: CRDs %v, want %v", when, got, want)
		}
		for name, w := range want {
			g := got[name]
			if g.ref != w.ref || !apiequality.Semantic.DeepEqual(g.crd, w.crd) {
				t.Errorf("%s: CRD %s differs from the one read without a cache: %+v, want %+v", when, name, g.ref, w.ref)
			}
			// The catalog looks markers up by version (none: nil).
			for _, v := range w.crd.Spec.Versions {
				if !reflect.DeepEqual(g.markers[v.Name], w.markers[v.Name]) {
					t.Errorf("%s: CRD %s: the markers of %s differ from those read without a cache", when, name, v.Name)
				}
			}
		}
	}
	want := run(crdindex.Cache{})
	if want["sprockets.example.com"].markers["v1"] == nil {
		t.Fatal("without a cache, Sprocket's CRD has no marker")
	}
	cache := crdindex.Cache{Dir: t.TempDir(), Build: "test"}
	same("cold", run(cache), want)
	encoded, err := filepath.Glob(filepath.Join(cache.Dir, "*", "*", "*.pb"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(encoded)
	// Widget's and Gadget's (documents 0 and 2 of the file); not
	// Sprocket's, which has a marker, nor the refused Gizmo's.
	if len(encoded) != 2 || filepath.Base(encoded[0]) != "0.pb" || filepath.Base(encoded[1]) != "2.pb" {
		t.Fatalf("the cache holds CRDs decoded in %q, want 0.pb and 2.pb", encoded)
	}
	// Their documents are not read: gone, the run reads the same.
	for _, path := range encoded {
		if err := os.Remove(strings.TrimSuffix(path, ".pb") + ".json"); err != nil {
			t.Fatal(err)
		}
	}
	same("warm", run(cache), want)
	// Widget's changed in the cache is the CRD the run has; Gadget's, not
	// protobuf, is read from its document (the file, as the cache's copy
	// is gone).
	changed := want["widgets.example.com"].crd.DeepCopy()
	changed.Labels = map[string]string{"read-from": "cache"}
	b, err := changed.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(encoded[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(encoded[1], []byte("not protobuf"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := run(cache)
	if got["widgets.example.com"].crd.Labels["read-from"] != "cache" {
		t.Errorf("warm: CRD widgets.example.com is not the one the cache kept decoded")
	}
	delete(got, "widgets.example.com")
	delete(want, "widgets.example.com")
	same("warm, Gadget's decoded form unreadable", got, want)
}
