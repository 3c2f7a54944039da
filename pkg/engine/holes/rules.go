package holes

import (
	"regexp"
	"strings"
)

// A rule meant to make a field immutable: on the field itself
// (self == oldSelf and its variants, optionalOldSelf's forms), or on its
// parent comparing one property (!has(oldSelf.x) || self.x == oldSelf.x).
var (
	selfRules = map[string]bool{
		"self==oldSelf": true,
		"oldSelf==self": true,
		"!oldSelf.hasValue()||self==oldSelf.value()":    true,
		"!oldSelf.hasValue()||oldSelf.value()==self":    true,
		"oldSelf.hasValue()?self==oldSelf.value():true": true,
		"oldSelf.hasValue()?oldSelf.value()==self:true": true,
		"!has(oldSelf)||self==oldSelf":                  true,
		"oldSelf.orValue(self)==self":                   true,
		"self==oldSelf.orValue(self)":                   true,
	}
	childEqual = regexp.MustCompile(`self((?:\.[A-Za-z_][A-Za-z0-9_]*)+)==oldSelf((?:\.[A-Za-z_][A-Za-z0-9_]*)+)|oldSelf((?:\.[A-Za-z_][A-Za-z0-9_]*)+)==self((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)
	hasCall    = regexp.MustCompile(`has\((?:old)?[sS]elf(?:\.[A-Za-z_][A-Za-z0-9_]*)+\)`)
)

// immutableTarget reads rule, written on a schema node: the property path
// below the node it makes immutable ("" the node itself), and whether it
// is such a rule at all.
func immutableTarget(rule string) (string, bool) {
	r := strings.Join(strings.Fields(rule), "")
	r = unparen(r)
	if selfRules[r] {
		return "", true
	}
	m := childEqual.FindStringSubmatch(r)
	if m == nil {
		return "", false
	}
	a, b := m[1], m[2]
	if a == "" {
		a, b = m[3], m[4]
	}
	if a != b {
		return "", false
	}
	// The rest may only be presence tests and logic around the equality.
	rest := strings.Replace(r, m[0], "", 1)
	rest = hasCall.ReplaceAllString(rest, "")
	rest = strings.NewReplacer("!", "", "||", "", "&&", "", "(", "", ")", "", "==", "", "true", "", "false", "").Replace(rest)
	if rest != "" {
		return "", false
	}
	return strings.TrimPrefix(a, "."), true
}

func unparen(r string) string {
	for strings.HasPrefix(r, "(") && strings.HasSuffix(r, ")") {
		depth := 0
		whole := true
		for i, c := range r {
			switch c {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 && i != len(r)-1 {
					whole = false
				}
			}
		}
		if !whole {
			break
		}
		r = r[1 : len(r)-1]
	}
	return r
}
