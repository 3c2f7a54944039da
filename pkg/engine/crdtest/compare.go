package crdtest

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// Compare says how obs differs from what e expects: nothing when it is
// what e expects. Each expected error matches an observed one of its own,
// in any order: each field of it that is set must be the observed one's
// (message a part of its detail, messageContains a part of its full
// text); unless ErrorsSubset, every observed error must be expected too.
// Pruned and defaulted fields are the whole set, when given.
func Compare(e *Expect, obs *Observed) []string {
	var out []string
	if e.Result != obs.Result {
		out = append(out, fmt.Sprintf("expected %s, observed %s", e.Result, obs.Result))
	}
	if e.Errors != nil {
		out = append(out, compareErrors(e.Errors, obs.Errors, !e.ErrorsSubset)...)
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

// compareErrors matches the errors expected with those observed, as
// many as can be (a bipartite matching: the order they are written in
// does not decide); with exact, an observed error no expected one
// matches differs too.
func compareErrors(want []ErrorExpect, got []Error, exact bool) []string {
	match := matchErrors(want, got)
	var out []string
	for i, w := range want {
		if match[i] < 0 {
			out = append(out, notObserved(w, got))
		}
	}
	if !exact {
		return out
	}
	used := make([]bool, len(got))
	for _, j := range match {
		if j >= 0 {
			used[j] = true
		}
	}
	for i, g := range got {
		if !used[i] {
			out = append(out, "observed error not expected: "+g.String())
		}
	}
	return out
}

// matchErrors is, for each expected error, the index of the observed one
// it is matched with (-1: none), as many matched as can be (Kuhn's
// augmenting paths: a case has a few errors).
func matchErrors(want []ErrorExpect, got []Error) []int {
	match := make([]int, len(want))
	owner := make([]int, len(got))
	for i := range owner {
		owner[i] = -1
	}
	var augment func(i int, seen []bool) bool
	augment = func(i int, seen []bool) bool {
		for j, g := range got {
			if seen[j] || !want[i].matches(g) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || augment(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	for i := range want {
		augment(i, make([]bool, len(got)))
	}
	for i := range match {
		match[i] = -1
	}
	for j, i := range owner {
		if i >= 0 {
			match[i] = j
		}
	}
	return match
}

// notObserved says that w matched no observed error; for a w with
// messageContains, with the full text of each observed error it might
// have been (those its other fields match, else all), so that both
// strings are shown.
func notObserved(w ErrorExpect, got []Error) string {
	s := fmt.Sprintf("expected error (line %d) %s, not observed", w.Line, w.String())
	if w.MessageContains == "" || len(got) == 0 {
		return s
	}
	others := w
	others.MessageContains = ""
	var texts []string
	for _, g := range got {
		if others.matches(g) {
			texts = append(texts, fmt.Sprintf("%q", g.Text))
		}
	}
	if len(texts) == 0 {
		for _, g := range got {
			texts = append(texts, fmt.Sprintf("%q", g.Text))
		}
	}
	if len(texts) == 1 {
		return s + fmt.Sprintf(": %q is not in the server's error %s", w.MessageContains, texts[0])
	}
	return s + fmt.Sprintf(": %q is in none of the server's errors: %s", w.MessageContains, strings.Join(texts, ", "))
}

func (w ErrorExpect) matches(g Error) bool {
	return (w.Field == "" || w.Field == g.Field) &&
		(w.Type == "" || w.Type == g.Type) &&
		(w.Rule == "" || w.Rule == g.Rule) &&
		strings.Contains(g.Message, w.Message) &&
		strings.Contains(g.Text, w.MessageContains)
}

func (w ErrorExpect) String() string {
	var parts []string
	for _, kv := range [][2]string{{"field", w.Field}, {"type", w.Type}, {"message", w.Message}, {"messageContains", w.MessageContains}, {"rule", w.Rule}} {
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
