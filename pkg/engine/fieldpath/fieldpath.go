// Package fieldpath names a place in a JSON object as a list of segments (an
// object key or a list index), unambiguous for keys with dots, and renders it
// in the API server's field-validation format.
package fieldpath

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Segment is one step into a value: an object key, or a list index.
type Segment struct {
	Key     string
	Index   int
	IsIndex bool
}

// Key returns an object-key segment.
func Key(k string) Segment { return Segment{Key: k} }

// Index returns a list-index segment.
func Index(i int) Segment { return Segment{Index: i, IsIndex: true} }

// MarshalJSON renders a key as a JSON string and an index as a number.
func (s Segment) MarshalJSON() ([]byte, error) {
	if s.IsIndex {
		return []byte(strconv.Itoa(s.Index)), nil
	}
	return json.Marshal(s.Key)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Segment) UnmarshalJSON(b []byte) error {
	var v interface{}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		*s = Key(v)
	case float64:
		*s = Index(int(v))
	default:
		return fmt.Errorf("path segment must be a string or a number, got %s", b)
	}
	return nil
}

// Path is a list of segments from the root of an object.
type Path []Segment

// Child returns a new path with s appended; p is not modified.
func (p Path) Child(s Segment) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, s)
}

// String renders the path the way the API server renders unknown-field paths
// in its warnings and strict field-validation errors: keys joined by dots,
// indices in brackets (spec.containers[0].bogus).
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		if s.IsIndex {
			b.WriteString("[")
			b.WriteString(strconv.Itoa(s.Index))
			b.WriteString("]")
			continue
		}
		if i > 0 {
			b.WriteString(".")
		}
		b.WriteString(s.Key)
	}
	return b.String()
}

// HasPrefix reports whether q is a prefix of p.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// Parse reads a path in the server's format, as its validation errors name
// fields (spec.ports[0].name, map keys in brackets: spec.labels[app]), best
// effort: a number in brackets is an index, anything else a key, and keys
// with dots cannot be told from nesting.
func Parse(s string) Path {
	var p Path
	if s == "" || s == "<root>" {
		return nil
	}
	for _, part := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			p = append(p, Key(name))
		}
		for rest != "" {
			var inner string
			inner, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			if n, err := strconv.Atoi(inner); err == nil {
				p = append(p, Index(n))
			} else {
				p = append(p, Key(inner))
			}
		}
	}
	return p
}
