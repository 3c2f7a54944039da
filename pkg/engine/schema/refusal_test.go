package schema_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// Refusal, the verdict alone, is FromObject's error, word for word: on
// every CRD of the corpus (a sample, every set read, unless
// KUBECTL_CRD_CORPUS_ALL=1; v1 and v1beta1, the old prometheus-operator's
// among them) and on the CRDs the end-to-end tests send the real server
// (test/e2e/testdata/crdvalidation: refused for each reason it has),
// objects of other kinds and CRDs of an apiVersion not served included.
func TestRefusalIsFromObjects(t *testing.T) {
	type doc struct {
		where string
		obj   map[string]interface{}
	}
	var docs []doc
	read := func(name string, data []byte) {
		ds, err := document.Read(bytes.NewReader(data), name)
		if err != nil {
			return // the reading is checked elsewhere (TestCorpus)
		}
		for i, d := range ds {
			docs = append(docs, doc{fmt.Sprintf("%s (document %d)", name, i+1), d.Object})
		}
	}
	served, err := filepath.Glob(filepath.Join("..", "..", "..", "test", "e2e", "testdata", "crdvalidation", "*.yaml"))
	if err != nil || len(served) == 0 {
		t.Fatalf("the e2e CRD cases: %v %v", served, err)
	}
	for _, name := range served {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		read(name, data)
	}
	read("other", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"+
		"apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\n---\n"+
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nspec: {versions: {name: v1}}\n"))
	if !testing.Short() {
		dir := corpus.Dir(t)
		for _, f := range corpus.Sample(t, corpus.CRDFiles(t, dir)) {
			read(f.LocalPath, corpus.Read(t, dir, f))
		}
	}
	var refused, legacy int
	for _, d := range docs {
		_, _, want := schema.FromObject(d.obj, strategy.Validators{})
		got := schema.Refusal(d.obj, strategy.Validators{})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: Refusal %v, FromObject %v", d.where, got, want)
		}
		if want != nil {
			refused++
		}
		if d.obj["apiVersion"] == "apiextensions.k8s.io/v1beta1" {
			legacy++
		}
		// Without a validator, only what the decoding refuses.
		_, _, want = schema.FromObject(d.obj, nil)
		if got := schema.Refusal(d.obj, nil); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: without a validator: Refusal %v, FromObject %v", d.where, got, want)
		}
	}
	if refused < len(served) || (!testing.Short() && legacy == 0) {
		t.Errorf("%d documents, %d refused, %d in v1beta1: the cases above do not cover refusals of each kind", len(docs), refused, legacy)
	}
	t.Logf("%d documents, %d refused, %d in v1beta1", len(docs), refused, legacy)
}
