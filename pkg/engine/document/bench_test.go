package document_test

import (
	"bytes"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/generate"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Reading and editing YAML, on objects made from the schemas of the three
// largest CRDs of the corpus, each after a comment:
//
//	go test ./pkg/engine/document -run '^$' -bench . -benchmem

const benchObjects = 200

// BenchmarkReadObjects: a stream of objects read as kubectl reads it, each
// document decoded (and located, for the lines of findings).
func BenchmarkReadObjects(b *testing.B) {
	for _, c := range generate.Largest(b, 3) {
		in, err := generate.Stream(c.Objects(benchObjects))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				docs, err := document.Read(bytes.NewReader(in), "bench.yaml")
				if err != nil {
					b.Fatal(err)
				}
				if len(docs) != benchObjects {
					b.Fatalf("%d documents, want %d", len(docs), benchObjects)
				}
			}
		})
	}
}

// BenchmarkReadCRD: a CRD file read as an input (CRDs are never edited).
func BenchmarkReadCRD(b *testing.B) {
	for _, c := range generate.Largest(b, 3) {
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(c.Data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := document.Read(bytes.NewReader(c.Data), "crd.yaml"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApply: the YAML edit, the prune result applied to the
// documents with their comments kept and the output checked to read back
// as the stored object, then encoded. Reading is not timed; the edits and
// the stored objects are computed once.
func BenchmarkApply(b *testing.B) {
	for _, c := range generate.Largest(b, 3) {
		in, err := generate.Stream(c.Objects(benchObjects))
		if err != nil {
			b.Fatal(err)
		}
		decoded, err := schema.DecodeCRD(c.Data)
		if err != nil {
			b.Fatal(err)
		}
		crd := schema.NewCRD(decoded)
		docs, err := document.Read(bytes.NewReader(in), "bench.yaml")
		if err != nil {
			b.Fatal(err)
		}
		edits := make([][]document.Edit, len(docs))
		stored := make([]map[string]interface{}, len(docs))
		n := 0
		for i, d := range docs {
			co, err := prune.Store(d.Object, crd, c.Version, false)
			if err != nil {
				b.Fatal(err)
			}
			edits[i], stored[i] = prune.Edits(d.Object, co.Object), co.Object
			if len(edits[i]) > 0 {
				n++
			}
		}
		if n < benchObjects/10 {
			b.Fatalf("%d of %d objects to edit", n, benchObjects)
		}
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				docs, err := document.Read(bytes.NewReader(in), "bench.yaml")
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for i, d := range docs {
					if len(edits[i]) > 0 {
						if _, err := d.Apply(edits[i], stored[i]); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := d.Encode(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
