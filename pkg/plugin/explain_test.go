package plugin

import (
	"io"
	"runtime"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

func deepSkeleton(depth int) *structuralschema.Structural {
	s := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	for i := 0; i < depth; i++ {
		s = &structuralschema.Structural{
			Generic:    structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{"a": *s},
		}
	}
	return s
}

// countingWriter counts what is written without keeping it.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// The text tree's output is quadratic in depth (a line per level, indented
// by its depth); printing it must cost no more than linear in that output
// (re-indenting each subtree made it cubic: a 4,900-deep schema took 119 s).
// Bytes allocated per byte written must not grow with depth.
func TestTextTreeIsLinearInItsOutput(t *testing.T) {
	perByte := func(depth int) float64 {
		s := deepSkeleton(depth)
		var w countingWriter
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		printTree(&w, "  ", "<root>", s, nil)
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(w.n)
	}
	perByte(50) // warm up
	small, large := perByte(100), perByte(800)
	t.Logf("bytes allocated per byte written: depth 100: %.1f, depth 800: %.1f", small, large)
	if large > 2*small {
		t.Errorf("depth 800 allocates %.1f bytes per byte written, depth 100: %.1f: not linear in the output", large, small)
	}
}

func BenchmarkTextTreeDeep(b *testing.B) {
	s := deepSkeleton(4900)
	b.ReportAllocs()
	for b.Loop() {
		printTree(io.Discard, "  ", "<root>", s, nil)
	}
}
