package prune_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Costs that must grow linearly with the input (issue 14): each test measures
// the bytes allocated for an input and for one four times larger, so that a
// quadratic regression fails fast (64x) instead of taking minutes.

const crdHead = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},` +
	`"spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets","singular":"widget","listKind":"WidgetList"},"scope":"Namespaced",` +
	`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":`

func registry(tb testing.TB, spec string) *schema.Registry {
	crd, err := schema.DecodeCRD([]byte(crdHead + spec + `}}}}]}}`))
	if err != nil {
		tb.Fatal(err)
	}
	reg := schema.NewRegistry()
	reg.Add(schema.NewCRD(crd))
	return reg
}

// pruneAll reads, prunes (with defaults) and writes in.
func pruneAll(tb testing.TB, reg *schema.Registry, in []byte) {
	docs, err := document.Read(bytes.NewReader(in), "in.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range docs {
		if _, err := prune.Document(d, reg, prune.Options{Defaults: true}); err != nil {
			tb.Fatal(err)
		}
		if _, err := d.Encode(); err != nil {
			tb.Fatal(err)
		}
	}
}

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// checkLinear fails when the bytes allocated for size 8n are more than 16
// times those for n: linear growth gives about 8, quadratic 64.
func checkLinear(t *testing.T, n int, run func(n int)) {
	t.Helper()
	run(n) // warm up: caches, lazily built tables
	small := allocated(func() { run(n) })
	large := allocated(func() { run(8 * n) })
	ratio := float64(large) / float64(small)
	t.Logf("size %d: %d bytes, size %d: %d bytes (%.1fx)", n, small, 8*n, large, ratio)
	if ratio > 16 {
		t.Errorf("size %d allocates %d bytes, size %d: %d (%.1fx): not linear", n, small, 8*n, large, ratio)
	}
}

const preserveSpec = `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`

func deepObject(depth int) []byte {
	return []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: d\nspec:\n  a: " +
		strings.Repeat("{a: ", depth) + "1" + strings.Repeat("}", depth) + "\n")
}

// An object nested deep under x-kubernetes-preserve-unknown-fields: the
// paths of the diff and of the duplicate-key walk were copied per level.
func TestDeepObjectIsLinear(t *testing.T) {
	reg := registry(t, preserveSpec)
	checkLinear(t, 1000, func(n int) { pruneAll(t, reg, deepObject(n)) })
}

func BenchmarkDeepObject(b *testing.B) {
	reg := registry(b, preserveSpec)
	in := deepObject(9990) // the deepest the server's JSON decoder reads under spec
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		pruneAll(b, reg, in)
	}
}

func defaultsSpec(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{"type":"integer","default":%d}`, i, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// defaulted is an object that gets n-1 defaults: spec keeps p0 (the
// text-splice path) or has a field to prune too (the node-tree path).
func defaulted(prunedField bool) []byte {
	kept := "  p0: 0\n"
	if prunedField {
		kept = "  x: 1\n"
	}
	return []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: d\nspec:\n" + kept)
}

// --defaults with many defaults in one mapping: the text splice copied every
// line per edit, and every edit looked its key up with a scan of the mapping.
func TestManyDefaultsAreLinear(t *testing.T) {
	for _, pruned := range []bool{false, true} {
		t.Run(fmt.Sprintf("pruned=%v", pruned), func(t *testing.T) {
			regs := map[int]*schema.Registry{}
			for _, n := range []int{1000, 8000} {
				regs[n] = registry(t, defaultsSpec(n))
			}
			checkLinear(t, 1000, func(n int) { pruneAll(t, regs[n], defaulted(pruned)) })
		})
	}
}

func BenchmarkManyDefaults(b *testing.B) {
	reg := registry(b, defaultsSpec(40000))
	in := defaulted(false)
	b.ReportAllocs()
	for b.Loop() {
		pruneAll(b, reg, in)
	}
}
