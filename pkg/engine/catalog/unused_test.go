package catalog

import (
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// A schema source's CRD the server would refuse is a warning when no
// object is of its kind, in the order read, and the run's error when one
// is; a CRD of the inputs is refused whatever the objects.
func TestLoaderWarnsOfRefusedUnused(t *testing.T) {
	const crds = `apiVersion: apiextensions.k8s.io/v1
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
	read := func(text, name string) Docs {
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
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: n}\n"
	l := newServed(Options{}).Load()
	if err := l.Schemas(read(crds, "crds.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := l.Inputs(read(widget, "w.yaml"), false, nil); err != nil {
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
	l = newServed(Options{}).Load()
	if err := l.Schemas(read(crds, "crds.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := l.Inputs(read(gizmo, "g.yaml"), false, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Added(); err == nil || !strings.HasPrefix(err.Error(), "crds.yaml:1: CustomResourceDefinition gizmos.example.com is invalid") {
		t.Errorf("an object of the refused kind: %v", err)
	}
}
