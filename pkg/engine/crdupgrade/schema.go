package crdupgrade

import (
	"encoding/json"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// walker compares the schemas of one version, old and new node by node.
type walker struct {
	c       *comparison
	version string
	// loss is the severity of what the new schema prunes in this version:
	// DataLoss where objects are stored in it, Breaking where it is only
	// served, Info where it is neither.
	loss Severity
}

func (w *walker) add(ch Change) {
	ch.Version = w.version
	w.c.add(ch)
}

func child(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// props compares the nodes old and new at path (of the objects).
func (w *walker) props(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	if o == nil || n == nil {
		return
	}
	if !w.types(path, o, n) {
		// A new type: what was below is not compared with what is now.
		return
	}
	if o.Nullable && !n.Nullable {
		w.add(Change{Kind: NullableRemoved, Severity: Warning, Path: path, Keyword: "nullable", Old: true, New: false})
	}
	if preserves(o) && !preserves(n) {
		w.add(Change{Kind: PreserveUnknownRemoved, Severity: w.loss, Path: path, Keyword: "x-kubernetes-preserve-unknown-fields", Old: true, New: nil})
	}
	w.enum(path, o, n)
	w.strings(path, o, n)
	w.bounds(path, o, n)
	w.required(path, o, n)
	w.rules(path, o, n)
	w.lists(path, o, n)
	w.defaults(path, o, n)

	for _, k := range sortedKeys(o.Properties) {
		op := o.Properties[k]
		np, ok := n.Properties[k]
		if !ok {
			w.removed(path, k, n)
			continue
		}
		w.props(child(path, k), &op, &np)
	}
	for _, k := range sortedKeys(n.Properties) {
		if _, ok := o.Properties[k]; !ok {
			np := n.Properties[k]
			w.addedDefaults(child(path, k), &np)
		}
	}
	if o.Items != nil && n.Items != nil && o.Items.Schema != nil && n.Items.Schema != nil {
		w.props(path+"[*]", o.Items.Schema, n.Items.Schema)
	}
	if o.AdditionalProperties != nil && n.AdditionalProperties != nil && o.AdditionalProperties.Schema != nil && n.AdditionalProperties.Schema != nil {
		w.props(path+"[*]", o.AdditionalProperties.Schema, n.AdditionalProperties.Schema)
	}
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// removed is property k of the node at path, no longer in the new node n.
func (w *walker) removed(path, k string, n *apiextensionsv1.JSONSchemaProps) {
	p := child(path, k)
	if path == "" && (k == "metadata" || k == "apiVersion" || k == "kind") {
		// The server keeps them whatever the schema says.
		return
	}
	switch {
	case preserves(n):
		// The field is kept as an unknown field.
		w.add(Change{Kind: FieldRemoved, Severity: Info, Path: p, Keyword: "x-kubernetes-preserve-unknown-fields"})
	case n.AdditionalProperties != nil && (n.AdditionalProperties.Allows || n.AdditionalProperties.Schema != nil):
		// The field is kept as an entry of the map, validated as one.
		w.add(Change{Kind: FieldRemoved, Severity: Warning, Path: p, Keyword: "additionalProperties"})
	default:
		w.add(Change{Kind: FieldRemoved, Severity: w.loss, Path: p})
	}
}

// types compares the types; false when the new node is of another type.
func (w *walker) types(path string, o, n *apiextensionsv1.JSONSchemaProps) bool {
	if o.XIntOrString && !n.XIntOrString {
		w.add(Change{Kind: TypeChanged, Severity: Invalid, Path: path, Keyword: "x-kubernetes-int-or-string", Old: true, New: n.Type})
		return false
	}
	if o.Type == n.Type || n.XIntOrString && (o.Type == "integer" || o.Type == "string") {
		return true
	}
	if o.Type == "integer" && n.Type == "number" {
		// Every integer is a number.
		w.add(Change{Kind: TypeChanged, Severity: Info, Path: path, Keyword: "type", Old: o.Type, New: n.Type})
		return true
	}
	w.add(Change{Kind: TypeChanged, Severity: Invalid, Path: path, Keyword: "type", Old: o.Type, New: n.Type})
	return false
}

func (w *walker) enum(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	ov, nv := jsonValues(o.Enum), jsonValues(n.Enum)
	switch {
	case len(ov) == 0 && len(nv) == 0:
		return
	case len(ov) == 0:
		w.add(Change{Kind: EnumTightened, Severity: Invalid, Path: path, Keyword: "enum", New: decodeAll(nv)})
		return
	case len(nv) == 0:
		w.add(Change{Kind: EnumLoosened, Severity: Info, Path: path, Keyword: "enum", Old: decodeAll(ov)})
		return
	}
	if gone := missing(ov, nv); len(gone) > 0 {
		w.add(Change{Kind: EnumTightened, Severity: Invalid, Path: path, Keyword: "enum", Old: decodeAll(gone)})
	}
	if added := missing(nv, ov); len(added) > 0 {
		w.add(Change{Kind: EnumLoosened, Severity: Info, Path: path, Keyword: "enum", New: decodeAll(added)})
	}
}

// strings compares pattern and format: a new or other one may refuse
// values the old one took (whether it does is for the objects to say).
func (w *walker) strings(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	for _, kw := range []struct {
		kind     Kind
		key      string
		old, new string
	}{
		{PatternChanged, "pattern", o.Pattern, n.Pattern},
		{FormatChanged, "format", o.Format, n.Format},
	} {
		if kw.old == kw.new {
			continue
		}
		sev := Invalid
		if kw.new == "" {
			sev = Info
		}
		w.add(Change{Kind: kw.kind, Severity: sev, Path: path, Keyword: kw.key, Old: nilIfEmpty(kw.old), New: nilIfEmpty(kw.new)})
	}
}

func nilIfEmpty(s string) interface{} {
	if s == "" {
		return nil
	}
	return s
}

func (w *walker) bound(path, key string, tighter bool, old, new interface{}) {
	kind, sev := BoundLoosened, Info
	if tighter {
		kind, sev = BoundTightened, Invalid
	}
	w.add(Change{Kind: kind, Severity: sev, Path: path, Keyword: key, Old: old, New: new})
}

// bound compares one bound: a new one is tighter, a removed one looser;
// with upper, a lower value is tighter.
func bound[T int64 | float64](w *walker, path, key string, old, new *T, upper bool) {
	switch {
	case old == nil && new == nil:
	case new == nil:
		w.bound(path, key, false, *old, nil)
	case old == nil:
		w.bound(path, key, true, nil, *new)
	case *old != *new:
		w.bound(path, key, (*new < *old) == upper, *old, *new)
	}
}

// bounds compares the bounds: a new bound, or one that lets fewer values
// through, is tighter.
func (w *walker) bounds(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	// upper: a lower value is tighter.
	bound(w, path, "maximum", o.Maximum, n.Maximum, true)
	bound(w, path, "minimum", o.Minimum, n.Minimum, false)
	if o.ExclusiveMaximum != n.ExclusiveMaximum && n.Maximum != nil {
		w.bound(path, "exclusiveMaximum", n.ExclusiveMaximum, o.ExclusiveMaximum, n.ExclusiveMaximum)
	}
	if o.ExclusiveMinimum != n.ExclusiveMinimum && n.Minimum != nil {
		w.bound(path, "exclusiveMinimum", n.ExclusiveMinimum, o.ExclusiveMinimum, n.ExclusiveMinimum)
	}
	bound(w, path, "maxLength", o.MaxLength, n.MaxLength, true)
	bound(w, path, "minLength", o.MinLength, n.MinLength, false)
	bound(w, path, "maxItems", o.MaxItems, n.MaxItems, true)
	bound(w, path, "minItems", o.MinItems, n.MinItems, false)
	bound(w, path, "maxProperties", o.MaxProperties, n.MaxProperties, true)
	bound(w, path, "minProperties", o.MinProperties, n.MinProperties, false)
	switch {
	case o.MultipleOf == nil && n.MultipleOf != nil:
		w.bound(path, "multipleOf", true, nil, *n.MultipleOf)
	case o.MultipleOf != nil && n.MultipleOf == nil:
		w.bound(path, "multipleOf", false, *o.MultipleOf, nil)
	case o.MultipleOf != nil && *o.MultipleOf != *n.MultipleOf:
		// Looser only when the old step is a multiple of the new one; that
		// is arithmetic on floats the validator does its own way.
		w.bound(path, "multipleOf", true, *o.MultipleOf, *n.MultipleOf)
	}
	if o.UniqueItems != n.UniqueItems {
		w.bound(path, "uniqueItems", n.UniqueItems, o.UniqueItems, n.UniqueItems)
	}
}

// required lists the fields the new node requires that the old did not.
// A required field with a default is filled when objects are read, so
// existing objects do not lack it.
func (w *walker) required(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	for _, r := range missing(n.Required, o.Required) {
		sev := Invalid
		if p, ok := n.Properties[r]; ok && p.Default != nil {
			sev = Warning
		}
		w.add(Change{Kind: RequiredAdded, Severity: sev, Path: child(path, r), Keyword: "required"})
	}
}

// rules compares the x-kubernetes-validations by their rule text. A rule
// that reads oldSelf is a transition rule: it restricts changes, not the
// existing objects.
func (w *walker) rules(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	oldRules, newRules := map[string]bool{}, map[string]bool{}
	for _, r := range o.XValidations {
		oldRules[r.Rule] = true
	}
	for _, r := range n.XValidations {
		newRules[r.Rule] = true
		if oldRules[r.Rule] {
			continue
		}
		if strings.Contains(r.Rule, "oldSelf") {
			w.add(Change{Kind: ImmutableAdded, Severity: Warning, Path: path, Keyword: "x-kubernetes-validations", New: r.Rule})
			continue
		}
		w.add(Change{Kind: RuleAdded, Severity: Invalid, Path: path, Keyword: "x-kubernetes-validations", New: r.Rule})
	}
	for _, r := range o.XValidations {
		if !newRules[r.Rule] {
			w.add(Change{Kind: RuleRemoved, Severity: Info, Path: path, Keyword: "x-kubernetes-validations", Old: r.Rule})
		}
	}
}

// lists compares list types, map keys and map types: what server-side apply
// merges by, and (set, map) what the server requires unique.
func (w *walker) lists(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	if n.Type == "array" {
		ot, nt := listType(o), listType(n)
		if ot != nt {
			sev := Warning
			if ot == "atomic" {
				// Duplicates, which atomic lists may hold, are now refused.
				sev = Invalid
			}
			w.add(Change{Kind: ListTypeChanged, Severity: sev, Path: path, Keyword: "x-kubernetes-list-type", Old: ot, New: nt})
		}
		if ot == "map" && nt == "map" && !equalStrings(o.XListMapKeys, n.XListMapKeys) {
			w.add(Change{Kind: MapKeysChanged, Severity: Invalid, Path: path, Keyword: "x-kubernetes-list-map-keys", Old: o.XListMapKeys, New: n.XListMapKeys})
		}
	}
	if om, nm := mapType(o), mapType(n); om != nm {
		w.add(Change{Kind: MapTypeChanged, Severity: Warning, Path: path, Keyword: "x-kubernetes-map-type", Old: om, New: nm})
	}
}

func listType(s *apiextensionsv1.JSONSchemaProps) string {
	if s.XListType == nil || *s.XListType == "" {
		return "atomic"
	}
	return *s.XListType
}

func mapType(s *apiextensionsv1.JSONSchemaProps) string {
	if s.XMapType == nil || *s.XMapType == "" {
		return "granular"
	}
	return *s.XMapType
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// defaults compares defaults. The server defaults objects when it reads
// them from etcd too: a new or other default changes what existing objects
// without the field read as.
func (w *walker) defaults(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	ov, nv := jsonValue(o.Default), jsonValue(n.Default)
	switch {
	case ov == "" && nv == "":
	case ov == "":
		w.add(Change{Kind: DefaultAdded, Severity: Warning, Path: path, Keyword: "default", New: decode(nv)})
	case nv == "":
		w.add(Change{Kind: DefaultRemoved, Severity: Info, Path: path, Keyword: "default", Old: decode(ov)})
	case ov != nv:
		w.add(Change{Kind: DefaultChanged, Severity: Warning, Path: path, Keyword: "default", Old: decode(ov), New: decode(nv)})
	}
}

// addedDefaults are the defaults of a new field: existing objects read as
// having it, and what its default creates, with their defaults in turn.
func (w *walker) addedDefaults(path string, n *apiextensionsv1.JSONSchemaProps) {
	if n.Default == nil {
		return
	}
	w.add(Change{Kind: DefaultAdded, Severity: Warning, Path: path, Keyword: "default", New: decode(jsonValue(n.Default))})
	for _, k := range sortedKeys(n.Properties) {
		p := n.Properties[k]
		w.addedDefaults(child(path, k), &p)
	}
}

// markers compares the mutability markers (which the server drops: they
// are read from the documents as written).
func (w *walker) markers(path string, o, n *update.Schema) {
	if n == nil {
		return
	}
	var om, okm update.Mutability
	if o != nil {
		om, okm = o.Mutability, o.KeyMutability
	}
	if n.Mutability != update.Mutable && n.Mutability != om {
		w.add(Change{Kind: ImmutableAdded, Severity: Warning, Path: path, Keyword: update.MutabilityExtension, Old: nilIfEmpty(string(om)), New: string(n.Mutability)})
	}
	if n.KeyMutability != update.Mutable && n.KeyMutability != okm {
		w.add(Change{Kind: ImmutableAdded, Severity: Warning, Path: path, Keyword: update.KeyMutabilityExtension, Old: nilIfEmpty(string(okm)), New: string(n.KeyMutability)})
	}
	var op, oi, oa *update.Schema
	var oprops map[string]*update.Schema
	if o != nil {
		oprops, oi, oa = o.Properties, o.Items, o.AdditionalProperties
	}
	for _, k := range sortedSchemaKeys(n.Properties) {
		op = oprops[k]
		w.markers(child(path, k), op, n.Properties[k])
	}
	if n.Items != nil {
		w.markers(path+"[*]", oi, n.Items)
	}
	if n.AdditionalProperties != nil {
		w.markers(path+"[*]", oa, n.AdditionalProperties)
	}
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedSchemaKeys(m map[string]*update.Schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// jsonValue is v as canonical JSON (object keys sorted; "" when absent),
// to compare values.
func jsonValue(v *apiextensionsv1.JSON) string {
	if v == nil || len(v.Raw) == 0 {
		return ""
	}
	var x interface{}
	if err := json.Unmarshal(v.Raw, &x); err != nil {
		return string(v.Raw)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return string(v.Raw)
	}
	return string(b)
}

func jsonValues(vs []apiextensionsv1.JSON) []string {
	out := make([]string, 0, len(vs))
	for i := range vs {
		out = append(out, jsonValue(&vs[i]))
	}
	return out
}

func decode(s string) interface{} {
	var v interface{}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return v
}

func decodeAll(ss []string) []interface{} {
	out := make([]interface{}, 0, len(ss))
	for _, s := range ss {
		out = append(out, decode(s))
	}
	return out
}
