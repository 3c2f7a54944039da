package update

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// CRDSchemas keeps a schema only where the CRD has markers: a CRD without
// any has none to keep, in any version; one with a marker in one version
// reads them all, and places the marker where it is.
func TestCRDSchemasKeepsMarkersOnly(t *testing.T) {
	crd := func(v2 string) map[string]interface{} {
		var obj map[string]interface{}
		if err := yaml.Unmarshal([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {a: {type: string}}}
  - name: v2
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {a: {type: string`+v2+`}}}
  - name: v3
`), &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}

	none, errs := CRDSchemas(crd(""))
	if len(errs) > 0 || len(none) != 3 {
		t.Fatalf("without markers: %v, %v", none, errs)
	}
	for v, s := range none {
		if s != nil {
			t.Errorf("without markers: version %s has a schema kept", v)
		}
	}

	some, errs := CRDSchemas(crd(", x-kubernetes-mutability: Immutable"))
	if len(errs) > 0 || len(some) != 3 {
		t.Fatalf("with a marker: %v, %v", some, errs)
	}
	if s := some["v2"]; !s.HasMarkers() || s.Properties["spec"].Properties["a"].Mutability != Immutable {
		t.Errorf("with a marker: v2 = %+v", s)
	}
	if s := some["v1"]; s == nil || s.HasMarkers() || s.Properties["spec"] == nil {
		t.Errorf("with a marker in v2: v1 = %+v, want its schema without markers", s)
	}
	if some["v3"] != nil {
		t.Errorf("a version without a schema has one: %+v", some["v3"])
	}

	// A marker misplaced is still found.
	_, errs = CRDSchemas(crd(", x-kubernetes-mutability: Sometimes"))
	if len(errs) != 1 {
		t.Errorf("an unknown marker value: %v, want one error", errs)
	}
}
