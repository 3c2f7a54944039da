package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// writeJSONSchemas writes the JSON schema of each version of crd where
// kubeconform looks for it with the schema location
// DIR/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json,
// converted as kubeconform's openapi2jsonschema converts CRDs: objects with
// properties refuse other properties (below the root), int-or-string is a
// string or an integer, nullable adds "null" to the type. Unlike that
// script, an object that preserves unknown fields keeps them: the server
// keeps them.
func writeJSONSchemas(dir string, crd *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		b, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil {
			return err
		}
		var s map[string]interface{}
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		out, err := json.Marshal(toJSONSchema(s, true))
		if err != nil {
			return err
		}
		d := filepath.Join(dir, crd.Spec.Group)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		name := strings.ToLower(crd.Spec.Names.Kind) + "_" + v.Name + ".json"
		if err := os.WriteFile(filepath.Join(d, name), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// toJSONSchema converts one OpenAPI v3 schema node, in place.
func toJSONSchema(s map[string]interface{}, root bool) map[string]interface{} {
	if s["x-kubernetes-int-or-string"] == true || s["format"] == "int-or-string" {
		delete(s, "format")
		delete(s, "anyOf")
		delete(s, "type")
		s["oneOf"] = []interface{}{map[string]interface{}{"type": "string"}, map[string]interface{}{"type": "integer"}}
	}
	if t, ok := s["type"].(string); ok && s["nullable"] == true {
		s["type"] = []interface{}{t, "null"}
	}
	if props, ok := s["properties"].(map[string]interface{}); ok {
		for k, p := range props {
			if pm, ok := p.(map[string]interface{}); ok {
				props[k] = toJSONSchema(pm, false)
			}
		}
		if _, set := s["additionalProperties"]; !set && !root && s["x-kubernetes-preserve-unknown-fields"] != true {
			s["additionalProperties"] = false
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if m, ok := s[k].(map[string]interface{}); ok {
			s[k] = toJSONSchema(m, false)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := s[k].([]interface{}); ok {
			for i, x := range l {
				if m, ok := x.(map[string]interface{}); ok {
					l[i] = toJSONSchema(m, false)
				}
			}
		}
	}
	return s
}
