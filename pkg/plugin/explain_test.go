package plugin

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

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

// deepCRD is a CRD file whose schema nests properties depth deep.
func deepCRD(t *testing.T, depth int) string {
	inner := `{"type":"string"}`
	for range depth {
		inner = `{"type":"object","properties":{"a":` + inner + `}}`
	}
	return writeFile(t, "deep.yaml", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: deeps.example.com
spec:
  group: example.com
  names: {kind: Deep, plural: deeps}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {"type":"object","properties":{"spec":`+inner+`}}
`)
}

// explain-structural's memory is linear in the schema's depth, as prune's
// is: its text output is quadratic in depth (each line indented by its
// depth), but is written, not held. A copy of the field path per level
// (in lower's walk of the markers, in the tree) and an indent string per
// level were quadratic: a CRD of 185 KB nested 4,990 deep peaked at 1.7 GB.
// Bytes allocated at 8 times the depth are at most 16 times more.
func TestExplainIsLinearInDepth(t *testing.T) {
	alloc := func(depth int) uint64 {
		file := deepCRD(t, depth)
		var before, after runtime.MemStats
		var out countingWriter
		var errOut strings.Builder
		runtime.GC()
		runtime.ReadMemStats(&before)
		code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"explain-structural", "-f", file})
		runtime.ReadMemStats(&after)
		if code != 0 || out.n < depth*depth {
			t.Fatalf("depth %d: exit %d, %d bytes written, stderr:\n%s", depth, code, out.n, errOut.String())
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	alloc(100) // warm up
	small, large := alloc(400), alloc(3200)
	t.Logf("bytes allocated: depth 400: %d, depth 3200: %d", small, large)
	if large > 16*small {
		t.Errorf("depth 3200 allocates %d bytes, depth 400 %d: more than 16 times for 8 times the depth", large, small)
	}
}
