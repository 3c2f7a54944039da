package plugin

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/benchinput"
)

var (
	cpuBenchOnce  sync.Once
	cpuBenchInput *benchinput.Input
)

// cpuBenchFiles writes the corpus input into the benchmark's directory,
// built once per test binary: about 127 CRDs of eight projects,
// -benchinput.objects objects (10,000) made from their samples, and a file
// of the first object (for the cost of loading the CRDs alone).
func cpuBenchFiles(b *testing.B) (crds, objects, one string) {
	cpuBenchOnce.Do(func() {
		cpuBenchInput = benchinput.Build(b, *benchinput.Objects)
		b.Logf("%d CRDs, %d objects (%d with an unknown field), %d KiB", cpuBenchInput.CRDCount, *benchinput.Objects, cpuBenchInput.Unknown, len(cpuBenchInput.Objects)/1024)
	})
	in := cpuBenchInput
	if in == nil {
		b.Skip("no input")
	}
	dir := b.TempDir()
	crds, objects = in.Write(b, dir)
	first := in.Objects
	if i := bytes.Index(first[4:], []byte("\n---\n")); i >= 0 {
		first = first[:i+5]
	}
	one = filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(one, first, 0o644); err != nil {
		b.Fatal(err)
	}
	return crds, objects, one
}

func benchCommand(b *testing.B, args ...string) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: io.Discard, ErrOut: &errOut}
		if code := Run(context.Background(), streams, args); code > 1 {
			b.Fatalf("exit %d:\n%s", code, errOut.String())
		}
	}
}

// BenchmarkCPULoadCRDs is prune --offline of one object with the CRDs:
// the cost of reading, converting and validating the CRDs.
func BenchmarkCPULoadCRDs(b *testing.B) {
	crds, _, one := cpuBenchFiles(b)
	benchCommand(b, "prune", "--offline", "--crd-file", crds, "-f", one)
}

// BenchmarkCPUPrune is prune --offline of the objects with the CRDs.
func BenchmarkCPUPrune(b *testing.B) {
	crds, objects, _ := cpuBenchFiles(b)
	benchCommand(b, "prune", "--offline", "--crd-file", crds, "-f", objects)
}

// BenchmarkCPUCheckUpdate is check-update --offline of the objects
// against themselves as the old ones.
func BenchmarkCPUCheckUpdate(b *testing.B) {
	crds, objects, _ := cpuBenchFiles(b)
	benchCommand(b, "check-update", "--offline", "--crd-file", crds, "--old", objects, "-f", objects)
}
