package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// countingServer is the server's code, counting its validations of CRDs.
type countingServer struct {
	strategy.Validators
	validations *atomic.Int64
}

func (s countingServer) ValidateCRDCreate(crd *apiextensionsv1.CustomResourceDefinition) (field.ErrorList, []string) {
	s.validations.Add(1)
	return s.Validators.ValidateCRDCreate(crd)
}

func (s countingServer) ValidateDecodedCRDCreate(crd *apiextensionsinternal.CustomResourceDefinition) (field.ErrorList, []string) {
	s.validations.Add(1)
	return s.Validators.ValidateDecodedCRDCreate(crd)
}

func (s countingServer) ValidateCRDLegacy(crd *apiextensionsv1.CustomResourceDefinition) (field.ErrorList, []string) {
	s.validations.Add(1)
	return s.Validators.ValidateCRDLegacy(crd)
}

// warnedCRDs are CRDs the server accepts with warnings (a format it does
// not know), one it refuses (no schema), and one in
// apiextensions.k8s.io/v1beta1.
const warnedCRDs = `# CRDs with warnings
apiVersion: apiextensions.k8s.io/v1
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
              replicas: {type: integer, format: uint}
              size: {type: string, format: bytes}
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
          teeth: {type: integer, format: uint8}
---
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {plural: gadgets, kind: Gadget}
  scope: Namespaced
  version: v1
  validation:
    openAPIV3Schema:
      type: object
      properties:
        size: {type: integer, format: uint}
`

// A run with a cache of CRD indexes says what a run without one says of
// the CRDs it uses, the server's warnings included, whether it validated
// them (cold) or read the server's verdict back from the cache (warm): a
// warm run validates no CRD. That holds when a first run validated a CRD
// because an object used it, and when it only checked it, no object using
// it (Loader.Unused's verdicts).
func TestCachedVerdictsWarnAsValidated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "crds.yaml")
	if err := os.WriteFile(file, []byte(warnedCRDs), 0o644); err != nil {
		t.Fatal(err)
	}
	object := func(kind string) string {
		return "apiVersion: example.com/v1\nkind: " + kind + "\nmetadata: {name: x, namespace: n}\n"
	}
	all := object("Widget") + "---\n" + object("Sprocket") + "---\n" + object("Gadget")
	// run is a run's findings on the CRDs of file, and how many CRDs the
	// server validated.
	run := func(cache crdindex.Cache, objects string) (string, int64) {
		t.Helper()
		idx, err := cache.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var n atomic.Int64
		l := New(Options{Server: countingServer{validations: &n}, Builtins: builtin.Kinds{}}).Load(finding.DefaultGate())
		l.Index(idx)
		if err := l.Inputs(readDocs(objects, "o.yaml"), false, nil); err != nil {
			t.Fatal(err)
		}
		if err := l.Added(); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for _, a := range append(l.CRDs, l.Unused...) {
			out.WriteString(a.Source.String() + " " + a.Ref.Name + "\n")
			for _, f := range a.Findings {
				fmt.Fprintf(&out, "  %+v\n", f)
			}
		}
		return out.String(), n.Load()
	}
	want, n := run(crdindex.Cache{}, all)
	for _, w := range []string{`unrecognized format "uint"`, `unrecognized format "uint8"`, "gizmos.example.com is invalid", "v1beta1"} {
		if !strings.Contains(want, w) {
			t.Fatalf("without a cache, no %q in the findings:\n%s", w, want)
		}
	}
	if n != 4 {
		t.Fatalf("without a cache, %d CRDs validated, want 4", n)
	}
	for _, first := range []string{all, object("Widget")} {
		cache := crdindex.Cache{Dir: t.TempDir(), Build: "test"}
		if got, _ := run(cache, first); first == all && got != want {
			t.Errorf("cold: findings differ from those without a cache:\n%s\nwant:\n%s", got, want)
		}
		got, n := run(cache, all)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("warm, after a run of %q: findings (-no cache +warm):\n%s", first, diff)
		}
		// The Gizmo CRD, refused and unused, has its verdict kept too.
		if n != 0 {
			t.Errorf("warm, after a run of %q: %d CRDs validated, want none", first, n)
		}
	}
}
