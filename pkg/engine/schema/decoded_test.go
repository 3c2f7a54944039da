package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/serverpath"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// TestDecodedLikeConverted: a CRD read from a document takes its schemas,
// and the server's validation of it, from the internal version the decoder
// made instead of converting the v1 CRD again. Over every CRD of the corpus
// (a sample, every set read, unless KUBECTL_CRD_CORPUS_ALL=1), that gives
// what converting again gives: the same structural schemas as written and
// as served, the same errors, the same validation errors; and the schema as
// served, the one as written where pruning its defaults changes nothing,
// is the custom resource handler's.
func TestDecodedLikeConverted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs over every CRD of the corpus; skipped with -short")
	}
	dir := corpus.Dir(t)
	var crds, shared int
	for _, f := range corpus.Sample(t, corpus.CRDFiles(t, dir)) {
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			continue // TestCorpus (pkg/engine/prune) checks the reading
		}
		for i, d := range docs {
			where := fmt.Sprintf("%s (document %d)", f.LocalPath, i+1)
			decoded, ok, err := schema.DecodeObject(d.Object, strategy.Validators{})
			if !ok || err != nil {
				continue
			}
			crds++
			// As FromObject does: the validation first, on the internal
			// version the schemas share values with (defaults, enums).
			invalid := decoded.Invalid()
			converted := schema.NewCRD(decoded.Object)
			// The custom resource handler's schemas, where it serves them all.
			js, err := json.Marshal(d.Object)
			if err != nil {
				t.Fatal(err)
			}
			server, _ := serverpath.DecodeCRD(js)
			got, want := schema.SchemasOf(decoded), schema.SchemasOf(converted)
			for _, v := range decoded.Versions() {
				if !reflect.DeepEqual(got.Raw[v], want.Raw[v]) {
					t.Errorf("%s: version %s: the schema as written differs from the one converted again", where, v)
				}
				if !reflect.DeepEqual(got.Served[v], want.Served[v]) {
					t.Errorf("%s: version %s: the schema as served differs from the one converted again", where, v)
				}
				if server != nil && !reflect.DeepEqual(got.Served[v], server.Schema(v)) {
					t.Errorf("%s: version %s: the schema as served differs from the custom resource handler's", where, v)
				}
				if fmt.Sprint(got.ConvertErr[v]) != fmt.Sprint(want.ConvertErr[v]) || fmt.Sprint(got.ServedErr[v]) != fmt.Sprint(want.ServedErr[v]) {
					t.Errorf("%s: version %s: errors %v, %v; converted again %v, %v", where, v,
						got.ConvertErr[v], got.ServedErr[v], want.ConvertErr[v], want.ServedErr[v])
				}
			}
			if vs := decoded.Versions(); len(vs) > 1 && got.Raw[vs[0]] != nil && got.Raw[vs[0]] == got.Raw[vs[1]] {
				shared++
			}
			validate := strategy.Validators{}.ValidateCRDCreate
			if d.Object["apiVersion"] != "apiextensions.k8s.io/v1" {
				validate = strategy.Validators{}.ValidateCRDLegacy
			}
			errs, warnings := validate(decoded.Object)
			if diff := cmp.Diff(lines(errs), lines(invalid)); diff != "" {
				t.Errorf("%s: the validation of the decoded CRD (-converted again +decoded):\n%s", where, diff)
			}
			if diff := cmp.Diff(sets.List(sets.New(warnings...)), sets.List(sets.New(decoded.Warnings()...))); diff != "" {
				t.Errorf("%s: the warnings on the decoded CRD (-converted again +decoded):\n%s", where, diff)
			}
		}
	}
	if crds == 0 {
		t.Fatalf("no CRD read from %s", dir)
	}
	t.Logf("%d CRDs; %d with one schema shared by their versions", crds, shared)
}

// A default the server prunes (the v1 validation refuses such a CRD, but a
// CRD stored as v1beta1 keeps it): the schema as served is the handler's, a
// copy, and the one as written keeps the default as written.
func TestServedPrunesDefaultsInACopy(t *testing.T) {
	var obj map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(crdWith("v1", "foos.example.com", `
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
            a:
              type: object
              default: {x: 1, unknown: 2}
              properties: {x: {type: integer}}
`)), &obj); err != nil {
		t.Fatal(err)
	}
	c, ok, err := schema.DecodeObject(obj, nil)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	got := schema.SchemasOf(c)
	raw, served := got.Raw["v1"], got.Served["v1"]
	js, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	server, err := serverpath.DecodeCRD(js)
	if err != nil {
		t.Fatal(err)
	}
	if want := server.Schema("v1"); !reflect.DeepEqual(served, want) {
		t.Errorf("the schema as served is not the handler's:\n%s", cmp.Diff(want, served))
	}
	if d := raw.Properties["spec"].Properties["a"].Default.Object; !reflect.DeepEqual(d, map[string]interface{}{"x": int64(1), "unknown": int64(2)}) {
		t.Errorf("the schema as written has the default %v", d)
	}
	if d := served.Properties["spec"].Properties["a"].Default.Object; !reflect.DeepEqual(d, map[string]interface{}{"x": int64(1)}) {
		t.Errorf("the schema as served has the default %v", d)
	}
	if raw == served {
		t.Errorf("the schema as written is served")
	}
}
