package schema_test

import (
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// TestDeprecationWarningWhen: which versions warn, and a deprecationWarning
// given is the warning as written. The server's own text, and every
// ordering of versions it depends on, are held to the test API server by
// the end-to-end TestDeprecationWarningsAsServer.
func TestDeprecationWarningWhen(t *testing.T) {
	const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing}
  versions:
  - {name: v1alpha1, served: true, storage: false, deprecated: true}
  - {name: v1beta1, served: true, storage: false, deprecated: true, deprecationWarning: "v1beta1 goes in 3.0"}
  - {name: v1beta2, served: true, storage: false, deprecated: true, deprecationWarning: ""}
  - {name: v1, served: true, storage: true}
`
	var obj map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(crd), &obj); err != nil {
		t.Fatal(err)
	}
	c, ok, err := schema.DecodeObject(obj, strategy.Validators{})
	if !ok || err != nil {
		t.Fatalf("DecodeObject: %v, %v", ok, err)
	}
	for _, tc := range []struct {
		version string
		warns   bool
		text    string // "" when only whether it warns is checked
	}{
		{"v1alpha1", true, ""},
		{"v1beta1", true, "v1beta1 goes in 3.0"},
		{"v1beta2", false, ""}, // an empty text (the server refuses the CRD; its recorder would drop it)
		{"v1", false, ""},
		{"v2", false, ""}, // not the CRD's
	} {
		got, ok := c.DeprecationWarning(tc.version)
		if ok != tc.warns || (tc.text != "" && got != tc.text) || (!ok && got != "") {
			t.Errorf("%s: %q, %v; want a warning: %v %q", tc.version, got, ok, tc.warns, tc.text)
		}
	}
}
