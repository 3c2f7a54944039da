package prune_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/generate"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
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

// BenchmarkPruneLargest: prune with report, the work of kubectl crd prune
// per object, on objects made from the schemas of the three largest CRDs of
// the corpus (one in ten with an unknown field): read the stream, prune and
// validate each object as the server does, its report as JSON, the YAML
// written back with the changes applied. ns/object is the cost of one.
//
//	go test ./pkg/engine/prune -run '^$' -bench Largest -benchmem
func BenchmarkPruneLargest(b *testing.B) {
	const objects = 200
	for _, c := range generate.Largest(b, 3) {
		in, err := generate.Stream(c.Objects(objects))
		if err != nil {
			b.Fatal(err)
		}
		crd, err := schema.DecodeCRD(c.Data)
		if err != nil {
			b.Fatal(err)
		}
		reg := schema.NewRegistry()
		reg.Add(schema.NewCRD(crd))
		opts := prune.Options{Validate: strategy.Validators{}}
		// The validator of the version (CEL rules compiled) is built once
		// per run, before the first object: not timed.
		warm, err := document.Read(bytes.NewReader(in), "bench.yaml")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := prune.Document(warm[0], reg, opts); err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			changes := 0
			for b.Loop() {
				changes = 0
				docs, err := document.Read(bytes.NewReader(in), "bench.yaml")
				if err != nil {
					b.Fatal(err)
				}
				for _, d := range docs {
					res, err := prune.Document(d, reg, opts)
					if err != nil {
						b.Fatal(err)
					}
					changes += len(res.Changes)
					if _, err := json.Marshal(res); err != nil {
						b.Fatal(err)
					}
					if _, err := d.Encode(); err != nil {
						b.Fatal(err)
					}
				}
			}
			if changes < objects/10 {
				b.Fatalf("%d changes in %d objects, %d of them with an unknown field", changes, objects, objects/10)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/objects, "ns/object")
		})
	}
}
