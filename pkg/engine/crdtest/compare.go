package crdtest

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// Compare says how obs differs from what e expects: nothing when it is
// what e expects. Errors match one to one, in any order: each field of an
// expected error that is set must be the observed one's (the message a
// part of it). Pruned and defaulted fields are the whole set, when given.
func Compare(e *Expect, obs *Observed) []string {
	var out []string
	if e.Result != obs.Result {
		out = append(out, fmt.Sprintf("expected %s, observed %s", e.Result, obs.Result))
	}
	if e.Errors != nil {
		out = append(out, compareErrors(e.Errors, obs.Errors)...)
	}
	if e.Pruned != nil {
		got := append([]string{}, obs.Pruned...)
		sort.Strings(got)
		if !reflect.DeepEqual(e.Pruned, got) && (len(e.Pruned) > 0 || len(got) > 0) {
			out = append(out, fmt.Sprintf("pruned: expected %s, observed %s", finding.JSON(e.Pruned), finding.JSON(got)))
		}
	}
	if e.Defaulted != nil {
		got := obs.Defaulted
		if got == nil {
			got = map[string]interface{}{}
		}
		if finding.JSON(e.Defaulted) != finding.JSON(got) {
			out = append(out, fmt.Sprintf("defaulted: expected %s, observed %s", finding.JSON(e.Defaulted), finding.JSON(got)))
		}
	}
	return out
}

// compareErrors matches the errors expected with those observed, each
// expected one with the first observed one it matches and no other has.
func compareErrors(want []ErrorExpect, got []Error) []string {
	used := make([]bool, len(got))
	var out []string
	for _, w := range want {
		found := false
		for i, g := range got {
			if !used[i] && w.matches(g) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("expected error (line %d) %s, not observed", w.Line, w.String()))
		}
	}
	for i, g := range got {
		if !used[i] {
			out = append(out, "observed error not expected: "+g.String())
		}
	}
	return out
}

func (w ErrorExpect) matches(g Error) bool {
	return (w.Field == "" || w.Field == g.Field) &&
		(w.Type == "" || w.Type == g.Type) &&
		(w.Rule == "" || w.Rule == g.Rule) &&
		strings.Contains(g.Message, w.Message)
}

func (w ErrorExpect) String() string {
	var parts []string
	for _, kv := range [][2]string{{"field", w.Field}, {"type", w.Type}, {"message", w.Message}, {"rule", w.Rule}} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s: %q", kv[0], kv[1]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (g Error) String() string {
	s := fmt.Sprintf("{field: %q, type: %q, message: %q", g.Field, g.Type, g.Message)
	if g.Rule != "" {
		s += fmt.Sprintf(", rule: %q", g.Rule)
	}
	return s + "}"
}
