package catalog_test

import (
	"bytes"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/generate"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// BenchmarkAddCRD: the load of one CRD in a run, whole, on the three
// largest CRDs of the corpus: the file read, the CRD decoded, its schemas
// converted, the server's validation of a create of it (with the CEL cost
// estimates), the structural check and the mutability markers.
//
//	go test ./pkg/engine/catalog -run '^$' -bench AddCRD -benchmem
func BenchmarkAddCRD(b *testing.B) {
	for _, c := range generate.Largest(b, 3) {
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(c.Data)))
			b.ReportAllocs()
			for b.Loop() {
				docs, err := document.Read(bytes.NewReader(c.Data), c.File)
				if err != nil {
					b.Fatal(err)
				}
				cat := catalog.New(catalog.Options{Server: strategy.Validators{}})
				crd, _, err := cat.AddPrepared(cat.PrepareCRD(docs[0]))
				if err != nil || crd == nil {
					b.Fatalf("%v %v", crd, err)
				}
				if err := crd.InvalidErr(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
