package fieldpath

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for s, want := range map[string]Path{
		"":                     nil,
		"<root>":               nil,
		"spec":                 {Key("spec")},
		"spec.ports[0].name":   {Key("spec"), Key("ports"), Index(0), Key("name")},
		"spec.labels[app]":     {Key("spec"), Key("labels"), Key("app")},
		"items[1][2]":          {Key("items"), Index(1), Index(2)},
		"spec.rules[0].action": {Key("spec"), Key("rules"), Index(0), Key("action")},
	} {
		if got := Parse(s); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %v, want %v", s, got, want)
		}
	}
	// String is its inverse where keys have no brackets.
	for _, s := range []string{"spec", "spec.ports[0].name", "items[1][2]"} {
		if got := Parse(s).String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
}
