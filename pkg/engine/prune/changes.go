package prune

import (
	"reflect"
	"sort"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// Reason says why the server changes a field.
type Reason string

const (
	// UnknownField: not specified in the schema; pruned.
	UnknownField Reason = "UnknownField"
	// UnknownMetadataField: not a field of ObjectMeta; dropped from metadata.
	UnknownMetadataField Reason = "UnknownMetadataField"
	// NullNonNullable: null where the schema is neither nullable nor defaulted; dropped.
	NullNonNullable Reason = "NullNonNullable"
	// MetadataNormalized: changed by the server's ObjectMeta round trip
	// (empty values dropped, values normalized).
	MetadataNormalized Reason = "MetadataNormalized"
	// Defaulted: set from the schema's default.
	Defaulted Reason = "Defaulted"
	// StatusSubresource: status is ignored, the CRD has the status
	// subresource: only writes to .../status set it.
	StatusSubresource Reason = "StatusSubresource"
	// ClusterScoped: metadata.namespace is dropped, the kind is cluster-scoped.
	ClusterScoped Reason = "ClusterScoped"
	// StorageVersion: not in the schema of the storage version (conversion
	// None); dropped when the object is stored.
	StorageVersion Reason = "StorageVersion"
	// Normalized: a field of a CustomResourceDefinition the server does not
	// store as written: an empty or false value its encoding leaves out,
	// a value written otherwise (1.0 as 1). See StoredCRD.
	Normalized Reason = "Normalized"
)

// Action is what happens to the field.
type Action string

const (
	Removed  Action = "Removed"
	Added    Action = "Added"
	Replaced Action = "Replaced"
)

// Change is one field the server changes.
type Change struct {
	// Path in the server's format; for unknown fields byte-identical to the
	// server's "unknown field" warning.
	Path     string         `json:"path"`
	Segments fieldpath.Path `json:"segments"`
	Reason   Reason         `json:"reason"`
	Action   Action         `json:"action"`
	// Value is the value as sent: the dropped value of a removed field, the
	// old value of a replaced one; absent for an added field.
	Value interface{} `json:"value,omitempty"`
	// NewValue is the value the server stores for an added or replaced field.
	NewValue interface{} `json:"newValue,omitempty"`
	// Line is the source line of the field (0 when unknown).
	Line int `json:"line,omitempty"`
}

// Changes compares the object as sent with the coerced one and names every
// difference with the step of the server that made it: the request decoding
// first, then (when Store computed it) what storing changes.
func Changes(sent map[string]interface{}, c *Coerced, s *structuralschema.Structural) []Change {
	if c.Request == nil {
		return requestChanges(sent, c.Object, c, s)
	}
	var stored []Change
	removed := map[string]bool{}
	storagePruned := toSet(c.StoragePruned)
	diff(nil, c.Request, c.Object, func(p fieldpath.Path, a Action, old, new interface{}) {
		ch := Change{Path: p.String(), Segments: p, Action: a, Value: old, NewValue: new}
		underStatus := len(p) > 0 && !p[0].IsIndex && p[0].Key == "status"
		switch {
		case c.StatusDropped && underStatus && a != Added:
			ch.Reason = StatusSubresource
		case a == Removed && c.NamespaceDropped && ch.Path == "metadata.namespace":
			ch.Reason = ClusterScoped
		case a == Removed && storagePruned[ch.Path]:
			ch.Reason = StorageVersion
		case a == Added || (a == Replaced && old == nil):
			ch.Reason = Defaulted
		default:
			ch.Reason = MetadataNormalized
		}
		if a == Added {
			ch.Value = nil
		}
		if a == Removed {
			removed[ch.Path] = true
		}
		stored = append(stored, ch)
	})
	// What the request decoding added inside what storing drops is no news.
	var out []Change
	for _, ch := range requestChanges(sent, c.Request, c, s) {
		if ch.Action != Removed && under(ch.Segments, removed) {
			continue
		}
		out = append(out, ch)
	}
	return append(out, stored...)
}

// under reports whether a proper prefix of p is among paths.
func under(p fieldpath.Path, paths map[string]bool) bool {
	for i := len(p) - 1; i > 0; i-- {
		if paths[p[:i].String()] {
			return true
		}
	}
	return false
}

// requestChanges classifies the differences made by the request decoding.
func requestChanges(sent, decoded map[string]interface{}, c *Coerced, s *structuralschema.Structural) []Change {
	unknown := toSet(c.UnknownFields)
	unknownMeta := toSet(c.UnknownMetadataFields)
	var out []Change
	diff(nil, sent, decoded, func(p fieldpath.Path, a Action, old, new interface{}) {
		ch := Change{Path: p.String(), Segments: p, Action: a, Value: old, NewValue: new}
		inMeta := len(p) > 0 && !p[0].IsIndex && p[0].Key == "metadata"
		switch {
		case a == Removed && unknown[ch.Path]:
			ch.Reason = UnknownField
		case a == Removed && unknownMeta[ch.Path]:
			ch.Reason = UnknownMetadataField
		case a == Removed && unknownMeta[serverMetadataPath(p, s)]:
			ch.Reason, ch.Path = UnknownMetadataField, serverMetadataPath(p, s)
		case a == Removed && old == nil && !inMeta:
			ch.Reason = NullNonNullable
		case (a == Added || (a == Replaced && old == nil)) && !inMeta:
			ch.Reason = Defaulted
		default:
			ch.Reason = MetadataNormalized
		}
		if a == Added {
			ch.Value = nil
		}
		out = append(out, ch)
	})
	return out
}

// Edits are the edits that turn sent into stored, for the YAML.
func Edits(sent, stored map[string]interface{}) []document.Edit {
	var out []document.Edit
	diff(nil, sent, stored, func(p fieldpath.Path, a Action, old, new interface{}) {
		out = append(out, document.Edit{Path: p, Remove: a == Removed, Value: new})
	})
	return out
}

func toSet(xs []string) map[string]bool {
	if len(xs) == 0 {
		return nil // read only: most objects have no such paths
	}
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Diff walks a and b together, calling emit for each difference (a key
// only a has: Removed; only b: Added; a value, type or list length
// otherwise: Replaced), keys sorted. emit gets a path of its own.
func Diff(a, b interface{}, emit func(fieldpath.Path, Action, interface{}, interface{})) {
	diff(nil, a, b, emit)
}

// diff walks a (sent) and b (stored) together, calling emit for each
// difference, in a stable order (sorted keys). emit gets a path of its own.
func diff(p fieldpath.Path, a, b interface{}, emit func(fieldpath.Path, Action, interface{}, interface{})) {
	// One path and one stack of keys for the whole walk: a path of its
	// own per key and a key slice per map were most of what a diff of a
	// large object allocated (issue 44).
	w := differ{path: append(make(fieldpath.Path, 0, len(p)+16), p...)}
	w.emit = func(p fieldpath.Path, act Action, old, new interface{}) {
		emit(append(fieldpath.Path(nil), p...), act, old, new)
	}
	w.walk(w.path, a, b)
}

// differ is the state of one diff: emit gets the path as it stands (it
// must copy it); keys is a stack of the sorted keys of the maps being
// walked, each map's at the end while it is walked.
type differ struct {
	path fieldpath.Path
	keys []string
	emit func(fieldpath.Path, Action, interface{}, interface{})
}

// walk is diff with one path grown and truncated in place as it descends
// (a copy per level made a 10,000-deep object cost gigabytes).
func (w *differ) walk(p fieldpath.Path, a, b interface{}) {
	switch a := a.(type) {
	case map[string]interface{}:
		bm, ok := b.(map[string]interface{})
		if !ok {
			w.emit(p, Replaced, a, b)
			return
		}
		start := len(w.keys)
		for k := range a {
			w.keys = append(w.keys, k)
		}
		for k := range bm {
			if _, ok := a[k]; !ok {
				w.keys = append(w.keys, k)
			}
		}
		end := len(w.keys)
		sort.Strings(w.keys[start:end])
		// w.keys may move as walks below grow it; [start, end) keeps its keys.
		for i := start; i < end; i++ {
			k := w.keys[i]
			av, inA := a[k]
			bv, inB := bm[k]
			switch {
			case inA && !inB:
				w.emit(append(p, fieldpath.Key(k)), Removed, av, nil)
			case !inA && inB:
				w.emit(append(p, fieldpath.Key(k)), Added, nil, bv)
			default:
				w.walk(append(p, fieldpath.Key(k)), av, bv)
			}
		}
		w.keys = w.keys[:start]
	case []interface{}:
		bl, ok := b.([]interface{})
		if !ok || len(bl) != len(a) {
			w.emit(p, Replaced, a, b)
			return
		}
		for i := range a {
			w.walk(append(p, fieldpath.Index(i)), a[i], bl[i])
		}
	default:
		if !scalarEqual(a, b) {
			w.emit(p, Replaced, a, b)
		}
	}
}

// scalarEqual is reflect.DeepEqual(a, b) for a, which is not a map or a
// list, without reflection for the values a JSON object holds.
func scalarEqual(a, b interface{}) bool {
	switch a := a.(type) {
	case string:
		bv, ok := b.(string)
		return ok && a == bv
	case int64:
		bv, ok := b.(int64)
		return ok && a == bv
	case bool:
		bv, ok := b.(bool)
		return ok && a == bv
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

// serverMetadataPath renders p the way the server's metadata coercion of
// embedded resources does: the path to the embedded object as a field.Path
// (map keys in brackets), then the ObjectMeta field path after "metadata".
func serverMetadataPath(p fieldpath.Path, s *structuralschema.Structural) string {
	last := -1
	for i, seg := range p {
		if !seg.IsIndex && seg.Key == "metadata" {
			last = i
		}
	}
	if last < 0 {
		return p.String()
	}
	var fp *field.Path
	for _, seg := range p[:last] {
		switch {
		case seg.IsIndex:
			fp = fp.Index(seg.Index)
			if s != nil {
				s = s.Items
			}
		case s != nil && hasProperty(s, seg.Key):
			fp = fp.Child(seg.Key)
			prop := s.Properties[seg.Key]
			s = &prop
		case s != nil && s.AdditionalProperties != nil:
			fp = fp.Key(seg.Key)
			s = s.AdditionalProperties.Structural
		default:
			fp = fp.Child(seg.Key)
			s = nil
		}
	}
	return fp.Child("metadata").String() + "." + p[last+1:].String()
}

func hasProperty(s *structuralschema.Structural, k string) bool {
	_, ok := s.Properties[k]
	return ok
}
