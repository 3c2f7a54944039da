// Package lower turns the markers of KEP "Immutable fields"
// (x-kubernetes-mutability, x-kubernetes-key-mutability), which the API
// server drops, into x-kubernetes-validations transition rules, which it
// enforces, with the semantics kubectl crd's emulation gives the markers
// (docs/mutability.md).
//
// A transition rule runs only where its node exists in both the old and the
// new object, so a rule on the marked field itself would let the field, or
// its optional parent, be removed and set again. Each rule is therefore
// placed on the nearest node that the server correlates between the old
// and the new object and that exists on both sides whenever the marker has
// something to say: the root of the schema, or an item of a list-type map
// or a value of a map (matched by key, as the emulation matches them).
// From there, the rule follows the path down to the marked field with
// has() guards, so that adding and removing are seen too.
package lower

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// ValidationsExtension is where the rules go.
const ValidationsExtension = "x-kubernetes-validations"

// MinServerVersion is the oldest Kubernetes version whose API server accepts
// every rule this package writes: two-variable comprehensions (items of
// atomic lists matched by index, lists compared in order) are in the CEL
// environment of new CRDs from 1.33 (introduced in 1.32, usable one release
// later). The transition rules themselves are GA since 1.29.
const MinServerVersion = "1.33"

// Rule is one x-kubernetes-validations entry made from one marker.
type Rule struct {
	// Schema is the path, in the CRD document, of the schema node that holds
	// the rule.
	Schema fieldpath.Path `json:"schema"`
	// Marked is the path, in the CRD document, of the node with the marker.
	Marked fieldpath.Path `json:"marked"`
	// Version is the CRD version whose schema it is ("" for the shared
	// spec.validation of apiextensions.k8s.io/v1beta1).
	Version string `json:"version,omitempty"`
	// Field names the marked field in the custom resources, with [*] for
	// every item of a list or value of a map: spec.ports[*].port.
	Field string `json:"field"`
	// Marker is the marker and its value: "x-kubernetes-mutability: Immutable".
	Marker string `json:"marker"`

	Rule      string `json:"rule"`
	Message   string `json:"message"`
	FieldPath string `json:"fieldPath,omitempty"`
}

// MarkerPath is the path of the marker itself in the CRD document: where
// errors about the rule point.
func (r Rule) MarkerPath() fieldpath.Path {
	ext, _, _ := strings.Cut(r.Marker, ":")
	return r.Marked.Child(fieldpath.Key(ext))
}

// entry is an x-kubernetes-validations entry written in the order people
// read it: rule, message, fieldPath (a map would sort its keys).
type entry struct {
	Rule      string `json:"rule" yaml:"rule"`
	Message   string `json:"message" yaml:"message"`
	FieldPath string `json:"fieldPath,omitempty" yaml:"fieldPath,omitempty"`
}

// validation is the rule as an x-kubernetes-validations entry.
func (r Rule) validation() map[string]interface{} {
	v := map[string]interface{}{"rule": r.Rule, "message": r.Message}
	if r.FieldPath != "" {
		v["fieldPath"] = r.FieldPath
	}
	return v
}

// Result is a lowered CRD.
type Result struct {
	// Object is the CRD with the markers removed and the rules added.
	Object map[string]interface{}
	// Edits turn the CRD as written into Object: markers removed, the
	// x-kubernetes-validations of a node set (existing rules first).
	Edits []document.Edit
	// Rules are the rules added, in schema order.
	Rules []Rule
	// Warnings are what the rules cannot say as the emulation does, in
	// schema order.
	Warnings []Warning
}

// The reasons of a Warning.
const (
	// ReasonNullable: a marked field is nullable, and the server's CEL
	// sees null as absent.
	ReasonNullable = "Nullable"
	// ReasonUnordered: a rule compares with CEL's ==, which ignores the
	// order of list-type set and map items.
	ReasonUnordered = "Unordered"
)

// Warning is something a rule cannot say as the emulation does: the
// CRD is lowered, the rule is a little weaker than the marker.
type Warning struct {
	// Reason is ReasonNullable or ReasonUnordered.
	Reason string
	// Marked is the path, in the CRD document, of the node with the marker.
	Marked fieldpath.Path
	// Field names the marked field in the custom resources.
	Field string
	// Message is what the rule cannot say, without the field.
	Message string
}

// String is the warning in words: the field, then the message.
func (w Warning) String() string { return w.Field + ": " + w.Message }

// MarkerError is a CRD whose markers break the KEP's placement rules: they
// cannot be lowered.
type MarkerError struct {
	Errs field.ErrorList
}

func (e *MarkerError) Error() string {
	return fmt.Sprintf("misplaced mutability markers, which cannot be lowered: %v", e.Errs.ToAggregate())
}

// CRD lowers the markers of every version's schema of crd, a
// CustomResourceDefinition as written (decoded from JSON or YAML). A CRD
// without markers comes back unchanged, without edits. The lowered CRD is
// checked with the server's own CRD validation, which estimates the cost of
// the rules (v, pkg/engine/strategy's Validators: the engine takes the
// server's code through an interface): a rule over its budget is a
// *CostError.
func CRD(crd map[string]interface{}, v schema.CRDValidator) (*Result, error) {
	if v == nil {
		return nil, errors.New("lowering needs the server's CRD validation to check the rules' cost")
	}
	if _, errs := update.CRDSchemas(crd); len(errs) > 0 {
		return nil, &MarkerError{Errs: errs}
	}
	out := &Result{Object: deepCopy(crd)}
	spec, _ := crd["spec"].(map[string]interface{})
	var roots []root
	if v, ok := spec["validation"].(map[string]interface{}); ok {
		if raw, ok := v["openAPIV3Schema"].(map[string]interface{}); ok {
			roots = append(roots, root{fieldpath.Path{fieldpath.Key("spec"), fieldpath.Key("validation"), fieldpath.Key("openAPIV3Schema")}, "", raw})
		}
	}
	versions, _ := spec["versions"].([]interface{})
	for i, v := range versions {
		v, _ := v.(map[string]interface{})
		name, _ := v["name"].(string)
		sch, _ := v["schema"].(map[string]interface{})
		if raw, ok := sch["openAPIV3Schema"].(map[string]interface{}); ok {
			roots = append(roots, root{fieldpath.Path{fieldpath.Key("spec"), fieldpath.Key("versions"), fieldpath.Index(i), fieldpath.Key("schema"), fieldpath.Key("openAPIV3Schema")}, name, raw})
		}
	}

	for _, r := range roots {
		s, _ := update.ParseSchema(r.raw, nil)
		l := &lowering{version: r.version}
		if err := l.node(l.anchor(anchorAt(r.path, "")), r.raw, s, r.path, "", nil); err != nil {
			return nil, err
		}
		// Rules go after the existing ones, once: a rule already there (the
		// markers were lowered before) is not added again.
		out.Warnings = append(out.Warnings, l.warnings...)
		for _, a := range l.anchors {
			node := nodeAt(out.Object, a.path)
			existing, _ := node[ValidationsExtension].([]interface{})
			list := append([]interface{}(nil), existing...)
			written := append([]interface{}(nil), existing...)
			for _, rule := range a.rules {
				if hasRule(existing, rule.Rule) {
					continue
				}
				list = append(list, rule.validation())
				written = append(written, entry{rule.Rule, rule.Message, rule.FieldPath})
				out.Rules = append(out.Rules, rule)
			}
			if len(list) > len(existing) {
				node[ValidationsExtension] = list
				out.Edits = append(out.Edits, document.Edit{Path: a.path.Child(fieldpath.Key(ValidationsExtension)), Value: written})
			}
		}
		removeMarkers(r.raw, slices.Clip(r.path), func(p fieldpath.Path) { // clipped: the walk appends to it
			out.Edits = append(out.Edits, document.Edit{Path: p, Remove: true})
			parent := nodeAt(out.Object, p[:len(p)-1])
			delete(parent, p[len(p)-1].Key)
		})
	}
	if len(out.Edits) == 0 {
		return out, nil
	}
	if err := checkCost(crd, out, v); err != nil {
		return nil, err
	}
	return out, nil
}

type root struct {
	path    fieldpath.Path
	version string
	raw     map[string]interface{}
}

func hasRule(list []interface{}, rule string) bool {
	for _, v := range list {
		if m, ok := v.(map[string]interface{}); ok && m["rule"] == rule {
			return true
		}
	}
	return false
}

// anchor is a schema node that holds rules: the root, an item of a
// list-type map or a value of a map, where the server correlates the old
// object with the new one.
type anchor struct {
	path  fieldpath.Path // in the CRD document
	field string         // in the custom resource
	rules []Rule
}

func anchorAt(path fieldpath.Path, field string) *anchor {
	return &anchor{path: path, field: field}
}

type lowering struct {
	version  string
	warnings []Warning
	anchors  []*anchor
	// byPath finds the anchor of a schema node: the first one seen.
	seen map[string]*anchor
}

func (l *lowering) anchor(a *anchor) *anchor {
	if l.seen == nil {
		l.seen = map[string]*anchor{}
	}
	key := a.path.String()
	if prev, ok := l.seen[key]; ok {
		return prev
	}
	l.seen[key] = a
	l.anchors = append(l.anchors, a)
	return a
}

// stepKind is how a rule walks from its anchor down one level.
type stepKind int

const (
	stepProperty    stepKind = iota // an object's field
	stepIndex                       // the items of an atomic list, by index
	stepMapValue                    // the values of a map, by key (where the server does not correlate them)
	stepListMapItem                 // the items of a list-type map, by key (likewise)
)

type step struct {
	kind stepKind
	name string         // of a property
	list *update.Schema // of a list-type map: its keys
}

// node lowers the markers at and below s, whose rules go to a (steps lead
// from a to s). field names s in the custom resource.
func (l *lowering) node(a *anchor, raw map[string]interface{}, s *update.Schema, path fieldpath.Path, field string, steps []step) error {
	if !s.HasMarkers() {
		return nil
	}
	correlated := true
	for _, st := range steps {
		correlated = correlated && st.kind == stepProperty
	}
	if raw["nullable"] == true && (s.Mutability != update.Mutable || s.KeyMutability != update.Mutable) {
		l.warnings = append(l.warnings, Warning{Reason: ReasonNullable, Marked: path, Field: field,
			Message: "nullable: the server's CEL sees null as absent, so the rules let it go from null to absent and back"})
	}
	if s.Mutability != update.Mutable {
		// Everything below is Immutable: one strict comparison decides, and
		// markers below have nothing to add.
		return l.rule(a, s, path, field, steps, update.MutabilityExtension, s.Mutability)
	}
	if s.KeyMutability != update.Mutable {
		if err := l.rule(a, s, path, field, steps, update.KeyMutabilityExtension, s.KeyMutability); err != nil {
			return err
		}
	}
	switch {
	case s.Type == "array" || s.Items != nil:
		if s.ListType == "set" || s.Items == nil {
			return nil // in a set, equal keys are equal values
		}
		items, _ := raw["items"].(map[string]interface{})
		p := path.Child(fieldpath.Key("items"))
		switch {
		case s.ListType == "map" && correlated:
			return l.node(l.anchor(anchorAt(p, field+"[*]")), items, s.Items, p, field+"[*]", nil)
		case s.ListType == "map":
			return l.node(a, items, s.Items, p, field+"[*]", append(clip(steps), step{kind: stepListMapItem, list: s}))
		default:
			return l.node(a, items, s.Items, p, field+"[*]", append(clip(steps), step{kind: stepIndex}))
		}
	case s.AdditionalProperties != nil && len(s.Properties) == 0:
		values, _ := raw["additionalProperties"].(map[string]interface{})
		p := path.Child(fieldpath.Key("additionalProperties"))
		if correlated {
			return l.node(l.anchor(anchorAt(p, field+"[*]")), values, s.AdditionalProperties, p, field+"[*]", nil)
		}
		return l.node(a, values, s.AdditionalProperties, p, field+"[*]", append(clip(steps), step{kind: stepMapValue}))
	default:
		props, _ := raw["properties"].(map[string]interface{})
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			child, _ := props[k].(map[string]interface{})
			f := k
			if field != "" {
				f = field + "." + k
			}
			if err := l.node(a, child, s.Properties[k], path.Child(fieldpath.Key("properties")).Child(fieldpath.Key(k)), f, append(clip(steps), step{kind: stepProperty, name: k})); err != nil {
				return err
			}
		}
	}
	return nil
}

// clip lets append copy: sibling paths must not share a backing array.
func clip(s []step) []step { return s[:len(s):len(s)] }

// rule adds the rule of one marker on s to a.
func (l *lowering) rule(a *anchor, s *update.Schema, path fieldpath.Path, field string, steps []step, ext string, m update.Mutability) error {
	v := &vars{}
	var check func(o, n side) (string, error)
	var message string
	switch ext {
	case update.MutabilityExtension:
		check = func(o, n side) (string, error) { return mutability(s, m, o, n, v) }
		message = map[update.Mutability]string{
			update.Immutable:  "cannot be added, removed or changed",
			update.AddOnly:    "cannot be removed or changed",
			update.RemoveOnly: "cannot be added or changed",
		}[m]
		if strings.HasSuffix(field, "[*]") {
			// Items come and go with their keys: the key set's business.
			message = "cannot be changed"
		}
	default:
		check = func(o, n side) (string, error) { return keyMutability(s, m, o, n, v) }
		noun := keyNoun(s)
		message = map[update.Mutability]string{
			update.Immutable:  noun + " cannot be added or removed",
			update.AddOnly:    noun + " cannot be removed",
			update.RemoveOnly: noun + " cannot be added",
		}[m]
	}
	expr, err := walk(steps, side{"oldSelf", "true"}, side{"self", "true"}, v, check)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	name := field
	if name == "" {
		name = "<root>"
	}
	if v.unordered {
		l.warnings = append(l.warnings, Warning{Reason: ReasonUnordered, Marked: path, Field: name,
			Message: "compared with CEL's ==, which ignores the order of list-type set and map items below it (an ordered comparison of a schema this large is over the server's rule length): reordering them passes"})
	}
	marker := ext + ": " + string(m)
	a.rules = append(a.rules, Rule{
		Schema: a.path, Marked: path, Version: l.version, Field: name, Marker: marker,
		Rule: expr, Message: name + ": " + marker + ": " + message, FieldPath: fieldPathOf(steps),
	})
	return nil
}

func keyNoun(s *update.Schema) string {
	switch {
	case s.Items == nil && s.Type != "array":
		return "keys"
	case s.ListType == "map":
		return "keys"
	case s.ListType == "set":
		return "items"
	}
	return "indices"
}

// simpleName is a field name a fieldPath may give as .name, compiled on
// first use.
var simpleName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// fieldPathOf is the rule's fieldPath, so that the server's error names
// the marked field rather than the anchor: only for a path of plain field
// names (the server refuses others in a fieldPath).
func fieldPathOf(steps []step) string {
	var b strings.Builder
	for _, st := range steps {
		if st.kind != stepProperty {
			return ""
		}
		if simpleName().MatchString(st.name) {
			b.WriteString("." + st.name)
		} else if !strings.ContainsAny(st.name, `'\`) {
			b.WriteString("['" + st.name + "']")
		} else {
			return ""
		}
	}
	return b.String()
}

// walk builds the condition of check at the end of steps, from the old and
// the new value at the anchor.
func walk(steps []step, o, n side, v *vars, check func(o, n side) (string, error)) (string, error) {
	if len(steps) == 0 {
		return check(o, n)
	}
	st, rest := steps[0], steps[1:]
	switch st.kind {
	case stepProperty:
		p, err := property(st.name)
		if err != nil {
			return "", err
		}
		o2 := side{o.expr + "." + p, and(o.present, "has("+o.expr+"."+p+")")}
		n2 := side{n.expr + "." + p, and(n.present, "has("+n.expr+"."+p+")")}
		return walk(rest, o2, n2, v, check)
	case stepIndex:
		i, x := v.next("i"), v.next("x")
		inner, err := walk(rest, side{o.expr + "[" + i + "]", "true"}, side{x, "true"}, v, check)
		if err != nil {
			return "", err
		}
		all := n.expr + ".all(" + i + ", " + x + ", " + or(i+" >= size("+o.expr+")", inner) + ")"
		return implies(and(o.present, n.present), all), nil
	case stepMapValue:
		k := v.next("k")
		inner, err := walk(rest, side{o.expr + "[" + k + "]", "true"}, side{n.expr + "[" + k + "]", "true"}, v, check)
		if err != nil {
			return "", err
		}
		all := n.expr + ".all(" + k + ", " + implies(k+" in "+o.expr, inner) + ")"
		return implies(and(o.present, n.present), all), nil
	default: // stepListMapItem
		x, y := v.next("x"), v.next("y")
		same, err := sameKey(st.list, x, y)
		if err != nil {
			return "", err
		}
		inner, err := walk(rest, side{y, "true"}, side{x, "true"}, v, check)
		if err != nil {
			return "", err
		}
		all := n.expr + ".all(" + x + ", " + o.expr + ".all(" + y + ", " + implies(same, inner) + "))"
		return implies(and(o.present, n.present), all), nil
	}
}

// sameKey: items x and y of a list-type map have the same key.
func sameKey(list *update.Schema, x, y string) (string, error) {
	var parts []string
	for _, k := range list.ListMapKeys {
		p, err := property(k)
		if err != nil {
			return "", err
		}
		parts = append(parts, x+"."+p+" == "+y+"."+p)
	}
	return and(parts...), nil
}

// mutability is x-kubernetes-mutability on a value: never changed; with
// Immutable never added nor removed, with AddOnly never removed, with
// RemoveOnly never added.
func mutability(s *update.Schema, m update.Mutability, o, n side, v *vars) (string, error) {
	eq, err := strictEqual(s, n.expr, o.expr, v)
	if err != nil {
		return "", err
	}
	switch m {
	case update.AddOnly:
		return implies(o.present, and(n.present, eq)), nil
	case update.RemoveOnly:
		return implies(n.present, and(o.present, eq)), nil
	}
	if o.present == "true" && n.present == "true" {
		return eq, nil
	}
	return and(paren(o.present)+" == "+paren(n.present), implies(n.present, eq)), nil
}

// keyMutability is x-kubernetes-key-mutability on a list or map: its keys
// (indices, list-map keys, set items, map keys) never added, or never
// removed, or neither. An absent list or map has no keys.
func keyMutability(s *update.Schema, m update.Mutability, o, n side, v *vars) (string, error) {
	var noAdd, noRemove string
	isMap := s.Items == nil && s.Type != "array"
	switch {
	case isMap:
		k := v.next("k")
		noAdd = implies(n.present, n.expr+".all("+k+", "+and(o.present, k+" in "+o.expr)+")")
		noRemove = implies(o.present, o.expr+".all("+k+", "+and(n.present, k+" in "+n.expr)+")")
	case s.ListType == "map":
		x, y := v.next("x"), v.next("y")
		same, err := sameKey(s, x, y)
		if err != nil {
			return "", err
		}
		noAdd = implies(n.present, n.expr+".all("+x+", "+and(o.present, o.expr+".exists("+y+", "+same+")")+")")
		noRemove = implies(o.present, o.expr+".all("+y+", "+and(n.present, n.expr+".exists("+x+", "+same+")")+")")
	case s.ListType == "set":
		x := v.next("x")
		noAdd = implies(n.present, n.expr+".all("+x+", "+and(o.present, x+" in "+o.expr)+")")
		noRemove = implies(o.present, o.expr+".all("+x+", "+and(n.present, x+" in "+n.expr)+")")
	default:
		noAdd = implies(n.present, or(and(o.present, "size("+n.expr+") <= size("+o.expr+")"), "size("+n.expr+") == 0"))
		noRemove = implies(o.present, or(and(n.present, "size("+o.expr+") <= size("+n.expr+")"), "size("+o.expr+") == 0"))
		if o.present == "true" && n.present == "true" {
			noAdd, noRemove = "size("+n.expr+") <= size("+o.expr+")", "size("+o.expr+") <= size("+n.expr+")"
			if m == update.Immutable {
				return "size(" + n.expr + ") == size(" + o.expr + ")", nil
			}
		}
	}
	switch m {
	case update.AddOnly:
		return noRemove, nil
	case update.RemoveOnly:
		return noAdd, nil
	}
	return and(noAdd, noRemove), nil
}

// removeMarkers calls remove with the path of every marker in the schema
// (a path of its own, which remove may keep). path is appended to: clip
// it when its array holds anything past its length. The path grows as the walk
// descends and shrinks on its way back: a copy per level was quadratic in
// the schema's depth (1 GB for a schema 4,000 deep).
func removeMarkers(raw map[string]interface{}, path fieldpath.Path, remove func(fieldpath.Path)) {
	update.RawWalk[fieldpath.Path]{Enter: func(parent fieldpath.Path, step update.RawStep, node map[string]interface{}) (fieldpath.Path, bool) {
		p := appendStep(parent, step)
		for _, ext := range []string{update.MutabilityExtension, update.KeyMutabilityExtension} {
			if _, ok := node[ext]; ok {
				remove(p.Child(fieldpath.Key(ext)))
			}
		}
		return p, true
	}}.Walk(raw, path)
}

// appendStep is the path of a schema node in the CRD document from its
// parent's: appended to, as removeMarkers's path is.
func appendStep(parent fieldpath.Path, step update.RawStep) fieldpath.Path {
	switch step.Key {
	case "":
		return parent
	case update.RawProperties:
		return append(parent, fieldpath.Key(update.RawProperties), fieldpath.Key(step.Name))
	}
	return append(parent, fieldpath.Key(step.Key))
}

// nodeAt is the object at p in obj (created by deepCopy, so every node on
// a schema path is a map or a list).
func nodeAt(obj map[string]interface{}, p fieldpath.Path) map[string]interface{} {
	var cur interface{} = obj
	for _, s := range p {
		if s.IsIndex {
			cur = cur.([]interface{})[s.Index]
		} else {
			cur = cur.(map[string]interface{})[s.Key]
		}
	}
	return cur.(map[string]interface{})
}

func deepCopy(obj map[string]interface{}) map[string]interface{} {
	return runtime.DeepCopyJSON(obj)
}
