package update_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/generate"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// BenchmarkCheck: the update check of check-update per object, on objects
// made from the schemas of the three largest CRDs of the corpus, each
// updated by a label change: both stored as the server stores them, the
// server's update validation (ratcheting, transition rules), the
// mutability markers. ns/object is the cost of one.
//
//	go test ./pkg/engine/update -run '^$' -bench . -benchmem
func BenchmarkCheck(b *testing.B) {
	const objects = 100
	for _, c := range generate.Largest(b, 3) {
		decoded, err := schema.DecodeCRD(c.Data)
		if err != nil {
			b.Fatal(err)
		}
		crd := schema.NewCRD(decoded)
		var raw map[string]interface{}
		if err := sigsyaml.Unmarshal(c.Data, &raw); err != nil {
			b.Fatal(err)
		}
		markers, errs := update.CRDSchemas(raw)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		validator, err := strategy.Validators{}.UpdateValidator(crd, c.Version)
		if err != nil {
			b.Fatal(err)
		}
		olds := c.Objects(objects)
		news := make([]map[string]interface{}, objects)
		for i, o := range olds {
			news[i] = runtime.DeepCopyJSON(o)
			news[i]["metadata"].(map[string]interface{})["labels"] = map[string]interface{}{"app": "bench", "revision": "2"}
		}
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range olds {
					if _, err := update.Check(olds[i], news[i], crd, markers[c.Version], validator); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/objects, "ns/object")
		})
	}
}
