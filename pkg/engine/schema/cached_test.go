package schema_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// TestEncodedLikeDecoded: a CRD a cache kept encoded (CRD.Encoded) reads
// back as DecodeObject reads its document. Over every CRD of the corpus the
// server accepts (a sample, every set read, unless KUBECTL_CRD_CORPUS_ALL=1): the same CRD served, the same structural schemas as
// written and as served (one shared by the versions where DecodeObject
// shares one), the same errors and violations, and the same verdict of the
// server's validation when it runs.
func TestEncodedLikeDecoded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs over every CRD of the corpus; skipped with -short")
	}
	dir := corpus.Dir(t)
	var crds, legacy int
	for _, f := range corpus.Sample(t, corpus.CRDFiles(t, dir)) {
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			continue // TestCorpus (pkg/engine/prune) checks the reading
		}
		for i, d := range docs {
			where := fmt.Sprintf("%s (document %d)", f.LocalPath, i+1)
			want, ok, err := schema.DecodeObject(d.Object, strategy.Validators{})
			if !ok || err != nil || want.InvalidErr() != nil {
				continue
			}
			encoded, err := want.Encoded()
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			got, ok, err := schema.DecodeEncoded(d.Object, encoded, strategy.Validators{})
			if !ok || err != nil {
				t.Fatalf("%s: %v, %v", where, ok, err)
			}
			crds++
			if got.Legacy() {
				legacy++
			}
			if got.Legacy() != want.Legacy() || !apiequality.Semantic.DeepEqual(got.Object, want.Object) {
				t.Errorf("%s: the CRD read encoded differs:\n%s", where, cmp.Diff(want.Object, got.Object))
			}
			g, w := schema.SchemasOf(got), schema.SchemasOf(want)
			vs := want.Versions()
			for _, v := range vs {
				if !reflect.DeepEqual(g.Raw[v], w.Raw[v]) || !reflect.DeepEqual(g.Served[v], w.Served[v]) {
					t.Errorf("%s: version %s: the structural schemas differ", where, v)
				}
				if fmt.Sprint(g.ConvertErr[v], g.ServedErr[v]) != fmt.Sprint(w.ConvertErr[v], w.ServedErr[v]) {
					t.Errorf("%s: version %s: errors %v, %v; decoded %v, %v", where, v, g.ConvertErr[v], g.ServedErr[v], w.ConvertErr[v], w.ServedErr[v])
				}
			}
			if len(vs) > 1 && (w.Raw[vs[0]] == w.Raw[vs[1]]) != (g.Raw[vs[0]] == g.Raw[vs[1]]) {
				t.Errorf("%s: the versions share a schema: %v; decoded: %v", where, g.Raw[vs[0]] == g.Raw[vs[1]], w.Raw[vs[0]] == w.Raw[vs[1]])
			}
			if diff := cmp.Diff(lines(want.Violations()), lines(got.Violations())); diff != "" {
				t.Errorf("%s: the violations (-decoded +encoded):\n%s", where, diff)
			}
			if diff := cmp.Diff(lines(want.Invalid()), lines(got.Invalid())); diff != "" {
				t.Errorf("%s: the validation (-decoded +encoded):\n%s", where, diff)
			}
			if diff := cmp.Diff(want.Warnings(), got.Warnings()); diff != "" {
				t.Errorf("%s: the warnings (-decoded +encoded):\n%s", where, diff)
			}
		}
	}
	if crds == 0 {
		t.Fatalf("no CRD read from %s", dir)
	}
	t.Logf("%d CRDs, %d of them in v1beta1", crds, legacy)
}

func TestEncodedRefusesWhatIsNoCRD(t *testing.T) {
	obj := map[string]interface{}{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}
	if _, ok, err := schema.DecodeEncoded(obj, []byte("not protobuf"), nil); !ok || err == nil {
		t.Errorf("DecodeEncoded of bytes that are no CRD: ok %v, error %v; want ok and an error", ok, err)
	}
	obj["apiVersion"] = "apiextensions.k8s.io/v2"
	if _, ok, err := schema.DecodeEncoded(obj, nil, nil); !ok || err == nil {
		t.Errorf("DecodeEncoded of a CRD in an unsupported apiVersion: ok %v, error %v; want ok and an error", ok, err)
	}
	if _, ok, err := schema.DecodeEncoded(map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap"}, nil, nil); ok || err != nil {
		t.Errorf("DecodeEncoded of a ConfigMap: ok %v, error %v; want neither", ok, err)
	}
}
