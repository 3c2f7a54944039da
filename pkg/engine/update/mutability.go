// Package update answers whether the API server, and the immutability rules
// of KEP "Immutable fields", would refuse an update of a custom resource.
//
// The KEP's vendor extensions x-kubernetes-mutability and
// x-kubernetes-key-mutability never shipped: the API server drops them from
// CRD schemas. This package emulates them on the client, from the CRD as
// written in its file.
package update

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Mutability is a value of x-kubernetes-mutability or x-kubernetes-key-mutability.
type Mutability string

const (
	Mutable    Mutability = "" // no marker
	Immutable  Mutability = "Immutable"
	AddOnly    Mutability = "AddOnly"
	RemoveOnly Mutability = "RemoveOnly"
)

// The vendor extensions of the KEP.
const (
	MutabilityExtension    = "x-kubernetes-mutability"
	KeyMutabilityExtension = "x-kubernetes-key-mutability"
)

// Schema is the part of a CRD version's schema the mutability rules read:
// the markers, the structure, and the list and map types that decide what a
// key is.
type Schema struct {
	Mutability    Mutability
	KeyMutability Mutability

	Type                 string
	Properties           map[string]*Schema
	AdditionalProperties *Schema // the values of a map
	Items                *Schema
	ListType             string // atomic (or ""), set, map
	ListMapKeys          []string
	MapType              string

	// markers is true when this node or one below carries a marker: the
	// check skips subtrees without any.
	markers bool
}

// ParseSchema reads the markers and the structure from a raw
// openAPIV3Schema (as decoded from JSON or YAML) and checks the KEP's
// placement rules; fldPath names the schema in the errors, which are in
// the server's format.
func ParseSchema(raw map[string]interface{}, fldPath *field.Path) (*Schema, field.ErrorList) {
	p := &parser{}
	RawWalk[parsed]{Enter: p.enter, Leave: p.leave}.Walk(raw, parsed{path: fldPath})
	return p.root, p.errs
}

type nodeKind int

const (
	nodeRoot nodeKind = iota
	nodeMetadata
	nodeField
)

// parser builds a Schema as RawWalk walks the raw one: a node's errors
// about its own markers come before its children's, those about where the
// markers are (which depend on the children) after.
type parser struct {
	root *Schema
	errs field.ErrorList
}

// parsed is a node of the schema being built.
type parsed struct {
	s    *Schema
	path *field.Path
	kind nodeKind
}

// enter reads a node and hangs it under its parent.
func (p *parser) enter(parent parsed, step RawStep, raw map[string]interface{}) (parsed, bool) {
	n := parsed{s: &Schema{}, path: parent.path, kind: nodeField}
	if parent.kind == nodeMetadata {
		n.kind = nodeMetadata // and everything below it
	}
	switch step.Key {
	case "":
		n.kind, p.root = nodeRoot, n.s
	case RawProperties:
		n.path = parent.path.Child(RawProperties).Key(step.Name)
		if parent.kind == nodeRoot && step.Name == "metadata" {
			n.kind = nodeMetadata
		}
		parent.s.Properties[step.Name] = n.s
	case RawAdditionalProperties:
		n.path = parent.path.Child(RawAdditionalProperties)
		parent.s.AdditionalProperties = n.s
	case RawItems:
		n.path = parent.path.Child(RawItems)
		parent.s.Items = n.s
	}
	p.read(n, raw)
	return n, true
}

// read reads the markers, and the types that decide what a key is, of one
// node; its properties are filled in as they are walked.
func (p *parser) read(n parsed, raw map[string]interface{}) {
	s := n.s
	s.Type, _ = raw["type"].(string)
	s.ListType, _ = raw["x-kubernetes-list-type"].(string)
	s.MapType, _ = raw["x-kubernetes-map-type"].(string)
	if keys, ok := raw["x-kubernetes-list-map-keys"].([]interface{}); ok {
		for _, k := range keys {
			if k, ok := k.(string); ok {
				s.ListMapKeys = append(s.ListMapKeys, k)
			}
		}
	}
	if _, ok := raw[RawProperties].(map[string]interface{}); ok {
		s.Properties = map[string]*Schema{}
	}
	for _, ext := range []struct {
		name string
		dst  *Mutability
	}{{MutabilityExtension, &s.Mutability}, {KeyMutabilityExtension, &s.KeyMutability}} {
		v, ok := raw[ext.name]
		if !ok {
			continue
		}
		fp := n.path.Child(ext.name)
		str, _ := v.(string)
		switch m := Mutability(str); m {
		case Immutable, AddOnly, RemoveOnly:
			*ext.dst = m
		default:
			p.errs = append(p.errs, field.NotSupported(fp, v, []string{string(Immutable), string(AddOnly), string(RemoveOnly)}))
			continue
		}
		switch n.kind {
		case nodeRoot:
			p.errs = append(p.errs, field.Forbidden(fp, "must not be set at the root of the schema"))
		case nodeMetadata:
			p.errs = append(p.errs, field.Forbidden(fp, "must not be set in metadata"))
		}
	}
}

// leave checks the markers of a node against what it is, now that its
// children are known, and notes whether it or one below has a marker.
func (p *parser) leave(n parsed) {
	s := n.s
	isCollection := s.Type == "array" || (s.Type == "object" && s.AdditionalProperties != nil && len(s.Properties) == 0)
	if s.KeyMutability != Mutable && !isCollection && n.kind == nodeField {
		p.errs = append(p.errs, field.Forbidden(n.path.Child(KeyMutabilityExtension), "only allowed for arrays and for objects with additionalProperties (maps), not for objects with properties or scalars"))
	}
	if isCollection && (s.Mutability == AddOnly || s.Mutability == RemoveOnly) && n.kind == nodeField {
		p.errs = append(p.errs, field.NotSupported(n.path.Child(MutabilityExtension), s.Mutability, []string{string(Immutable)}))
	}
	s.markers = s.Mutability != Mutable || s.KeyMutability != Mutable || s.AdditionalProperties.HasMarkers() || s.Items.HasMarkers()
	for _, child := range s.Properties {
		s.markers = s.markers || child.markers
	}
}

func sortedKeys(m map[string]interface{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// HasMarkers reports whether any node of the schema carries a marker.
func (s *Schema) HasMarkers() bool { return s != nil && s.markers }

// Violation is a change the KEP's rules forbid.
type Violation struct {
	// Path in the server's format.
	Path string
	// Rule is the marker that forbids it, e.g. "x-kubernetes-mutability: AddOnly".
	Rule string
	// Message says what changed.
	Message string
	// Old and New are the values at Path (nil where absent).
	Old, New interface{}
	// OldPresent and NewPresent tell an absent field from a null one.
	OldPresent, NewPresent bool
}

// CheckMutability compares the stored old object with the stored new one
// (both after pruning, as the server compares them) under the schema's
// markers, and returns the violations sorted by path.
func CheckMutability(s *Schema, old, new map[string]interface{}) []Violation {
	if !s.HasMarkers() {
		return nil
	}
	c := &checker{}
	c.value(nil, s, old, true, new, true)
	sort.SliceStable(c.out, func(i, j int) bool { return c.out[i].Path < c.out[j].Path })
	return c.out
}

type checker struct{ out []Violation }

func (c *checker) add(p *field.Path, rule string, msg string, old interface{}, oldOK bool, new interface{}, newOK bool) {
	c.out = append(c.out, Violation{Path: pathString(p), Rule: rule, Message: msg, Old: old, New: new, OldPresent: oldOK, NewPresent: newOK})
}

func pathString(p *field.Path) string {
	if p == nil {
		return "<root>"
	}
	return p.String()
}

// value checks one field: its own mutability, then what is below it.
func (c *checker) value(p *field.Path, s *Schema, old interface{}, oldOK bool, new interface{}, newOK bool) {
	if !s.HasMarkers() {
		return
	}
	if s.Mutability != Mutable {
		// The marker makes everything below Immutable: one strict
		// comparison of the whole value decides.
		rule := MutabilityExtension + ": " + string(s.Mutability)
		switch {
		case !oldOK && newOK:
			if s.Mutability != AddOnly {
				c.add(p, rule, "cannot be added", old, oldOK, new, newOK)
			}
		case oldOK && !newOK:
			if s.Mutability != RemoveOnly {
				c.add(p, rule, "cannot be removed", old, oldOK, new, newOK)
			}
		case oldOK && newOK && !strictEqual(old, new):
			c.add(p, rule, "cannot be changed", old, oldOK, new, newOK)
		}
		return
	}
	switch {
	case s.Type == "array" || s.Items != nil:
		oldList, _ := old.([]interface{})
		newList, _ := new.([]interface{})
		c.list(p, s, oldList, newList)
	case s.AdditionalProperties != nil && len(s.Properties) == 0:
		oldMap, _ := old.(map[string]interface{})
		newMap, _ := new.(map[string]interface{})
		c.mapEntries(p, s, oldMap, newMap)
	case len(s.Properties) > 0:
		// An absent object is an object without fields: a field whose
		// parent object is removed counts as removed.
		oldObj, _ := old.(map[string]interface{})
		newObj, _ := new.(map[string]interface{})
		for _, k := range sortedSchemaKeys(s.Properties) {
			sub := s.Properties[k]
			ov, ook := oldObj[k]
			nv, nok := newObj[k]
			c.value(p.Child(k), sub, ov, ook, nv, nok)
		}
	}
}

func sortedSchemaKeys(m map[string]*Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// keyed is a list item or map entry under its key.
type keyed struct {
	key   string // the key as rendered in paths and messages
	path  *field.Path
	value interface{}
}

// mapEntries checks a map: its key set under x-kubernetes-key-mutability,
// then each value present on both sides. Adding or removing an entry is the
// key set's business only (KEP Example 5); every map type behaves alike.
func (c *checker) mapEntries(p *field.Path, s *Schema, old, new map[string]interface{}) {
	var oldKeys, newKeys []keyed
	for _, k := range sortedMapKeys(old) {
		oldKeys = append(oldKeys, keyed{key: k, path: p.Key(k), value: old[k]})
	}
	for _, k := range sortedMapKeys(new) {
		newKeys = append(newKeys, keyed{key: k, path: p.Key(k), value: new[k]})
	}
	c.keys(p, s, oldKeys, newKeys, "key")
}

func sortedMapKeys(m map[string]interface{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// list checks an array by the keys its list type defines: the index
// (atomic or no list type), the values of x-kubernetes-list-map-keys (map),
// or the whole item (set).
func (c *checker) list(p *field.Path, s *Schema, old, new []interface{}) {
	var keyOf func(i int, item interface{}) string
	noun := "index"
	switch s.ListType {
	case "map":
		noun = "key"
		keyOf = func(i int, item interface{}) string { return mapKey(s.ListMapKeys, item) }
	case "set":
		noun = "item"
		keyOf = func(i int, item interface{}) string { return canonical(item) }
	default:
		keyOf = func(i int, item interface{}) string { return fmt.Sprint(i) }
	}
	index := func(items []interface{}) []keyed {
		out := make([]keyed, 0, len(items))
		seen := map[string]int{}
		for i, item := range items {
			// The server refuses duplicate keys; should they come anyway, the
			// n-th duplicate is matched with the n-th on the other side.
			k := keyOf(i, item)
			if n := seen[k]; n > 0 {
				seen[k]++
				k = fmt.Sprintf("%s (duplicate %d)", k, n)
			} else {
				seen[k] = 1
			}
			out = append(out, keyed{key: k, path: p.Index(i), value: item})
		}
		return out
	}
	c.keys(p, s, index(old), index(new), noun)
}

// keys checks the key set of a map or list against KeyMutability, and the
// values under keys present on both sides against the item schema.
func (c *checker) keys(p *field.Path, s *Schema, old, new []keyed, noun string) {
	item := s.AdditionalProperties
	if s.Items != nil {
		item = s.Items
	}
	oldByKey := map[string]keyed{}
	for _, k := range old {
		oldByKey[k.key] = k
	}
	newByKey := map[string]keyed{}
	for _, k := range new {
		newByKey[k.key] = k
	}
	if s.KeyMutability != Mutable {
		rule := KeyMutabilityExtension + ": " + string(s.KeyMutability)
		var added, removed []string
		for _, k := range new {
			if _, ok := oldByKey[k.key]; !ok {
				added = append(added, k.key)
			}
		}
		for _, k := range old {
			if _, ok := newByKey[k.key]; !ok {
				removed = append(removed, k.key)
			}
		}
		if len(added) > 0 && s.KeyMutability != AddOnly {
			c.add(p, rule, fmt.Sprintf("%s %s cannot be added", plural(noun, len(added)), strings.Join(added, ", ")), nil, false, nil, false)
		}
		if len(removed) > 0 && s.KeyMutability != RemoveOnly {
			c.add(p, rule, fmt.Sprintf("%s %s cannot be removed", plural(noun, len(removed)), strings.Join(removed, ", ")), nil, false, nil, false)
		}
	}
	if item == nil || !item.HasMarkers() || s.ListType == "set" {
		return // in a set, equal keys are equal values
	}
	for _, n := range new {
		if o, ok := oldByKey[n.key]; ok {
			// Paths name the new item; its old index may differ.
			c.value(n.path, item, o.value, true, n.value, true)
		}
	}
}

func plural(noun string, n int) string {
	if n == 1 {
		return noun
	}
	switch noun {
	case "index":
		return "indices"
	}
	return noun + "s"
}
