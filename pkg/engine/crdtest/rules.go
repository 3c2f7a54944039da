package crdtest

import (
	"sort"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
)

// Rule is one x-kubernetes-validations rule or mutability marker of a CRD
// version: what coverage counts.
type Rule struct {
	CRD     string `json:"crd"`
	Version string `json:"version"`
	// Field is the schema node's field in the custom resources, [*] for
	// every item or map value: spec.ports[*] ("" for the root).
	Field string `json:"field"`
	// Rule is the CEL expression, or the marker: "x-kubernetes-mutability: Immutable".
	Rule              string `json:"rule"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
	FieldPath         string `json:"fieldPath,omitempty"`
	// Source is where the rule is written.
	Source document.Source `json:"source"`
	// Cost is the server's estimate of the rule's worst-case cost, times
	// how often it may run; CostLimit the server's limit on it (a CRD with
	// a rule over it is refused). 0 for a marker, or when unknown.
	Cost      uint64 `json:"cost,omitempty"`
	CostLimit uint64 `json:"costLimit,omitempty"`

	marker bool
	// path is the rule's in the CRD document.
	path fieldpath.Path
}

// withCosts sets the server's estimate of each rule's cost; a CRD whose
// rules do not compile has none (the server's validation refuses it).
func withCosts(rules []Rule, d *document.Document, costs Costs) []Rule {
	if costs == nil {
		return rules
	}
	byPath, limit, err := costs.RuleCosts(d.Object)
	if err != nil {
		return rules
	}
	for i := range rules {
		if c, ok := byPath[rules[i].path.String()]; ok && !rules[i].marker {
			rules[i].Cost, rules[i].CostLimit = c, limit
		}
	}
	return rules
}

// IsMarker says whether the rule is a mutability marker.
func (r Rule) IsMarker() bool { return r.marker }

var markerKeys = []string{"x-kubernetes-mutability", "x-kubernetes-key-mutability"}

// rulesOf lists the rules and markers of a CRD as written, in schema order.
func rulesOf(d *document.Document) []Rule {
	spec, _ := d.Object["spec"].(map[string]interface{})
	meta, _ := d.Object["metadata"].(map[string]interface{})
	name, _ := meta["name"].(string)
	versions, _ := spec["versions"].([]interface{})
	var out []Rule
	for i, v := range versions {
		v, _ := v.(map[string]interface{})
		vname, _ := v["name"].(string)
		sch, _ := v["schema"].(map[string]interface{})
		raw, _ := sch["openAPIV3Schema"].(map[string]interface{})
		p := fieldpath.Path{fieldpath.Key("spec"), fieldpath.Key("versions"), fieldpath.Index(i), fieldpath.Key("schema"), fieldpath.Key("openAPIV3Schema")}
		w := ruleWalk{d: d, crd: name, version: vname}
		w.walk(raw, p, "")
		out = append(out, w.out...)
	}
	return out
}

type ruleWalk struct {
	d            *document.Document
	crd, version string
	out          []Rule
}

func (w *ruleWalk) walk(s map[string]interface{}, p fieldpath.Path, field string) {
	if s == nil {
		return
	}
	vals, _ := s[lower.ValidationsExtension].([]interface{})
	for i, v := range vals {
		v, _ := v.(map[string]interface{})
		r := Rule{CRD: w.crd, Version: w.version, Field: field}
		r.Rule, _ = v["rule"].(string)
		r.Message, _ = v["message"].(string)
		r.MessageExpression, _ = v["messageExpression"].(string)
		r.FieldPath, _ = v["fieldPath"].(string)
		r.path = p.Child(fieldpath.Key(lower.ValidationsExtension)).Child(fieldpath.Index(i))
		r.Source = w.source(r.path)
		w.out = append(w.out, r)
	}
	for _, k := range markerKeys {
		if m, ok := s[k].(string); ok {
			w.out = append(w.out, Rule{CRD: w.crd, Version: w.version, Field: field, Rule: k + ": " + m,
				Source: w.source(p.Child(fieldpath.Key(k))), marker: true})
		}
	}
	props, _ := s["properties"].(map[string]interface{})
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		sub, _ := props[k].(map[string]interface{})
		f := k
		if field != "" {
			f = field + "." + k
		}
		w.walk(sub, p.Child(fieldpath.Key("properties")).Child(fieldpath.Key(k)), f)
	}
	if sub, ok := s["additionalProperties"].(map[string]interface{}); ok {
		w.walk(sub, p.Child(fieldpath.Key("additionalProperties")), field+"[*]")
	}
	if sub, ok := s["items"].(map[string]interface{}); ok {
		w.walk(sub, p.Child(fieldpath.Key("items")), field+"[*]")
	}
}

func (w *ruleWalk) source(p fieldpath.Path) document.Source {
	return document.Source{File: w.d.Source.File, Line: w.d.Line(p)}
}

// generic is a field of an object in the server's format (spec.ports[0],
// spec.labels[app]) as Rule.Field names its schema: [*] for an item or a
// map value. raw is the version's openAPIV3Schema.
func generic(raw map[string]interface{}, field string) string {
	var b strings.Builder
	s := raw
	for _, seg := range fieldpath.Parse(field) {
		props, _ := s["properties"].(map[string]interface{})
		if sub, ok := props[seg.Key].(map[string]interface{}); ok && !seg.IsIndex {
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(seg.Key)
			s = sub
			continue
		}
		b.WriteString("[*]")
		if sub, ok := s["items"].(map[string]interface{}); ok {
			s = sub
		} else {
			s, _ = s["additionalProperties"].(map[string]interface{})
		}
	}
	return b.String()
}

// withFieldPath is the field a rule's error names: its node's, and its
// fieldPath below (".spec.x", "['key']" as the server writes it).
func withFieldPath(field, fp string) string {
	if fp == "" {
		return field
	}
	fp = strings.NewReplacer("['", ".", "']", "").Replace(fp)
	fp = strings.TrimPrefix(fp, ".")
	if field == "" {
		return fp
	}
	return field + "." + fp
}
