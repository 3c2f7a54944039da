package holes

import (
	"strings"
	"testing"
)

// The rules read as meant to make a field immutable, and the field they
// name below their node; the others are not.
func TestImmutableTarget(t *testing.T) {
	for _, tc := range []struct {
		rule  string
		field string // the fields, joined by " "
		ok    bool
	}{
		{"self == oldSelf", "", true},
		{"oldSelf == self", "", true},
		{"(self == oldSelf)", "", true},
		{"!oldSelf.hasValue() || self == oldSelf.value()", "", true},
		{"oldSelf.hasValue() ? self == oldSelf.value() : true", "", true},
		{"self == oldSelf.orValue(self)", "", true},
		{"!has(oldSelf.cidr) || self.cidr == oldSelf.cidr", "cidr", true},
		{"!has(oldSelf.a) || has(self.a) && self.a == oldSelf.a", "a", true},
		{"oldSelf.a.b == self.a.b", "a.b", true},
		{"self.name == oldSelf.name && self.__namespace__ == oldSelf.__namespace__", "name namespace", true},
		{"self.a__dash__b == oldSelf.a__dash__b", "a-b", true},
		{"self.a == oldSelf.b", "", false},
		{"self.a == oldSelf.a && self.b == oldSelf.c", "", false},
		{"self >= oldSelf", "", false},
		{"self.size() >= oldSelf.size()", "", false},
		{"self.a == oldSelf.a || self.b == 'x'", "", false},
		{"self.a == 'x'", "", false},
	} {
		fields, ok := immutableTargets(tc.rule)
		if field := strings.Join(fields, " "); field != tc.field || ok != tc.ok {
			t.Errorf("%q: (%q, %v), want (%q, %v)", tc.rule, field, ok, tc.field, tc.ok)
		}
	}
}
