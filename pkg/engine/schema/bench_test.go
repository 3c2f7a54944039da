package schema_test

import (
	"testing"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/generate"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// The CRD load of a run, step by step, on the three largest CRDs of the
// corpus (about 1.5 MB of YAML and 10,000 schema nodes each):
//
//	go test ./pkg/engine/schema -run '^$' -bench . -benchmem

// BenchmarkDecodeCRD: a CRD file's YAML to the v1 object, as the server decodes it.
func BenchmarkDecodeCRD(b *testing.B) {
	for _, c := range generate.Largest(b, 3) {
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(c.Data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := schema.DecodeCRD(c.Data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewCRD: the schema conversion of every version (structural
// schemas, defaults pruned), as the server's CRD handler does it.
func BenchmarkNewCRD(b *testing.B) {
	for _, c := range generate.Largest(b, 3) {
		crd, err := schema.DecodeCRD(c.Data)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				schema.NewCRD(crd)
			}
		})
	}
}

// BenchmarkViolations: the structural check (the NonStructuralSchema
// condition) of a converted CRD.
func BenchmarkViolations(b *testing.B) {
	for _, c := range generate.Largest(b, 3) {
		crd, err := schema.DecodeCRD(c.Data)
		if err != nil {
			b.Fatal(err)
		}
		converted := schema.NewCRD(crd)
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if errs := converted.Violations(); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}
