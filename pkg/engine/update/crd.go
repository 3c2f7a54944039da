package update

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CRDSchemas reads the mutability schema of every version of a CRD as
// written (the API server drops the markers, so they are read from the
// document, not from the decoded CRD): by version name, with the placement
// violations. apiextensions.k8s.io/v1beta1's spec.validation applies to
// every version without one of its own. A version without any marker has
// a nil schema: there is nothing to check, and nothing is kept.
func CRDSchemas(crd map[string]interface{}) (map[string]*Schema, field.ErrorList) {
	var errs field.ErrorList
	out := map[string]*Schema{}
	spec, _ := crd["spec"].(map[string]interface{})
	// Most CRDs have no marker at all; then none has a schema to read.
	markers := mentionsMarkers(spec)
	var shared *Schema
	if v, ok := spec["validation"].(map[string]interface{}); ok && markers {
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
		if raw, ok := sch["openAPIV3Schema"].(map[string]interface{}); ok && markers {
			s, e := ParseSchema(raw, field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema"))
			out[name], errs = s, append(errs, e...)
		}
	}
	if version, ok := spec["version"].(string); ok && len(versions) == 0 {
		out[version] = shared
	}
	return out, errs
}

// mentionsMarkers reports whether a mutability extension is a key anywhere
// in v, schema or not: where none is, no schema has a marker.
func mentionsMarkers(v interface{}) bool {
	switch v := v.(type) {
	case map[string]interface{}:
		for k, e := range v {
			if k == MutabilityExtension || k == KeyMutabilityExtension || mentionsMarkers(e) {
				return true
			}
		}
	case []interface{}:
		for _, e := range v {
			if mentionsMarkers(e) {
				return true
			}
		}
	}
	return false
}
