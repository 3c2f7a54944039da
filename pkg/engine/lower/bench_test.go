package lower_test

import (
	"errors"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// deepSchema nests properties named a depth deep below spec, with a map
// and a list every tenth level, the string at the bottom unbounded.
func deepSchema(depth int) map[string]interface{} {
	s := map[string]interface{}{"type": "string"}
	for i := 0; i < depth; i++ {
		switch i % 10 {
		case 3:
			s = map[string]interface{}{"type": "object", "additionalProperties": s}
		case 7:
			s = map[string]interface{}{"type": "array", "items": s}
		default:
			s = map[string]interface{}{"type": "object", "properties": map[string]interface{}{"a": s}}
		}
	}
	return s
}

// BenchmarkCRDDeep: lowering a CRD whose schema nests 4,000 deep, without
// markers (explain-structural lowers every CRD it shows: the walks of the
// schema are all it does), and 1,000 deep below an Immutable list whose
// rule is over the server's cost budget (the bounds are looked for all the
// way down).
//
//	go test ./pkg/engine/lower -run '^$' -bench CRDDeep -benchmem
func BenchmarkCRDDeep(b *testing.B) {
	b.Run("no markers", func(b *testing.B) {
		crd := crdWith(b, "type: object")
		rootOf(crd)["properties"] = map[string]interface{}{"spec": deepSchema(4000)}
		b.ReportAllocs()
		for b.Loop() {
			if res, err := lower.CRD(crd, strategy.Validators{}); err != nil || len(res.Edits) > 0 {
				b.Fatal(err, res.Edits)
			}
		}
	})
	b.Run("cost error", func(b *testing.B) {
		crd := crdWith(b, "type: object")
		rootOf(crd)["properties"] = map[string]interface{}{"spec": map[string]interface{}{
			"type": "object", "properties": map[string]interface{}{"ports": map[string]interface{}{
				"type": "array", "x-kubernetes-mutability": "Immutable",
				"items": map[string]interface{}{"type": "object", "properties": map[string]interface{}{
					"tags": map[string]interface{}{"type": "array", "x-kubernetes-list-type": "set", "items": map[string]interface{}{"type": "string"}},
					"deep": deepSchema(1000),
				}},
			}},
		}}
		b.ReportAllocs()
		for b.Loop() {
			var ce *lower.CostError
			if _, err := lower.CRD(crd, strategy.Validators{}); !errors.As(err, &ce) {
				b.Fatal(err)
			}
		}
	})
}
