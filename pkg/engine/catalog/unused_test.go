package catalog

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// unusedCRDs are a CRD the server refuses (no schema), one it accepts, and
// one it refuses (no storage version).
const unusedCRDs = `apiVersion: apiextensions.k8s.io/v1
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
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}]
`

// readDocs are the documents of text as a source.
func readDocs(text, name string) Docs {
	return func(yield func(*document.Document, error) bool) {
		docs, err := document.Read(strings.NewReader(text), name)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// A schema source's CRD the server would refuse is a warning when no
// object is of its kind, in the order read, and the run's error when one
// is.
func TestLoaderWarnsOfRefusedUnused(t *testing.T) {
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: n}\n"
	l := newServed(Options{}).Load(finding.DefaultGate())
	if err := l.Schemas(readDocs(unusedCRDs, "crds.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := l.Inputs(readDocs(widget, "w.yaml"), false, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Added(); err != nil {
		t.Fatalf("no object of the refused kinds: %v", err)
	}
	if len(l.CRDs) != 1 || len(l.Unused) != 2 {
		t.Fatalf("%d CRDs added, %d unused refused: want 1 and 2", len(l.CRDs), len(l.Unused))
	}
	for i, want := range []struct {
		name string
		line int
	}{{"gizmos.example.com", 1}, {"things.example.com", 19}} {
		u := l.Unused[i]
		f := u.Findings
		if u.Ref.Name != want.name || u.Source.Line != want.line || len(f) != 1 || f[0].Reason != finding.ReasonRefusedUnused ||
			f[0].Check != finding.CRDWarning || f[0].Line != want.line || !strings.Contains(f[0].Message, "CustomResourceDefinition "+want.name+" is invalid") {
			t.Errorf("unused %d: %+v, want %s at line %d", i, u, want.name, want.line)
		}
	}

	gizmo := "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: n}\n"
	l = newServed(Options{}).Load(finding.DefaultGate())
	if err := l.Schemas(readDocs(unusedCRDs, "crds.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := l.Inputs(readDocs(gizmo, "g.yaml"), false, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Added(); err == nil || !strings.HasPrefix(err.Error(), "crds.yaml:1: CustomResourceDefinition gizmos.example.com is invalid") {
		t.Errorf("an object of the refused kind: %v", err)
	}
}

// A run keeps a file's index with the server's verdict on each CRD: those
// it prepared as it found them, the others as it checked them. The next
// run warns the same from the cache alone; a run stopped by a refused CRD
// keeps nothing.
func TestLoaderKeepsVerdicts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "crds.yaml")
	if err := os.WriteFile(file, []byte(unusedCRDs), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := crdindex.Cache{Dir: filepath.Join(dir, "cache"), Build: "test"}
	run := func(object string) (*Loader, error) {
		idx, err := cache.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		l := newServed(Options{}).Load(finding.DefaultGate())
		l.Index(idx)
		if err := l.Inputs(readDocs(object, "o.yaml"), false, nil); err != nil {
			t.Fatal(err)
		}
		return l, l.Added()
	}
	kept := func() []string {
		k, _ := filepath.Glob(filepath.Join(cache.Dir, "*", "*", "index.json"))
		return k
	}
	if _, err := run("apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: n}\n"); err == nil || len(kept()) != 0 {
		t.Fatalf("an object of the refused kind: %v, kept %v", err, kept())
	}
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: n}\n"
	first, err := run(widget)
	if err != nil || len(kept()) != 1 {
		t.Fatalf("a Widget: %v, kept %v", err, kept())
	}
	idx, err := cache.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range idx.Entries {
		d, err := e.Document()
		if err != nil {
			t.Fatal(err)
		}
		want := crdindex.FromDocument(d) // decided now
		got, _ := e.Refusal(strategy.Validators{})
		if w, _ := want.Refusal(strategy.Validators{}); !idx.Checked(i) || got != w {
			t.Errorf("entry %d kept as %q (checked %v), want %q", i, got, idx.Checked(i), w)
		}
	}
	second, err := run(widget)
	if err != nil || !reflect.DeepEqual(first.Unused, second.Unused) || len(second.Unused) != 2 {
		t.Errorf("from the cache: %v, unused %+v, want %+v", err, second.Unused, first.Unused)
	}
}
