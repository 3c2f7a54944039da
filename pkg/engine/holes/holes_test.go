package holes_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/holes"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

func readCRD(t *testing.T, path string) map[string]interface{} {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]interface{}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestAnalyzeExample: the example's fields, each decided by the server's
// validation: the verdict and the kinds of hole of each.
func TestAnalyzeExample(t *testing.T) {
	rep, err := holes.Analyze(readCRD(t, "../../../examples/holes/crd.yaml"), strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range rep.Fields {
		kinds := []string{f.Verdict}
		for _, h := range f.Holes {
			kinds = append(kinds, h.Kind+" "+h.Via)
			if h.Fix == nil || h.Fix.Err != "" {
				t.Errorf("%s: %s: no checked fix: %+v", f.Field, h.Kind, h.Fix)
			}
		}
		got[f.Field] = kinds
	}
	want := map[string][]string{
		"spec.id":                       {holes.Immutable},
		"spec.region":                   {holes.Leaks, holes.UnsetField + " spec.region"},
		"spec.network.cidr":             {holes.Leaks, holes.UnsetParent + " spec.network"},
		"spec.nodePools[*].machineType": {holes.Leaks, holes.RemoveEntry + " spec.nodePools[0]", holes.UnsetParent + " spec.nodePools"},
		"spec.tags[*]":                  {holes.Leaks, holes.RemoveKey + " spec.tags[k0]", holes.UnsetParent + " spec.tags"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
}
