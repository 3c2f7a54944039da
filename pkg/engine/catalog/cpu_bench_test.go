package catalog

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/benchinput"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// The corpus input of the CPU benchmarks: about 127 CRDs of eight
// projects and 10,000 objects made from their samples, built once.
var (
	cpuInputOnce sync.Once
	cpuInput     *benchinput.Input
)

func cpuBenchInput(b *testing.B) *benchinput.Input {
	cpuInputOnce.Do(func() { cpuInput = benchinput.Build(b, *benchinput.Objects) })
	if cpuInput == nil {
		b.Skip("no input")
	}
	return cpuInput
}

func readAll(b *testing.B, data []byte, name string) []*document.Document {
	docs, err := document.Read(bytes.NewReader(data), name)
	if err != nil {
		b.Fatal(err)
	}
	return docs
}

// loadedCatalog is a catalog with the server's validation and every CRD of in.
func loadedCatalog(b *testing.B, crds []*document.Document) *Catalog {
	c := newServed(Options{})
	for _, d := range crds {
		if _, _, err := c.addCRD(d); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// BenchmarkCPUAddCRDs is the cost of adding the CRDs, parsed once: decoding,
// conversion, the server's CRD validation, violations and markers.
func BenchmarkCPUAddCRDs(b *testing.B) {
	crds := readAll(b, cpuBenchInput(b).CRDs, "crds.yaml")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loadedCatalog(b, crds)
	}
}

// BenchmarkCPUPrune is Catalog.prune (with the server's create validation)
// of the 10,000 objects, parsed outside the timer; the validators are
// built in the first pass over the objects, not timed.
func BenchmarkCPUPrune(b *testing.B) {
	in := cpuBenchInput(b)
	c := loadedCatalog(b, readAll(b, in.CRDs, "crds.yaml"))
	objects := func() []*document.Document {
		b.StopTimer()
		defer b.StartTimer()
		return readAll(b, in.Objects, "objects.yaml")
	}
	for _, d := range objects() {
		if _, _, err := c.prune(d, pruneOptions{Validate: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, d := range objects() {
			if _, _, err := c.prune(d, pruneOptions{Validate: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCPUUpdate is Catalog.updateResult of the 10,000 objects against
// themselves as the old ones.
func BenchmarkCPUUpdate(b *testing.B) {
	in := cpuBenchInput(b)
	c := loadedCatalog(b, readAll(b, in.CRDs, "crds.yaml"))
	for _, d := range readAll(b, in.Objects, "old.yaml") {
		if err := c.AddOld(d); err != nil {
			b.Fatal(err)
		}
	}
	objects := func() []*document.Document {
		b.StopTimer()
		defer b.StartTimer()
		return readAll(b, in.Objects, "objects.yaml")
	}
	ctx := context.Background()
	for _, d := range objects() {
		if _, err := c.updateResult(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, d := range objects() {
			if _, err := c.updateResult(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
	}
}
