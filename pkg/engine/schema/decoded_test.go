package schema_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/testcorpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// TestDecodedLikeConverted: a CRD read from a document takes its schemas,
// and the server's validation of it, from the internal version the decoder
// made instead of converting the v1 CRD again. Over every CRD of the corpus,
// that gives what converting again gives: the same structural schemas as
// written and as served, the same errors, the same validation errors.
func TestDecodedLikeConverted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs over every CRD of the corpus; skipped with -short")
	}
	dir := testcorpus.Dir(t)
	var crds, shared int
	for _, f := range testcorpus.CRDFiles(t, dir) {
		docs, err := document.Read(bytes.NewReader(testcorpus.Read(t, dir, f)), f.LocalPath)
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
			converted := schema.NewCRD(decoded.Object)
			got, want := schema.SchemasOf(decoded), schema.SchemasOf(converted)
			for _, v := range decoded.Versions() {
				if !reflect.DeepEqual(got.Raw[v], want.Raw[v]) {
					t.Errorf("%s: version %s: the schema as written differs from the one converted again", where, v)
				}
				if !reflect.DeepEqual(got.Served[v], want.Served[v]) {
					t.Errorf("%s: version %s: the schema as served differs from the one converted again", where, v)
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
			if diff := cmp.Diff(lines(validate(decoded.Object)), lines(decoded.Invalid())); diff != "" {
				t.Errorf("%s: the validation of the decoded CRD (-converted again +decoded):\n%s", where, diff)
			}
		}
	}
	if crds == 0 {
		t.Fatalf("no CRD read from %s", dir)
	}
	t.Logf("%d CRDs; %d with one schema shared by their versions", crds, shared)
}
