package plugin

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/benchinput"
)

var (
	cpuBenchOnce  sync.Once
	cpuBenchDir   string
	cpuBenchFiles struct{ crds, objects, one string }
)

// cpuBenchInput writes the corpus input once per test binary: 127 CRDs of
// eight projects, -benchinput.objects objects (10,000) made from their
// samples, and a file of one
// object (for the cost of loading the CRDs alone).
func cpuBenchInput(b *testing.B) {
	cpuBenchOnce.Do(func() {
		in := benchinput.Build(b, *benchinput.Objects)
		dir, err := os.MkdirTemp("", "kubectl-crd-cpu-bench-")
		if err != nil {
			b.Fatal(err)
		}
		cpuBenchDir = dir
		cpuBenchFiles.crds, cpuBenchFiles.objects = in.Write(b, dir)
		first := in.Objects
		if i := bytes.Index(first[4:], []byte("\n---\n")); i >= 0 {
			first = first[:i+5]
		}
		cpuBenchFiles.one = filepath.Join(dir, "one.yaml")
		if err := os.WriteFile(cpuBenchFiles.one, first, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d CRDs, %d objects (%d with an unknown field), %d KiB", in.CRDCount, *benchinput.Objects, in.Unknown, len(in.Objects)/1024)
	})
	if cpuBenchDir == "" {
		b.Skip("no input")
	}
}

func benchCommand(b *testing.B, args ...string) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: bytes.NewReader(nil), Out: io.Discard, ErrOut: &errOut}
		if code := Run(streams, args); code > 1 {
			b.Fatalf("exit %d:\n%s", code, errOut.String())
		}
	}
}

// BenchmarkCPULoadCRDs is prune --offline of one object with the 127 CRDs:
// the cost of reading, converting and validating the CRDs.
func BenchmarkCPULoadCRDs(b *testing.B) {
	cpuBenchInput(b)
	benchCommand(b, "prune", "--offline", "--crd-file", cpuBenchFiles.crds, "-f", cpuBenchFiles.one)
}

// BenchmarkCPUPrune is prune --offline of 10,000 objects with the 127 CRDs.
func BenchmarkCPUPrune(b *testing.B) {
	cpuBenchInput(b)
	benchCommand(b, "prune", "--offline", "--crd-file", cpuBenchFiles.crds, "-f", cpuBenchFiles.objects)
}

// BenchmarkCPUCheckUpdate is check-update --offline of the 10,000 objects
// against themselves as the old ones.
func BenchmarkCPUCheckUpdate(b *testing.B) {
	cpuBenchInput(b)
	benchCommand(b, "check-update", "--offline", "--crd-file", cpuBenchFiles.crds, "--old", cpuBenchFiles.objects, "-f", cpuBenchFiles.objects)
}
