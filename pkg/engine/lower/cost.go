package lower

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// CostError is a rule the API server would refuse for its estimated cost:
// the server's CRD validation estimates the worst case from the sizes the
// schema allows, and an unbounded list, map or string makes it huge.
type CostError struct {
	Rule Rule
	// Detail is the server's reason, in its words.
	Detail string
	// Bounds name what to add: "maxItems on spec.ports".
	Bounds []string
}

func (e *CostError) Error() string {
	msg := fmt.Sprintf("%s: the rule lowered from %s is over the API server's CEL cost budget (%s)", e.Rule.Field, e.Rule.Marker, e.Detail)
	if len(e.Bounds) > 0 {
		msg += ": bound the sizes it reads with " + strings.Join(e.Bounds, ", ")
	}
	return msg
}

// UnreachableError is a marker on a field the server's CEL cannot read:
// the server types CEL values from the schema, and leaves out what has no
// type (x-kubernetes-preserve-unknown-fields without a type, items without
// a schema), so a rule cannot name it.
type UnreachableError struct {
	Rule Rule
	// Detail is the server's compile error.
	Detail string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s: %s cannot be lowered: the API server's CEL cannot read the field, or a field below it, because its schema has no type (%s)",
		e.Rule.Field, e.Rule.Marker, firstLine(e.Detail))
}

func firstLine(s string) string {
	// The server's compile errors quote the rule on the lines after.
	if _, rest, ok := strings.Cut(s, "ERROR: <input>:"); ok {
		if _, msg, ok := strings.Cut(rest, ": "); ok {
			s = msg
		}
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// RefusedError is a lowered CRD the server's validation refuses for
// another reason than cost: a rule this package should not have written.
type RefusedError struct {
	Errs field.ErrorList
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the API server would refuse the lowered CustomResourceDefinition (a bug of kubectl crd, please report it): %v", e.Errs.ToAggregate())
}

// checkCost runs the server's validation of a CRD create on the lowered
// CRD: what it refuses beyond what it refuses of the CRD as written comes
// from the rules.
func checkCost(original map[string]interface{}, out *Result, v schema.CRDValidator) error {
	before, ok, err := schema.DecodeObject(original, v)
	if err != nil || !ok {
		return err
	}
	if err := before.InvalidErr(); err != nil {
		return err
	}
	after, _, err := schema.DecodeObject(out.Object, v)
	if err != nil {
		return &RefusedError{Errs: field.ErrorList{field.InternalError(nil, err)}}
	}
	var refused field.ErrorList
	var costs []*CostError
	rules := out.ruleIndex()
	for _, e := range after.Invalid() {
		r, ours := rules[e.Field]
		switch {
		case ours && e.Type == field.ErrorTypeInvalid && strings.Contains(e.Detail, "undefined field"):
			return &UnreachableError{Rule: r, Detail: e.Detail}
		case e.Type == field.ErrorTypeForbidden && strings.Contains(e.Detail, "cost") && ours:
			costs = append(costs, &CostError{Rule: r, Detail: e.Detail, Bounds: bounds(original, r)})
		case e.Type == field.ErrorTypeForbidden && strings.Contains(e.Detail, "cost"):
			// The total over the whole schema: its contributors are named apart.
		default:
			refused = append(refused, e)
		}
	}
	if len(refused) > 0 {
		return &RefusedError{Errs: refused}
	}
	if len(costs) > 0 {
		// The first in schema order; every one names the same kind of fix.
		sort.SliceStable(costs, func(i, j int) bool { return costs[i].Rule.Marked.String() < costs[j].Rule.Marked.String() })
		return costs[0]
	}
	return nil
}

// ruleIndex finds the rule an error of the server's CRD validation names
// (spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule,
// or spec.validation... where every version has the same schema).
type ruleIndex map[string]Rule

func (res *Result) ruleIndex() ruleIndex {
	out := ruleIndex{}
	positions := map[string]map[string]int{} // by anchor: rule -> its index in the list
	for _, r := range res.Rules {
		anchor := serverSchemaPath(r.Schema)
		at, ok := positions[anchor]
		if !ok {
			at = map[string]int{}
			list, _ := nodeAt(res.Object, r.Schema)[ValidationsExtension].([]interface{})
			for i, v := range list {
				if m, ok := v.(map[string]interface{}); ok {
					if rule, ok := m["rule"].(string); ok {
						at[rule] = i
					}
				}
			}
			positions[anchor] = at
		}
		path := anchor + fmt.Sprintf(".%s[%d].rule", ValidationsExtension, at[r.Rule])
		out[path] = r
		if _, rel, ok := strings.Cut(path, ".openAPIV3Schema"); ok {
			out["spec.validation.openAPIV3Schema"+rel] = r
		}
	}
	return out
}

// serverSchemaPath renders a schema path as the server's CRD validation
// does: spec.versions[0].schema.openAPIV3Schema.properties[spec].items.
func serverSchemaPath(p fieldpath.Path) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		s := p[i]
		switch {
		case s.IsIndex:
			fmt.Fprintf(&b, "[%d]", s.Index)
		case s.Key == "properties" && i+1 < len(p) && i > 0:
			fmt.Fprintf(&b, ".properties[%s]", p[i+1].Key)
			i++
		default:
			if i > 0 {
				b.WriteString(".")
			}
			b.WriteString(s.Key)
		}
	}
	return b.String()
}

// bounds names the sizes a rule reads that the schema leaves unbounded:
// the lists and maps above the marked field (the server multiplies a
// rule's cost by how many times it may run) and, below it, every list, map
// and string the rule compares.
func bounds(crd map[string]interface{}, r Rule) []string {
	var out []string
	add := func(raw map[string]interface{}, field string, strings bool) {
		switch {
		case raw["type"] == "array" && raw["maxItems"] == nil:
			out = append(out, "maxItems on "+field)
		case raw["type"] == "object" && raw["additionalProperties"] != nil && raw["properties"] == nil && raw["maxProperties"] == nil:
			out = append(out, "maxProperties on "+field)
		case strings && raw["type"] == "string" && raw["maxLength"] == nil && raw["enum"] == nil && raw["format"] == nil:
			out = append(out, "maxLength on "+field)
		}
	}
	var cur interface{} = crd
	field := ""
	var marked map[string]interface{}
	inSchema, name := false, false
	for i, s := range r.Marked {
		switch c := cur.(type) {
		case map[string]interface{}:
			cur = c[s.Key]
		case []interface{}:
			cur = c[s.Index]
		}
		raw, _ := cur.(map[string]interface{})
		switch {
		case !inSchema:
			inSchema = !s.IsIndex && s.Key == "openAPIV3Schema"
			if !inSchema || i < len(r.Marked)-1 {
				continue
			}
		case name: // the key after "properties"
			name = false
			if field != "" {
				field += "."
			}
			field += s.Key
		case s.Key == "properties":
			name = true
			continue
		default: // items, additionalProperties
			field += "[*]"
		}
		if i == len(r.Marked)-1 {
			marked = raw
			break
		}
		add(raw, field, false)
	}
	if marked == nil {
		return out
	}
	// The marked field and what is below it, as far as the rule reads it:
	// for the keys of a list or map, their items or values, not below.
	keysOnly := strings.HasPrefix(r.Marker, update.KeyMutabilityExtension)
	update.RawWalk[below]{ItemsFirst: true, Enter: func(parent below, step update.RawStep, raw map[string]interface{}) (below, bool) {
		n := below{field: parent.field, depth: parent.depth + 1}
		switch step.Key {
		case update.RawProperties:
			n.field += "." + step.Name
		case update.RawItems, update.RawAdditionalProperties:
			n.field += "[*]"
		}
		add(raw, n.field, true)
		return n, n.depth == 0 || !keysOnly
	}}.Walk(marked, below{field: field, depth: -1})
	return out
}

// below is a node under the marked field, as bounds walks it: its name in
// the custom resource, and how far below the marked field it is.
type below struct {
	field string
	depth int
}
