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

// immutableTargets reads rule, written on a schema node: the property
// paths below the node it makes immutable ("" the node itself), and
// whether it is such a rule at all: equalities of self and oldSelf, of
// the node or of its properties, with presence tests and logic around.
func immutableTargets(rule string) ([]string, bool) {
	r := strings.Join(strings.Fields(rule), "")
	r = unparen(r)
	if selfRules[r] {
		return []string{""}, true
	}
	matches := childEqual.FindAllStringSubmatch(r, -1)
	if matches == nil {
		return nil, false
	}
	var out []string
	rest := r
	for _, m := range matches {
		a, b := m[1], m[2]
		if a == "" {
			a, b = m[3], m[4]
		}
		if a != b {
			return nil, false
		}
		rest = strings.Replace(rest, m[0], "", 1)
		out = append(out, unescape(strings.TrimPrefix(a, ".")))
	}
	// The rest may only be presence tests and logic around the equalities.
	rest = hasCall.ReplaceAllString(rest, "")
	rest = strings.NewReplacer("!", "", "||", "", "&&", "", "(", "", ")", "", "==", "", "true", "", "false", "").Replace(rest)
	if rest != "" {
		return nil, false
	}
	return out, true
}

// unescape turns CEL's escapes of property names (__namespace__ for a
// reserved word, __dash__, __dot__, __slash__, __underscores__) back into
// the names, in each step of a dotted path.
func unescape(p string) string {
	parts := strings.Split(p, ".")
	for i, s := range parts {
		if strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__") && len(s) > 4 && !strings.Contains(s[2:len(s)-2], "__") && celReserved[s[2:len(s)-2]] {
			parts[i] = s[2 : len(s)-2]
			continue
		}
		parts[i] = strings.NewReplacer("__underscores__", "__", "__dot__", ".", "__dash__", "-", "__slash__", "/").Replace(s)
	}
	return strings.Join(parts, ".")
}

// celReserved are the words a property name is escaped for.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true, "continue": true,
	"else": true, "for": true, "function": true, "if": true, "import": true, "let": true, "loop": true, "package": true,
	"namespace": true, "return": true, "var": true, "void": true, "while": true,
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
