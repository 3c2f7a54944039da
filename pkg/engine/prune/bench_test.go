package prune_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// BenchmarkPruneStream measures reading, pruning and writing a stream of
// 1,000 objects against one CRD: the schema is converted once, each object
// is parsed once.
func BenchmarkPruneStream(b *testing.B) {
	crdYAML, err := os.ReadFile("../../../examples/maintenance/crd.yaml")
	if err != nil {
		b.Fatal(err)
	}
	job, err := os.ReadFile("../../../examples/maintenance/job.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var stream strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&stream, "---\n%s", job)
	}
	in := []byte(stream.String())
	crd, err := schema.DecodeCRD(crdYAML)
	if err != nil {
		b.Fatal(err)
	}
	reg := schema.NewRegistry()
	reg.Add(schema.NewCRD(crd))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		docs, err := document.Read(bytes.NewReader(in), "bench.yaml")
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range docs {
			if _, err := prune.Document(d, reg, prune.Options{Defaults: true}); err != nil {
				b.Fatal(err)
			}
			if _, err := d.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
