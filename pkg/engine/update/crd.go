package update

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CRDSchemas reads the mutability schema of every version of a CRD as
// written (the API server drops the markers, so they are read from the
// document, not from the decoded CRD): by version name, with the placement
// violations. apiextensions.k8s.io/v1beta1's spec.validation applies to
// every version without one of its own.
func CRDSchemas(crd map[string]interface{}) (map[string]*Schema, field.ErrorList) {
	var errs field.ErrorList
	out := map[string]*Schema{}
	spec, _ := crd["spec"].(map[string]interface{})
	var shared *Schema
	if v, ok := spec["validation"].(map[string]interface{}); ok {
		if raw, ok := v["openAPIV3Schema"].(map[string]interface{}); ok {
			s, e := ParseSchema(raw, field.NewPath("spec", "validation", "openAPIV3Schema"))
			shared, errs = s, append(errs, e...)
		}
	}
	versions, _ := spec["versions"].([]interface{})
	for i, v := range versions {
		v, _ := v.(map[string]interface{})
		name, _ := v["name"].(string)
		out[name] = shared
		sch, _ := v["schema"].(map[string]interface{})
		if raw, ok := sch["openAPIV3Schema"].(map[string]interface{}); ok {
			s, e := ParseSchema(raw, field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema"))
			out[name], errs = s, append(errs, e...)
		}
	}
	if version, ok := spec["version"].(string); ok && len(versions) == 0 {
		out[version] = shared
	}
	return out, errs
}
