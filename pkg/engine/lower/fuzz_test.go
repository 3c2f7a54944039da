package lower_test

import (
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/kepimmutable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// Any schema: no panic; a lowered CRD has no marker left, and lowering it
// again changes nothing.
func FuzzLower(f *testing.F) {
	cases, err := kepimmutable.Cases()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.Schema)
	}
	beyond, err := kepimmutable.Beyond()
	if err != nil {
		f.Fatal(err)
	}
	for _, u := range beyond {
		f.Add(u.SchemaFor("RemoveOnly"))
	}
	f.Fuzz(func(t *testing.T, schema string) {
		var s map[string]interface{}
		if sigsyaml.Unmarshal([]byte(schema), &s) != nil || s == nil {
			return
		}
		res, err := lower.CRD(crdWith(t, schema), strategy.Validators{})
		if err != nil {
			return
		}
		if len(res.Edits) > 0 {
			if p := markerIn(rootOf(res.Object), "openAPIV3Schema"); p != "" {
				t.Errorf("marker left at %s", p)
			}
		}
		again, err := lower.CRD(res.Object, strategy.Validators{})
		if err != nil || len(again.Edits) > 0 {
			t.Errorf("lowering again: %v, %d edits", err, len(again.Edits))
		}
	})
}

// markerIn is the path of a marker left in a schema, "" when none is.
func markerIn(s map[string]interface{}, path string) string {
	for _, ext := range []string{update.MutabilityExtension, update.KeyMutabilityExtension} {
		if _, ok := s[ext]; ok {
			return path + "." + ext
		}
	}
	if props, ok := s["properties"].(map[string]interface{}); ok {
		for k, v := range props {
			if c, ok := v.(map[string]interface{}); ok {
				if p := markerIn(c, path+".properties."+k); p != "" {
					return p
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := s[k].(map[string]interface{}); ok {
			if p := markerIn(c, path+"."+k); p != "" {
				return p
			}
		}
	}
	return ""
}
