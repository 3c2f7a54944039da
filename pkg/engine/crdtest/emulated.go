package crdtest

import (
	"strings"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
)

// The server refuses by a marker only through the rule lower-mutability
// writes for it, at the node the rule is placed on (the nearest one the
// server correlates between the old and the new object) and once per
// rule, however many items the marker refuses. The emulation refuses at
// the marked field, item by item: placeErrors names its refusals as the
// server would, so that both modes give one verdict.

// addPlacement keeps where the rules of a lowered CRD are placed.
func (x *ruleIndex) addPlacement(res *lower.Result) {
	if x.placed == nil {
		x.placed = map[string][]lower.Rule{}
	}
	meta, _ := res.Object["metadata"].(map[string]interface{})
	name, _ := meta["name"].(string)
	for _, r := range res.Rules {
		k := name + "\x00" + r.Version
		x.placed[k] = append(x.placed[k], r)
	}
}

// placeErrors puts each of the emulation's refusals of an object of ref's
// kind at its rule's node, and keeps one error per rule.
func (x *ruleIndex) placeErrors(ref document.ObjectRef, errs []Error) []Error {
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return errs
	}
	cr, ok := x.crds[runtimeschema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return errs
	}
	crd, version := cr.name, gv.Version
	var out []Error
	seen := map[string]bool{}
	for _, e := range errs {
		if e.Rule != "" {
			if r, ok := x.placement(crd, version, e.Rule, generic(cr.schemas[version], e.Field)); ok {
				e.Text = markerText(e.Field, r, e.value)
				e.Field = placedField(e.Field, r)
			}
		}
		k := e.Field + "\x00" + e.Type + "\x00" + e.Rule
		if e.Rule != "" && seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return out
}

// placement is the one rule lowered from the marker at field.
func (x *ruleIndex) placement(crd, version, marker, field string) (lower.Rule, bool) {
	var found []lower.Rule
	for _, r := range x.placed[crd+"\x00"+version] {
		if r.Marker == marker && strings.TrimPrefix(r.Field, ".") == field {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		return lower.Rule{}, false
	}
	return found[0], true
}

// placedField is the field of the server's error for rule r refusing at
// field: field cut to the depth of r's node, and r's fieldPath below it;
// "<nil>" for the root, as the server names it.
func placedField(field string, r lower.Rule) string {
	tokens := fieldTokens(field)
	depth := nodeDepth(r)
	if depth > len(tokens) {
		return field
	}
	placed := strings.Join(tokens[:depth], "")
	placed = strings.TrimPrefix(withFieldPath(placed, r.FieldPath), ".")
	if placed == "" {
		return "<nil>"
	}
	return placed
}

// markerText is the server's text of its refusal by r, the rule lowered
// from a marker that refuses at field, value there: as the server's CEL
// validation words it, the value of r's node, or nothing of an object's
// or a list's (field.OmitValueType).
func markerText(at string, r lower.Rule, value interface{}) string {
	switch value.(type) {
	case map[string]interface{}, []interface{}:
		value = field.OmitValueType{}
	}
	if nodeDepth(r) != len(fieldTokens(at)) {
		value = field.OmitValueType{} // an object above the field
	}
	e := &field.Error{Type: field.ErrorTypeInvalid, Field: placedField(at, r), BadValue: value, Detail: r.Message}
	return e.Error()
}

// nodeDepth is how deep in the custom resources r's node is: the
// properties, items and additionalProperties above it in the schema.
func nodeDepth(r lower.Rule) int {
	depth := 0
	inSchema := false
	for i := 0; i < len(r.Schema); i++ {
		switch s := r.Schema[i]; {
		case s.Key == "openAPIV3Schema" && !inSchema:
			inSchema = true
		case !inSchema:
		case s.Key == "properties":
			depth++
			i++
		case s.Key == "items" || s.Key == "additionalProperties":
			depth++
		}
	}
	return depth
}

// fieldTokens splits a field in the server's format into its steps, each
// as written: "spec", ".ports", "[0]".
func fieldTokens(field string) []string {
	var out []string
	for field != "" {
		end := strings.IndexAny(field[1:], ".[")
		if field[0] == '[' {
			end = strings.IndexByte(field, ']')
		}
		if end < 0 {
			out = append(out, field)
			break
		}
		end++
		out = append(out, field[:end])
		field = field[end:]
	}
	return out
}
