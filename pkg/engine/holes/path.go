package holes

import (
	"fmt"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

type segKind int

const (
	prop  segKind = iota
	item          // an item of a list: the first one
	value         // a value of a map: the first key
)

type seg struct {
	name string
	kind segKind
}

type path []seg

// String names the path in the server's format, [*] for every item of a
// list or value of a map.
func (p path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch s.kind {
		case prop:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		default:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func (p path) child(s seg) path { return append(p[:len(p):len(p)], s) }

// schemaOf is the schema of the node at p below s.
func schemaOf(s *structuralschema.Structural, p path) *structuralschema.Structural {
	for _, x := range p {
		if s == nil {
			return nil
		}
		switch x.kind {
		case prop:
			c, ok := s.Properties[x.name]
			if !ok {
				return nil
			}
			s = &c
		case item:
			s = s.Items
		case value:
			if s.AdditionalProperties == nil {
				return nil
			}
			s = s.AdditionalProperties.Structural
		}
	}
	return s
}

// mapKey is the key of the map value a path goes through.
const mapKey = "k0"

// ensure makes the node at p exist in obj (its parents with their minimal
// values), and sets it to v.
func ensure(obj map[string]interface{}, s *structuralschema.Structural, p path, v interface{}) error {
	var cur interface{} = obj
	for i, x := range p {
		last := i == len(p)-1
		cs := schemaOf(s, p[:i+1])
		if cs == nil {
			return fmt.Errorf("no schema at %s", p[:i+1])
		}
		next := v
		switch x.kind {
		case prop, value:
			m, ok := cur.(map[string]interface{})
			if !ok {
				return fmt.Errorf("%s is not an object", p[:i])
			}
			key := x.name
			if x.kind == value {
				key = firstKey(m)
			}
			if !last {
				if c, ok := m[key]; ok {
					cur = c
					continue
				}
				var err error
				if next, err = minimal(cs); err != nil {
					return fmt.Errorf("%s: %w", p[:i+1], err)
				}
			}
			m[key] = next
			cur = next
		case item:
			parent, err := parentOf(obj, p[:i])
			if err != nil {
				return err
			}
			list, _ := cur.([]interface{})
			if len(list) == 0 {
				it, err := minimal(cs)
				if err != nil {
					return fmt.Errorf("%s: %w", p[:i+1], err)
				}
				list = []interface{}{it}
				parent.set(list)
			}
			if last {
				list[0] = v
			}
			cur = list[0]
		}
	}
	return nil
}

func firstKey(m map[string]interface{}) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return mapKey
	}
	return keys[0]
}

// slot is where a value lives: a key of an object or an index of a list.
type slot struct {
	m     map[string]interface{}
	key   string
	list  []interface{}
	index int
}

func (s slot) set(v interface{}) {
	if s.m != nil {
		s.m[s.key] = v
	} else {
		s.list[s.index] = v
	}
}

// parentOf is the slot of the node at p (which must exist but for the
// last step's value).
func parentOf(obj map[string]interface{}, p path) (slot, error) {
	var cur interface{} = obj
	var sl slot
	for _, x := range p {
		switch x.kind {
		case prop, value:
			m, ok := cur.(map[string]interface{})
			if !ok {
				return slot{}, fmt.Errorf("%s: not an object", p)
			}
			key := x.name
			if x.kind == value {
				key = firstKey(m)
			}
			sl = slot{m: m, key: key}
			cur = m[key]
		case item:
			l, ok := cur.([]interface{})
			if !ok || len(l) == 0 {
				return slot{}, fmt.Errorf("%s: no item", p)
			}
			sl = slot{list: l, index: 0}
			cur = l[0]
		}
	}
	return sl, nil
}

// get is the value at p, and whether it is there.
func get(obj map[string]interface{}, p path) (interface{}, bool) {
	var cur interface{} = obj
	for _, x := range p {
		switch x.kind {
		case prop, value:
			m, ok := cur.(map[string]interface{})
			if !ok {
				return nil, false
			}
			key := x.name
			if x.kind == value {
				key = firstKey(m)
			}
			if cur, ok = m[key]; !ok {
				return nil, false
			}
		case item:
			l, ok := cur.([]interface{})
			if !ok || len(l) == 0 {
				return nil, false
			}
			cur = l[0]
		}
	}
	return cur, true
}

// remove deletes the node at p from obj: a property or a map key, or the
// first item of a list.
func remove(obj map[string]interface{}, p path) error {
	parent, ok := get(obj, p[:len(p)-1])
	if !ok {
		return fmt.Errorf("%s is not there", p)
	}
	x := p[len(p)-1]
	switch x.kind {
	case prop, value:
		m, _ := parent.(map[string]interface{})
		key := x.name
		if x.kind == value {
			key = firstKey(m)
		}
		delete(m, key)
	case item:
		l, _ := parent.([]interface{})
		if len(p) == 1 {
			return fmt.Errorf("a list at the root")
		}
		sl, err := parentOf(obj, p[:len(p)-1])
		if err != nil {
			return err
		}
		sl.set(append([]interface{}{}, l[1:]...))
	}
	return nil
}

// concrete names the node p reaches in obj: the first item's index, the
// first key.
func concrete(obj map[string]interface{}, p path) string {
	var b strings.Builder
	var cur interface{} = obj
	for _, x := range p {
		switch x.kind {
		case prop:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(x.name)
			m, _ := cur.(map[string]interface{})
			cur = m[x.name]
		case value:
			m, _ := cur.(map[string]interface{})
			k := firstKey(m)
			fmt.Fprintf(&b, "[%s]", k)
			cur = m[k]
		case item:
			b.WriteString("[0]")
			l, _ := cur.([]interface{})
			if len(l) > 0 {
				cur = l[0]
			}
		}
	}
	return b.String()
}

func deepCopy(v interface{}) interface{} {
	switch v := v.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

func copyObj(m map[string]interface{}) map[string]interface{} {
	return deepCopy(m).(map[string]interface{})
}
