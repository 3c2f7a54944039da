package plugin

import (
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// treeNotes are what explain-structural's tree shows of the mutability
// markers of a CRD file, which the skeleton (the server's) has dropped:
// by node of the tree (its names from the root, joined by "/"), the
// markers, and the CEL rules that lower-mutability makes of them.
type treeNotes struct {
	markers map[string][]string
	rules   map[string][]lower.Rule
}

// at are the notes of the node of key (its names from the root, joined by
// "/"); the lookup copies nothing.
func (n *treeNotes) at(key []byte) (markers []string, rules []lower.Rule) {
	if n == nil {
		return nil, nil
	}
	return n.markers[string(key)], n.rules[string(key)]
}

// addMutability shows the markers of a CRD as written, and the rules they
// become, in each version's tree and report. A CRD whose markers cannot be
// lowered says why.
func addMutability(r *crdReport, raw map[string]interface{}) {
	schemas, _ := update.CRDSchemas(raw)
	res, err := lower.CRD(raw, strategy.Validators{})
	if err != nil {
		if len(r.Mutability) == 0 { // misplaced markers are reported already
			r.LowerError = err.Error()
		}
		res = &lower.Result{}
	}
	for i := range r.Versions {
		v := &r.Versions[i]
		s := schemas[v.Name]
		if !s.HasMarkers() {
			continue
		}
		notes := &treeNotes{markers: map[string][]string{}, rules: map[string][]lower.Rule{}}
		collectMarkers(notes, s, nil)
		for _, rule := range res.Rules {
			if rule.Version != v.Name && rule.Version != "" {
				continue
			}
			key := strings.Join(treePath(rule.Schema), "/")
			notes.rules[key] = append(notes.rules[key], rule)
			v.Lowered = append(v.Lowered, rule)
		}
		v.notes = notes
	}
}

// collectMarkers notes the markers of s and its descendants; path is
// appended to as the walk descends and cut on its way back (a copy per
// level was quadratic in depth).
func collectMarkers(n *treeNotes, s *update.Schema, path []string) {
	if s == nil || !s.HasMarkers() {
		return
	}
	if s.Mutability != update.Mutable || s.KeyMutability != update.Mutable {
		key := strings.Join(path, "/")
		if s.Mutability != update.Mutable {
			n.markers[key] = append(n.markers[key], update.MutabilityExtension+"="+string(s.Mutability))
		}
		if s.KeyMutability != update.Mutable {
			n.markers[key] = append(n.markers[key], update.KeyMutabilityExtension+"="+string(s.KeyMutability))
		}
	}
	depth := len(path)
	for k, p := range s.Properties {
		collectMarkers(n, p, append(path[:depth], k))
	}
	if s.AdditionalProperties != nil {
		collectMarkers(n, s.AdditionalProperties, append(path[:depth], "{*}"))
	}
	if s.Items != nil {
		collectMarkers(n, s.Items, append(path[:depth], "[*]"))
	}
}

// treePath is a schema node's path in the CRD document as the tree names
// it: properties by name, {*} for additionalProperties, [*] for items.
func treePath(p fieldpath.Path) []string {
	var out []string
	inSchema, name := false, false
	for _, s := range p {
		switch {
		case !inSchema:
			inSchema = !s.IsIndex && s.Key == "openAPIV3Schema"
		case name:
			out, name = append(out, s.Key), false
		case s.Key == "properties":
			name = true
		case s.Key == "additionalProperties":
			out = append(out, "{*}")
		case s.Key == "items":
			out = append(out, "[*]")
		}
	}
	return out
}
