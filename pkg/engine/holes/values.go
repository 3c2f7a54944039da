package holes

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// The strings tried, in order, for a string field with a pattern or a
// format: the first one its pattern matches is taken (the server's
// validation decides afterwards whether the object is valid).
var stringCandidates = []string{
	"a", "b", "c", "x", "y", "a1", "b2", "abc", "xyz", "example", "other", "A", "B", "Abc", "Xyz",
	"1", "2", "10", "20", "a-b", "c-d", "a.b", "c.d", "example.com", "example.org", "a_b", "c_d",
	"1s", "2s", "1m", "2m", "1h", "2h", "1Gi", "2Gi", "100m", "200m", "v1", "v2", "v1.0.0", "v2.0.0",
	"10.0.0.1", "10.0.0.2", "10.0.0.0/8", "10.0.0.0/16", "https://example.com", "https://example.org",
	"a/b", "c/d", "a:b", "c:d", "a=b", "c=d", "true", "false", "None", "Always", "Never",
}

// formatCandidates are valid values of the formats the server checks.
var formatCandidates = map[string][]string{
	"date-time":    {"2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"},
	"datetime":     {"2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"},
	"date":         {"2024-01-01", "2024-01-02"},
	"duration":     {"1s", "2s"},
	"uri":          {"https://example.com", "https://example.org"},
	"url":          {"https://example.com", "https://example.org"},
	"email":        {"a@example.com", "b@example.com"},
	"hostname":     {"example.com", "example.org"},
	"ipv4":         {"10.0.0.1", "10.0.0.2"},
	"ipv6":         {"fd00::1", "fd00::2"},
	"ip":           {"10.0.0.1", "10.0.0.2"},
	"cidr":         {"10.0.0.0/8", "10.0.0.0/16"},
	"mac":          {"02:00:00:00:00:01", "02:00:00:00:00:02"},
	"uuid":         {"0d5e6a38-93fc-4c3e-9c1f-6a0e3f7f2a01", "0d5e6a38-93fc-4c3e-9c1f-6a0e3f7f2a02"},
	"uuid3":        {"a987fbc9-4bed-3078-8f07-9141ba07c9f3", "a987fbc9-4bed-3078-8f07-9141ba07c9f4"},
	"uuid4":        {"0d5e6a38-93fc-4c3e-9c1f-6a0e3f7f2a01", "0d5e6a38-93fc-4c3e-9c1f-6a0e3f7f2a02"},
	"uuid5":        {"a987fbc9-4bed-5078-8f07-9141ba07c9f3", "a987fbc9-4bed-5078-8f07-9141ba07c9f4"},
	"byte":         {"YQ==", "Yg=="},
	"password":     {"a", "b"},
	"bsonobjectid": {"5f1d7b2c9a1e4b3c2d1e0f0a", "5f1d7b2c9a1e4b3c2d1e0f0b"},
}

// stringValues lists the values a string schema may take, the first the
// minimal one: its enum, its format's values, or the candidates its
// pattern and length bounds match.
func stringValues(s *structuralschema.Structural) []string {
	vv := s.ValueValidation
	if vv != nil && len(vv.Enum) > 0 {
		var out []string
		for _, e := range vv.Enum {
			if str, ok := e.Object.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	cands := stringCandidates
	if vv != nil {
		if f, ok := formatCandidates[vv.Format]; ok {
			cands = f
		}
	}
	var re *regexp.Regexp
	if vv != nil && vv.Pattern != "" {
		var err error
		if re, err = regexp.Compile(vv.Pattern); err != nil {
			return nil
		}
	}
	var out []string
	for _, c := range cands {
		if vv != nil && vv.MinLength != nil && int64(len(c)) < *vv.MinLength {
			c += strings.Repeat("a", int(*vv.MinLength)-len(c))
		}
		if vv != nil && vv.MaxLength != nil && int64(len(c)) > *vv.MaxLength {
			continue
		}
		if re != nil && !re.MatchString(c) {
			continue
		}
		if !contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// numbers lists two values of an integer or number schema.
func numbers(s *structuralschema.Structural) []interface{} {
	vv := s.ValueValidation
	if vv != nil && len(vv.Enum) > 0 {
		var out []interface{}
		for _, e := range vv.Enum {
			out = append(out, e.Object)
		}
		return out
	}
	lo := int64(0)
	if vv != nil && vv.Minimum != nil {
		lo = int64(*vv.Minimum)
		if float64(lo) < *vv.Minimum || vv.ExclusiveMinimum {
			lo++
		}
	}
	if vv != nil && vv.MultipleOf != nil && *vv.MultipleOf >= 1 {
		m := int64(*vv.MultipleOf)
		if lo%m != 0 {
			lo += m - lo%m
		}
		return []interface{}{lo, lo + m}
	}
	return []interface{}{lo, lo + 1}
}

// minimal is the smallest value of s the generator knows: required
// properties filled, minItems items, the first of the values of a
// scalar; an error when it knows none.
func minimal(s *structuralschema.Structural) (interface{}, error) {
	if s.Default.Object != nil {
		return s.Default.Object, nil
	}
	if s.XIntOrString {
		return int64(1), nil
	}
	vv := s.ValueValidation
	if vv != nil && len(vv.Enum) > 0 {
		return vv.Enum[0].Object, nil
	}
	switch s.Type {
	case "string":
		vs := stringValues(s)
		if len(vs) == 0 {
			return nil, fmt.Errorf("no value known to match the string's pattern %q or format %q", pattern(s), format(s))
		}
		return vs[0], nil
	case "integer", "number":
		return numbers(s)[0], nil
	case "boolean":
		return false, nil
	case "array":
		n := int64(0)
		if vv != nil && vv.MinItems != nil {
			n = *vv.MinItems
		}
		out := []interface{}{}
		for i := int64(0); i < n; i++ {
			if s.Items == nil {
				return nil, fmt.Errorf("an array without items needs %d of them", n)
			}
			v, err := minimal(s.Items)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				if v, err = alternate(s.Items, v, int(i)); err != nil {
					return nil, err
				}
			}
			out = append(out, v)
		}
		return out, nil
	case "object", "":
		out := map[string]interface{}{}
		if vv == nil {
			return out, nil
		}
		for _, name := range required(vv) {
			p, ok := s.Properties[name]
			if !ok {
				if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
					p = *s.AdditionalProperties.Structural
				} else {
					return nil, fmt.Errorf("required property %q has no schema", name)
				}
			}
			v, err := minimal(&p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out[name] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("no value known of type %q", s.Type)
}

func pattern(s *structuralschema.Structural) string {
	if s.ValueValidation == nil {
		return ""
	}
	return s.ValueValidation.Pattern
}

func format(s *structuralschema.Structural) string {
	if s.ValueValidation == nil {
		return ""
	}
	return s.ValueValidation.Format
}

// alternate is a value of s other than v: the n-th other one the
// generator knows (n >= 1).
func alternate(s *structuralschema.Structural, v interface{}, n int) (interface{}, error) {
	if s.XIntOrString {
		i, _ := v.(int64)
		return i + int64(n), nil
	}
	vv := s.ValueValidation
	switch {
	case s.Type == "string" || (vv != nil && len(vv.Enum) > 0 && isString(vv.Enum[0].Object)):
		var others []string
		for _, c := range stringValues(s) {
			if c != v {
				others = append(others, c)
			}
		}
		if len(others) < n {
			return nil, fmt.Errorf("no other value known to match the string's enum, pattern %q or format %q", pattern(s), format(s))
		}
		return others[n-1], nil
	case s.Type == "integer" || s.Type == "number":
		var others []interface{}
		for _, c := range numbers(s) {
			if fmt.Sprint(c) != fmt.Sprint(v) {
				others = append(others, c)
			}
		}
		if len(others) >= n {
			return others[n-1], nil
		}
		if vv == nil || len(vv.Enum) == 0 {
			i, _ := v.(int64)
			return i + int64(n), nil
		}
		return nil, fmt.Errorf("the number's enum has no other value")
	case s.Type == "boolean":
		b, _ := v.(bool)
		return !b, nil
	case s.Type == "array":
		return alternateArray(s, v, n)
	case s.Type == "object":
		return alternateObject(s, v, n)
	}
	return nil, fmt.Errorf("no other value known of type %q", s.Type)
}

func isString(v interface{}) bool { _, ok := v.(string); return ok }

func alternateArray(s *structuralschema.Structural, v interface{}, n int) (interface{}, error) {
	list, _ := v.([]interface{})
	if s.Items == nil {
		return nil, fmt.Errorf("an array without items")
	}
	out := append([]interface{}(nil), list...)
	if len(list) > 0 {
		x, err := alternate(s.Items, list[0], n)
		if err != nil {
			return nil, err
		}
		out[0] = x
		return out, nil
	}
	x, err := minimal(s.Items)
	if err != nil {
		return nil, err
	}
	return append(out, x), nil
}

// alternateObject changes the first property it can: a present one
// changed, else an absent one added.
func alternateObject(s *structuralschema.Structural, v interface{}, n int) (interface{}, error) {
	obj, _ := v.(map[string]interface{})
	out := make(map[string]interface{}, len(obj)+1)
	for k, x := range obj {
		out[k] = x
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := s.Properties[k]
		if x, ok := obj[k]; ok {
			if y, err := alternate(&p, x, n); err == nil {
				out[k] = y
				return out, nil
			}
		}
	}
	for _, k := range names {
		p := s.Properties[k]
		if _, ok := obj[k]; !ok && k != "metadata" {
			if y, err := minimal(&p); err == nil {
				out[k] = y
				return out, nil
			}
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		if y, err := minimal(s.AdditionalProperties.Structural); err == nil {
			out[fmt.Sprintf("k%d", n)] = y
			return out, nil
		}
	}
	return nil, fmt.Errorf("no other value known of the object")
}

// required are the properties an object must have: its own required ones,
// and those of the first alternative of oneOf and anyOf (a reference with
// a name or an external name, say).
func required(vv *structuralschema.ValueValidation) []string {
	out := append([]string(nil), vv.Required...)
	for _, alts := range [][]structuralschema.NestedValueValidation{vv.OneOf, vv.AnyOf} {
		if len(alts) > 0 {
			for _, name := range alts[0].Required {
				if !contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	return out
}
