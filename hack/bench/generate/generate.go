// Package generate makes custom resources from a structural schema, for the
// benchmarks of the engine packages: objects of any CRD (the largest of the
// corpus have no samples of every shape), deterministic, of a moderate size.
package generate

import (
	"fmt"
	"sort"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// UnknownField is the field Object adds to spec (or the root) when asked:
// a typo no schema has.
const UnknownField = "replicaz"

// Options shape the objects.
type Options struct {
	// Depth is how deep objects are filled (0: 6).
	Depth int
	// Width is how many optional properties of an object are filled,
	// besides the required ones (0: 4).
	Width int
}

// Object is custom resource i of kind in apiVersion, its properties filled
// from s: the required ones and the first Width others by name, to Depth;
// enum values, minimums and formats respected, patterns and CEL rules not.
// unknown adds UnknownField.
func Object(s *structuralschema.Structural, apiVersion, kind string, i int, unknown bool, o Options) map[string]interface{} {
	if o.Depth == 0 {
		o.Depth = 6
	}
	if o.Width == 0 {
		o.Width = 4
	}
	obj := map[string]interface{}{}
	if s != nil {
		if v, ok := value(s, 0, i, o).(map[string]interface{}); ok {
			obj = v
		}
	}
	obj["apiVersion"], obj["kind"] = apiVersion, kind
	obj["metadata"] = map[string]interface{}{
		"name":      fmt.Sprintf("bench-%d", i),
		"namespace": "default",
		"labels":    map[string]interface{}{"app": "bench"},
	}
	delete(obj, "status")
	if unknown {
		if spec, ok := obj["spec"].(map[string]interface{}); ok {
			spec[UnknownField] = int64(3)
		} else {
			obj[UnknownField] = int64(3)
		}
	}
	return obj
}

func value(s *structuralschema.Structural, depth, i int, o Options) interface{} {
	if s.ValueValidation != nil && len(s.ValueValidation.Enum) > 0 {
		return s.ValueValidation.Enum[i%len(s.ValueValidation.Enum)].Object
	}
	if s.XIntOrString {
		return int64(1)
	}
	switch s.Type {
	case "object":
		out := map[string]interface{}{}
		if depth >= o.Depth {
			return out
		}
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		required := map[string]bool{}
		if s.ValueValidation != nil {
			for _, r := range s.ValueValidation.Required {
				required[r] = true
			}
		}
		optional := 0
		for _, n := range names {
			if n == "metadata" && depth == 0 {
				continue
			}
			if !required[n] {
				if optional >= o.Width {
					continue
				}
				optional++
			}
			p := s.Properties[n]
			out[n] = value(&p, depth+1, i, o)
		}
		if len(s.Properties) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			for k := range 2 {
				out[fmt.Sprintf("key%d", k)] = value(s.AdditionalProperties.Structural, depth+1, i+k, o)
			}
		}
		return out
	case "array":
		if s.Items == nil || depth >= o.Depth {
			return []interface{}{}
		}
		n := 2
		if s.XListType != nil && *s.XListType != "atomic" {
			n = 1 // items of a set or a map must differ: one is enough
		}
		out := make([]interface{}, n)
		for k := range out {
			out[k] = value(s.Items, depth+1, i+k, o)
		}
		return out
	case "integer":
		if s.ValueValidation != nil && s.ValueValidation.Minimum != nil {
			return int64(*s.ValueValidation.Minimum) + 1
		}
		return int64(1)
	case "number":
		return 1.5
	case "boolean":
		return true
	case "string":
		if s.ValueValidation != nil {
			switch s.ValueValidation.Format {
			case "date-time":
				return "2026-01-02T03:04:05Z"
			case "duration":
				return "5m"
			case "byte":
				return "YmVuY2g="
			}
		}
		return fmt.Sprintf("value-%d", i)
	}
	return map[string]interface{}{}
}
