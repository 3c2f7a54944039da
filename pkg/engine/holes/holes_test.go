package holes_test

import (
	"os"
	"strings"
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

// A marker emulated holds; a field no valid object can be built for is
// not analysed, with the reason; a rule that does not hold at all is a
// hole of one update.
func TestAnalyzeVerdicts(t *testing.T) {
	crd := readCRD(t, "../../../examples/holes/crd.yaml")
	versions := crd["spec"].(map[string]interface{})["versions"].([]interface{})
	spec := versions[0].(map[string]interface{})["schema"].(map[string]interface{})["openAPIV3Schema"].(map[string]interface{})["properties"].(map[string]interface{})["spec"].(map[string]interface{})
	props := spec["properties"].(map[string]interface{})
	props["marked"] = map[string]interface{}{"type": "string", "x-kubernetes-mutability": "Immutable"}
	props["coded"] = map[string]interface{}{"type": "string", "pattern": "^[0-9]{9}-Z$",
		"x-kubernetes-validations": []interface{}{map[string]interface{}{"rule": "self == oldSelf"}}}
	props["grows"] = map[string]interface{}{"type": "integer",
		"x-kubernetes-validations": []interface{}{map[string]interface{}{"rule": "self == oldSelf || self > oldSelf"}}}
	props["loose"] = map[string]interface{}{"type": "object", "properties": map[string]interface{}{"a": map[string]interface{}{"type": "string"}},
		"x-kubernetes-validations": []interface{}{map[string]interface{}{"rule": "!has(oldSelf.a) || has(self.a)"}}}
	props["wrong"] = map[string]interface{}{"type": "object", "required": []interface{}{"a", "b"}, "properties": map[string]interface{}{"a": map[string]interface{}{"type": "string"}, "b": map[string]interface{}{"type": "string"}},
		"x-kubernetes-validations": []interface{}{map[string]interface{}{"rule": "has(self.a) && self.b == oldSelf.b"}}}
	rep, err := holes.Analyze(crd, strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range rep.Fields {
		v := f.Verdict
		for _, h := range f.Holes {
			v += " " + h.Kind
		}
		if f.Reason != "" {
			v += ": " + f.Reason
		}
		got[f.Field+" "+f.Rule] = v
	}
	for field, want := range map[string]string{
		"spec.marked x-kubernetes-mutability: Immutable":                            holes.Immutable,
		"spec.coded x-kubernetes-validations: self == oldSelf":                      holes.NotAnalysed + `: cannot build a valid object: spec.coded: no value known to match the string's pattern "^[0-9]{9}-Z$" or format ""`,
		"spec.wrong.b x-kubernetes-validations: has(self.a) && self.b == oldSelf.b": holes.Leaks + " " + holes.UnsetParent,
	} {
		if got[field] != want {
			t.Errorf("%s: %q, want %q", field, got[field], want)
		}
	}
	for field := range got {
		if strings.HasPrefix(field, "spec.grows") || strings.HasPrefix(field, "spec.loose") {
			t.Errorf("%s: not a rule meant to make a field immutable", field)
		}
	}
}
