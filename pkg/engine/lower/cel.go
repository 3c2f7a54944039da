package lower

import (
	"fmt"
	"sort"
	"strings"

	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// The CEL expressions of the rules are built from small boolean pieces.
// "true" stands for a condition that always holds, so that guards which
// cannot fail (a value present at its anchor) leave no trace in a rule.

func and(xs ...string) string {
	var parts []string
	for _, x := range xs {
		switch x {
		case "true":
			continue
		case "false":
			return "false"
		}
		parts = append(parts, x)
	}
	return join(parts, " && ", "true")
}

// join joins operands with a binary operator, in parentheses where needed.
func join(parts []string, op, empty string) string {
	switch len(parts) {
	case 0:
		return empty
	case 1:
		return parts[0]
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p
		// == and ! bind tighter than && and ||; && binds tighter than ||,
		// but "a || (b && c)" reads better, as CEL authors write it.
		if topLevel(p, " ? ") || topLevel(p, " || ") && op == " && " || topLevel(p, " && ") && op == " || " {
			out[i] = "(" + p + ")"
		}
	}
	return strings.Join(out, op)
}

// topLevel reports whether op occurs in x outside parentheses and quotes.
func topLevel(x, op string) bool {
	return outside(x, func(i int) bool { return strings.HasPrefix(x[i:], op) })
}

// outside reports whether found holds at a position of x outside quotes,
// parentheses, brackets and braces.
func outside(x string, found func(i int) bool) bool {
	depth := 0
	quote := byte(0)
	for i := 0; i < len(x); i++ {
		c := x[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case depth == 0 && found(i):
			return true
		}
	}
	return false
}

func or(xs ...string) string {
	var parts []string
	for _, x := range xs {
		switch x {
		case "false":
			continue
		case "true":
			return "true"
		}
		parts = append(parts, x)
	}
	return join(parts, " || ", "false")
}

func not(x string) string {
	switch x {
	case "true":
		return "false"
	case "false":
		return "true"
	}
	if strings.HasPrefix(x, "!") && atomic(x[1:]) {
		return x[1:]
	}
	return "!" + paren(x)
}

// implies is "a → b" written as the CEL authors write it.
func implies(a, b string) string { return or(not(a), b) }

// paren wraps an expression that is not atomic (a call, a name, a path).
func paren(x string) string {
	if atomic(x) {
		return x
	}
	return "(" + x + ")"
}

// atomic reports whether x needs no parentheses as an operand: no operator
// outside parentheses, brackets or quotes.
func atomic(x string) bool {
	return !outside(x, func(i int) bool { c := x[i]; return c == ' ' || c == '?' || c == '!' && i > 0 })
}

// property is the CEL selector of an object field: the API server's
// escaping of names that are CEL keywords or hold - . or /.
func property(name string) (string, error) {
	s, ok := apiservercel.Escape(name)
	if !ok {
		return "", fmt.Errorf("the field name %q cannot be written in CEL", name)
	}
	return s, nil
}

// side is one of the two objects of an update at some place in it: the
// CEL expression of the value, and when it is present.
type side struct {
	expr    string
	present string
}

// vars names the variables of nested comprehensions apart: x, then x2.
// unordered records a comparison left to CEL's ==, which ignores the order
// of list-type set and map items (see strictEqual).
type vars struct {
	n         map[string]int
	unordered bool
}

func (v *vars) next(prefix string) string {
	if v.n == nil {
		v.n = map[string]int{}
	}
	v.n[prefix]++
	if n := v.n[prefix]; n > 1 {
		return fmt.Sprintf("%s%d", prefix, n)
	}
	return prefix
}

// strictEqual is the emulation's strict equality (docs/mutability.md: the
// values' JSON) in CEL. The server's CEL equality ignores the order of
// list-type set and map items; where the schema has such lists, they are
// compared item by item, in order.
func strictEqual(s *update.Schema, a, b string, v *vars) (string, error) {
	out, err := orderedEqual(s, a, b, v)
	if err == nil && len(out) > maxOrdered {
		// The server refuses a rule of more than 100000 characters, and a
		// schema that large makes the ordered comparison too long: CEL's own.
		v.unordered = true
		return a + " == " + b, nil
	}
	return out, err
}

// maxOrdered bounds the length of an ordered comparison.
const maxOrdered = 20000

func orderedEqual(s *update.Schema, a, b string, v *vars) (string, error) {
	if !hasUnorderedList(s) {
		return a + " == " + b, nil
	}
	switch {
	case s.Items != nil:
		i, x := v.next("i"), v.next("x")
		inner, err := orderedEqual(s.Items, x, b+"["+i+"]", v)
		if err != nil {
			return "", err
		}
		return and("size("+a+") == size("+b+")", a+".all("+i+", "+x+", "+inner+")"), nil
	case s.AdditionalProperties != nil:
		k := v.next("k")
		inner, err := orderedEqual(s.AdditionalProperties, a+"["+k+"]", b+"["+k+"]", v)
		if err != nil {
			return "", err
		}
		return and("size("+a+") == size("+b+")", a+".all("+k+", "+k+" in "+b+" && "+paren(inner)+")"), nil
	}
	// An object with properties: field by field (the stored object has no others).
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		p, err := property(k)
		if err != nil {
			return "", err
		}
		inner, err := orderedEqual(s.Properties[k], a+"."+p, b+"."+p, v)
		if err != nil {
			return "", err
		}
		ha, hb := "has("+a+"."+p+")", "has("+b+"."+p+")"
		parts = append(parts, ha+" == "+hb, implies(ha, inner))
	}
	return and(parts...), nil
}

// hasUnorderedList reports whether a value of s can hold a list-type set or
// map, whose CEL equality ignores order.
func hasUnorderedList(s *update.Schema) bool {
	if s == nil {
		return false
	}
	if s.ListType == "set" || s.ListType == "map" {
		return true
	}
	if hasUnorderedList(s.Items) || hasUnorderedList(s.AdditionalProperties) {
		return true
	}
	for _, p := range s.Properties {
		if hasUnorderedList(p) {
			return true
		}
	}
	return false
}
