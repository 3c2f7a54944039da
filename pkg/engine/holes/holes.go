// Package holes searches the rules meant to make a field immutable for
// the holes a sequence of updates goes through: unset the field's optional
// parent (a transition rule runs only where its field is in both objects),
// then set it again with another value; remove a list-type map's entry or
// a map's key, then add it back with another value. Every step is decided
// by the API server's own update validation (update.Check with the
// server's strategy), never by reading the rule: a hole is a sequence the
// server accepts, step by step, whose end value differs from its start.
package holes

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// Server is the API server's validation the search runs every step
// through: its CRD validation (for the rule that closes a hole, which
// lower.CRD writes), its create validation (the first object) and its
// update validation (every step). strategy.Validators is the one to use.
type Server interface {
	schema.CRDValidator
	prune.CreateValidator
	UpdateValidator(crd *schema.CRD, version string) (update.UpdateValidator, error)
}

// The verdicts on a field.
const (
	// Immutable: no sequence tried changes it.
	Immutable = "Immutable"
	// Leaks: some sequence of accepted updates changes it.
	Leaks = "Leaks"
	// NotAnalysed: no valid object could be built to try.
	NotAnalysed = "NotAnalysed"
)

// The kinds of hole.
const (
	// Changed: the value changes in one update.
	Changed = "Changed"
	// UnsetField: the field is unset, then set again.
	UnsetField = "UnsetField"
	// UnsetParent: an optional parent is unset, then set again.
	UnsetParent = "UnsetParent"
	// RemoveEntry: the list-type map entry is removed, then added back.
	RemoveEntry = "RemoveEntry"
	// RemoveKey: the map key is removed, then added back.
	RemoveKey = "RemoveKey"
)

// Report is what the search found in one CRD.
type Report struct {
	CRD    string  `json:"crd"`
	Kind   string  `json:"kind"`
	Fields []Field `json:"fields"`
}

// Leaky counts the fields that leak.
func (r *Report) Leaky() int {
	n := 0
	for _, f := range r.Fields {
		if f.Verdict == Leaks {
			n++
		}
	}
	return n
}

// Field is one field a rule or marker is meant to make immutable.
type Field struct {
	Version string `json:"version"`
	// Field in the server's format, [*] for every item or map value.
	Field string `json:"field"`
	// Rule: "x-kubernetes-validations: <rule>" or the marker.
	Rule string `json:"rule"`
	// RuleAt is the field whose schema holds the rule ("" the root).
	RuleAt  string `json:"ruleAt"`
	Verdict string `json:"verdict"`
	// Reason says why a field was not analysed.
	Reason string `json:"reason,omitempty"`
	Holes  []Hole `json:"holes,omitempty"`
}

// Hole is a sequence of updates the server accepts that changes the field.
type Hole struct {
	Kind string `json:"kind"`
	// Via is the node unset or removed ("" for Changed), as a path of the
	// objects (items by index, map values by key).
	Via   string      `json:"via,omitempty"`
	From  interface{} `json:"from"`
	To    interface{} `json:"to"`
	Steps []Step      `json:"steps"`
	Fix   *Fix        `json:"fix,omitempty"`
}

// Step is one update: old to new.
type Step struct {
	Old map[string]interface{} `json:"oldObject"`
	New map[string]interface{} `json:"object"`
	// FixRefuses: the CRD with the fix's rule refuses this step.
	FixRefuses bool `json:"fixRefuses"`
}

// Fix is what closes a hole: the markers of KEP "Immutable fields" on
// the field (x-kubernetes-mutability: Immutable) and on every list-type
// map or map on its path (x-kubernetes-key-mutability: AddOnly: an entry,
// once there, stays), as the rules lower-mutability writes for them.
type Fix struct {
	// Markers name the markers, each with its field.
	Markers []string `json:"markers"`
	Rules   []Rule   `json:"rules"`
	// CRD is the CRD with the rules added (for a test of it).
	CRD map[string]interface{} `json:"-"`
	// Err says why no rule could be checked ("" when Rules are checked).
	Err string `json:"error,omitempty"`
}

// Rule is one x-kubernetes-validations entry of a Fix.
type Rule struct {
	// At is the field whose schema gets the rule ("" the root).
	At        string `json:"at"`
	Rule      string `json:"rule"`
	Message   string `json:"message"`
	FieldPath string `json:"fieldPath,omitempty"`
}

// candidate is a field to try, with what is meant to hold it.
type candidate struct {
	version string
	field   path
	at      path
	rule    string
}

// Analyze searches every rule and marker of raw, a CRD as written, meant
// to make a field immutable, for holes. A CRD the server refuses, or that
// is not a CRD, is an error.
func Analyze(raw map[string]interface{}, srv Server) (*Report, error) {
	crd, ok, err := schema.FromObject(raw, srv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("not a CustomResourceDefinition")
	}
	muts, errs := update.CRDSchemas(raw)
	if len(errs) > 0 {
		return nil, fmt.Errorf("misplaced mutability markers: %v", errs.ToAggregate())
	}
	rep := &Report{CRD: crd.Name(), Kind: crd.GroupKind().Kind}
	for _, version := range crd.Versions() {
		s, err := crd.ServedSchema(version)
		if err != nil || s == nil {
			continue
		}
		cands := rulesOf(s, version)
		cands = append(cands, markersOf(raw, version)...)
		for _, c := range cands {
			a := &search{raw: raw, crd: crd, srv: srv, mut: muts[version], schema: s, c: c}
			rep.Fields = append(rep.Fields, a.run())
		}
	}
	sort.SliceStable(rep.Fields, func(i, j int) bool {
		a, b := rep.Fields[i], rep.Fields[j]
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Field < b.Field
	})
	return rep, nil
}

// rulesOf finds the x-kubernetes-validations meant to make a field
// immutable.
func rulesOf(s *structuralschema.Structural, version string) []candidate {
	var out []candidate
	var walk func(s *structuralschema.Structural, p path)
	walk = func(s *structuralschema.Structural, p path) {
		for _, v := range s.XValidations {
			subs, ok := immutableTargets(v.Rule)
			if !ok {
				continue
			}
			for _, sub := range subs {
				f := p
				for _, name := range strings.Split(sub, ".") {
					if name != "" {
						f = f.child(seg{name: name})
					}
				}
				out = append(out, candidate{version: version, field: f, at: p, rule: "x-kubernetes-validations: " + v.Rule})
			}
		}
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if len(p) == 0 && k == "metadata" {
				continue
			}
			c := s.Properties[k]
			walk(&c, p.child(seg{name: k}))
		}
		if s.Items != nil {
			walk(s.Items, p.child(seg{kind: item}))
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			walk(s.AdditionalProperties.Structural, p.child(seg{kind: value}))
		}
	}
	walk(s, nil)
	return out
}

// markersOf finds the fields marked x-kubernetes-mutability: Immutable in
// the version's schema as written (the server drops the markers).
func markersOf(raw map[string]interface{}, version string) []candidate {
	spec, _ := raw["spec"].(map[string]interface{})
	versions, _ := spec["versions"].([]interface{})
	var root map[string]interface{}
	for _, v := range versions {
		v, _ := v.(map[string]interface{})
		if v["name"] == version {
			sch, _ := v["schema"].(map[string]interface{})
			root, _ = sch["openAPIV3Schema"].(map[string]interface{})
		}
	}
	var out []candidate
	var walk func(n map[string]interface{}, p path)
	walk = func(n map[string]interface{}, p path) {
		if n[update.MutabilityExtension] == string(update.Immutable) && len(p) > 0 {
			out = append(out, candidate{version: version, field: p, at: p, rule: update.MutabilityExtension + ": " + string(update.Immutable)})
		}
		props, _ := n["properties"].(map[string]interface{})
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if c, ok := props[k].(map[string]interface{}); ok && !(len(p) == 0 && k == "metadata") {
				walk(c, p.child(seg{name: k}))
			}
		}
		if c, ok := n["items"].(map[string]interface{}); ok {
			walk(c, p.child(seg{kind: item}))
		}
		if c, ok := n["additionalProperties"].(map[string]interface{}); ok {
			walk(c, p.child(seg{kind: value}))
		}
	}
	if root != nil {
		walk(root, nil)
	}
	return out
}

// search tries the sequences of one candidate.
type search struct {
	raw    map[string]interface{}
	crd    *schema.CRD
	srv    Server
	mut    *update.Schema
	schema *structuralschema.Structural
	c      candidate
}

func (a *search) run() Field {
	f := Field{Version: a.c.version, Field: a.c.field.String(), Rule: a.c.rule, RuleAt: a.c.at.String()}
	if reason := a.skip(); reason != "" {
		f.Verdict, f.Reason = NotAnalysed, reason
		return f
	}
	start, err := a.start()
	if err != nil {
		f.Verdict, f.Reason = NotAnalysed, err.Error()
		return f
	}
	for _, h := range a.sequences(start) {
		if a.accepted(h) {
			f.Holes = append(f.Holes, h)
		}
	}
	f.Verdict = Immutable
	if len(f.Holes) > 0 {
		f.Verdict = Leaks
		a.fix(f.Holes)
	}
	return f
}

// skip says why a field is not tried: the status of a version with the
// status subresource (an update of the resource keeps the old status),
// a list-type map's key (it names the entry).
func (a *search) skip() string {
	p := a.c.field
	if len(p) > 0 && p[0].kind == prop && p[0].name == "status" && a.crd.StatusSubresource(a.c.version) {
		return "status: the status subresource's updates are not tried"
	}
	for i := 1; i < len(p); i++ {
		if p[i-1].kind != item || p[i].kind != prop {
			continue
		}
		list := schemaOf(a.schema, p[:i-1])
		if list != nil && list.XListType != nil && *list.XListType == "map" {
			for _, k := range list.XListMapKeys {
				if k == p[i].name && i == len(p)-1 {
					return "a key of a list-type map: it names the entry"
				}
			}
		}
	}
	if schemaOf(a.schema, p) == nil {
		return "the rule names a field the schema does not have"
	}
	return ""
}

// start is the first object: the minimal valid object of the version
// with the field set, which the server's create validation accepts.
func (a *search) start() (map[string]interface{}, error) {
	root, err := minimal(a.schema)
	if err != nil {
		return nil, fmt.Errorf("cannot build a valid object: %w", err)
	}
	obj, _ := root.(map[string]interface{})
	if obj == nil {
		obj = map[string]interface{}{}
	}
	g := a.crd.GroupKind()
	obj["apiVersion"] = g.Group + "/" + a.c.version
	obj["kind"] = g.Kind
	obj["metadata"] = map[string]interface{}{"name": "holes"}
	if _, ok := get(obj, a.c.field); !ok {
		v, err := minimal(schemaOf(a.schema, a.c.field))
		if err != nil {
			return nil, fmt.Errorf("cannot build a valid object: %s: %w", a.c.field, err)
		}
		if err := ensure(obj, a.schema, a.c.field, v); err != nil {
			return nil, fmt.Errorf("cannot build a valid object: %w", err)
		}
	}
	stored, err := prune.Store(obj, a.crd, a.c.version, true)
	if err != nil {
		return nil, fmt.Errorf("cannot build a valid object: %w", err)
	}
	if errs, err := a.srv.ValidateCreate(a.crd, a.c.version, copyObj(stored.Object), "default"); err != nil || len(errs) > 0 {
		if err == nil {
			err = errs.ToAggregate()
		}
		return nil, fmt.Errorf("cannot build a valid object: the server refuses %s: %v", printObj(obj), err)
	}
	if _, ok := get(stored.Object, a.c.field); !ok {
		return nil, fmt.Errorf("cannot build a valid object with %s", a.c.field)
	}
	return obj, nil
}

func printObj(obj map[string]interface{}) string {
	o := copyObj(obj)
	delete(o, "apiVersion")
	delete(o, "kind")
	delete(o, "metadata")
	return fmt.Sprint(o)
}

// sequences are the sequences to try from start: the value changed in
// one update, and for every node on the field's path that may go (the
// field or an optional parent, a list entry, a map key), the node removed,
// then the field set again with another value.
func (a *search) sequences(start map[string]interface{}) []Hole {
	from, _ := get(start, a.c.field)
	var out []Hole
	for n := 1; n <= 3; n++ {
		to, err := alternate(schemaOf(a.schema, a.c.field), from, n)
		if err != nil {
			break
		}
		end := copyObj(start)
		if err := ensure(end, a.schema, a.c.field, to); err != nil {
			break
		}
		seqs := []Hole{{Kind: Changed, From: from, To: to, Steps: []Step{{Old: start, New: end}}}}
		for i := len(a.c.field) - 1; i >= 0; i-- {
			p := a.c.field[:i+1]
			kind := a.removal(p, i == len(a.c.field)-1)
			if kind == "" {
				continue
			}
			mid := copyObj(start)
			if err := remove(mid, p); err != nil {
				continue
			}
			seqs = append(seqs, Hole{Kind: kind, Via: concrete(start, p), From: from, To: to,
				Steps: []Step{{Old: start, New: mid}, {Old: mid, New: copyObj(end)}}})
		}
		out = append(out, seqs...)
		if n == 1 && len(seqs) > 0 && a.validEnd(start, end) {
			break
		}
	}
	return out
}

// validEnd reports whether the server would take end as a new object:
// if not, another value is tried.
func (a *search) validEnd(start, end map[string]interface{}) bool {
	stored, err := prune.Store(end, a.crd, a.c.version, true)
	if err != nil {
		return false
	}
	errs, err := a.srv.ValidateCreate(a.crd, a.c.version, copyObj(stored.Object), "default")
	return err == nil && len(errs) == 0
}

// removal is the kind of hole removing the node at p makes, "" when it
// cannot go: a required property, the root's own fields kubectl needs.
func (a *search) removal(p path, self bool) string {
	x := p[len(p)-1]
	switch x.kind {
	case item:
		list := schemaOf(a.schema, p[:len(p)-1])
		if list != nil && list.XListType != nil && *list.XListType == "map" {
			return RemoveEntry
		}
		return ""
	case value:
		return RemoveKey
	}
	parent := schemaOf(a.schema, p[:len(p)-1])
	if parent == nil || parent.ValueValidation != nil && contains(parent.ValueValidation.Required, x.name) {
		return ""
	}
	if self {
		return UnsetField
	}
	return UnsetParent
}

// accepted runs every step of h through the server's update validation:
// all must pass, and the end value must differ from the start, as stored.
func (a *search) accepted(h Hole) bool {
	for _, s := range h.Steps {
		if !a.allows(a.crd, a.mut, s.Old, s.New) {
			return false
		}
	}
	first, err := prune.Store(h.Steps[0].Old, a.crd, a.c.version, true)
	if err != nil {
		return false
	}
	last, err := prune.Store(h.Steps[len(h.Steps)-1].New, a.crd, a.c.version, true)
	if err != nil {
		return false
	}
	x, okX := get(first.Object, a.c.field)
	y, okY := get(last.Object, a.c.field)
	return okX && okY && !reflect.DeepEqual(x, y)
}

// allows reports whether crd's server accepts updating old to new.
func (a *search) allows(crd *schema.CRD, mut *update.Schema, old, new map[string]interface{}) bool {
	v, err := a.srv.UpdateValidator(crd, a.c.version)
	if err != nil {
		return false
	}
	out, err := update.Check(copyObj(old), copyObj(new), crd, mut, v)
	return err == nil && len(out.Refused) == 0
}
