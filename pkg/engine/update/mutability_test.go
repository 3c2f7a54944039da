package update

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

var modes = []Mutability{Immutable, AddOnly, RemoveOnly}

// transition is an update of the KEP's examples, with the modes that allow it.
type transition struct {
	old, new string
	allowed  []Mutability
}

var all = modes

// kepExample is one of the examples of KEP "Immutable fields", with its
// schema (MODE stands for the mode under test, LISTTYPE and MAPTYPE for each
// list or map type the example names) and its transitions.
type kepExample struct {
	name      string
	schema    string
	modes     []Mutability // the modes the example is about
	listTypes []string
	mapTypes  []string
	cases     []transition
}

var kepExamples = []kepExample{
	{
		name: "1 mutable object, immutable fields",
		schema: `
properties:
  foo: {type: string, x-kubernetes-mutability: MODE}`,
		modes: modes,
		cases: []transition{
			{`{}`, `{"foo":"a"}`, []Mutability{AddOnly}},
			{`{"foo":"a"}`, `{}`, []Mutability{RemoveOnly}},
			{`{"foo":"a"}`, `{"foo":"b"}`, nil},
			{`{"foo":"a"}`, `{"foo":"a"}`, all},
		},
	},
	{
		name: "2 mutable array, immutable items, list type undefined or atomic",
		schema: `
properties:
  foo:
    type: array
    LISTTYPE
    items: {type: object, properties: {x: {type: string}}, x-kubernetes-mutability: MODE}`,
		modes:     []Mutability{Immutable},
		listTypes: []string{"", "atomic"},
		cases: []transition{
			{`{}`, `{"foo":[{"x":"a"}]}`, all},
			{`{"foo":[{"x":"a"}]}`, `{}`, all},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[{"x":"a"},{"x":"b"}]}`, all},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[]}`, all},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[{"x":"b"}]}`, nil},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[{"x":"b"},{"x":"a"}]}`, nil},
		},
	},
	{
		name: "3 mutable array, immutable items, list type map",
		schema: `
properties:
  foo:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [k]
    items: {type: object, properties: {k: {type: string}, v: {type: integer}}, x-kubernetes-mutability: MODE}`,
		modes: []Mutability{Immutable},
		cases: []transition{
			{`{}`, `{"foo":[{"k":"a"}]}`, all},
			{`{"foo":[{"k":"a"}]}`, `{}`, all},
			{`{"foo":[{"k":"a"}]}`, `{"foo":[{"k":"a"},{"k":"b"}]}`, all},
			{`{"foo":[{"k":"a"}]}`, `{"foo":[]}`, all},
			{`{"foo":[{"k":"a"}]}`, `{"foo":[{"k":"b"}]}`, all},
			{`{"foo":[{"k":"a"},{"k":"b"}]}`, `{"foo":[{"k":"b"},{"k":"a"}]}`, all},
			{`{"foo":[{"k":"a","v":1}]}`, `{"foo":[{"k":"a","v":2}]}`, nil},
		},
	},
	{
		name: "4 mutable array, immutable items, list type set",
		schema: `
properties:
  foo:
    type: array
    x-kubernetes-list-type: set
    items: {type: string, x-kubernetes-mutability: MODE}`,
		modes: []Mutability{Immutable},
		cases: []transition{
			{`{}`, `{"foo":["a"]}`, all},
			{`{"foo":["a"]}`, `{}`, all},
			{`{"foo":["a"]}`, `{"foo":["a","b"]}`, all},
			{`{"foo":["a"]}`, `{"foo":[]}`, all},
			{`{"foo":["a"]}`, `{"foo":["b"]}`, all},
			{`{"foo":["a"]}`, `{"foo":["b","a"]}`, all},
		},
	},
	{
		name: "4b mutable set of atomic string maps",
		schema: `
properties:
  foo:
    type: array
    x-kubernetes-list-type: set
    items:
      type: object
      x-kubernetes-mutability: MODE
      x-kubernetes-map-type: atomic
      additionalProperties: {type: string}`,
		modes: []Mutability{Immutable},
		cases: []transition{
			{`{"foo":[{"a":"1"}]}`, `{"foo":[{"a":"1"},{"b":"2"}]}`, all},
			{`{"foo":[{"a":"1"}]}`, `{"foo":[{"a":"2"}]}`, all},
			{`{"foo":[{"a":"1"},{"b":"2"}]}`, `{"foo":[{"b":"2"}]}`, all},
		},
	},
	{
		name: "5 mutable map, immutable values",
		schema: `
properties:
  foo:
    type: object
    MAPTYPE
    additionalProperties: {type: string, x-kubernetes-mutability: MODE}`,
		modes:    []Mutability{Immutable},
		mapTypes: []string{"", "granular", "atomic"},
		cases: []transition{
			{`{}`, `{"foo":{"a":"1"}}`, all},
			{`{"foo":{"a":"1"}}`, `{}`, all},
			{`{"foo":{"a":"1"}}`, `{"foo":{"a":"1","b":"2"}}`, all},
			{`{"foo":{"a":"1"}}`, `{"foo":{}}`, all},
			{`{"foo":{"a":"1"}}`, `{"foo":{"b":"1"}}`, all},
			{`{"foo":{"a":"1"}}`, `{"foo":{"a":"2"}}`, nil},
		},
	},
	{
		name: "7 immutable array keys, list type undefined or atomic",
		schema: `
properties:
  foo:
    type: array
    LISTTYPE
    x-kubernetes-key-mutability: MODE
    items: {type: object, properties: {x: {type: string}}}`,
		modes:     modes,
		listTypes: []string{"", "atomic"},
		cases: []transition{
			{`{}`, `{"foo":[]}`, all},
			{`{"foo":[]}`, `{}`, all},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[{"x":"b"}]}`, all},
			{`{}`, `{"foo":[{"x":"a"}]}`, []Mutability{AddOnly}},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[{"x":"a"},{"x":"b"}]}`, []Mutability{AddOnly}},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[{"x":"b"},{"x":"a"}]}`, []Mutability{AddOnly}},
			{`{"foo":[{"x":"a"}]}`, `{}`, []Mutability{RemoveOnly}},
			{`{"foo":[{"x":"a"}]}`, `{"foo":[]}`, []Mutability{RemoveOnly}},
		},
	},
	{
		name: "8 immutable array keys, list type map",
		schema: `
properties:
  foo:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [k]
    x-kubernetes-key-mutability: MODE
    items: {type: object, properties: {k: {type: string}, v: {type: integer}}}`,
		modes: modes,
		cases: []transition{
			{`{}`, `{"foo":[]}`, all},
			{`{"foo":[]}`, `{}`, all},
			{`{"foo":[{"k":"a","v":1}]}`, `{"foo":[{"k":"a","v":2}]}`, all},
			{`{"foo":[{"k":"a"},{"k":"b"}]}`, `{"foo":[{"k":"b"},{"k":"a"}]}`, all},
			{`{}`, `{"foo":[{"k":"a"}]}`, []Mutability{AddOnly}},
			{`{"foo":[{"k":"a"}]}`, `{"foo":[{"k":"a"},{"k":"b"}]}`, []Mutability{AddOnly}},
			{`{"foo":[{"k":"a"}]}`, `{}`, []Mutability{RemoveOnly}},
			{`{"foo":[{"k":"a"}]}`, `{"foo":[]}`, []Mutability{RemoveOnly}},
			{`{"foo":[{"k":"a"}]}`, `{"foo":[{"k":"b"}]}`, nil},
		},
	},
	{
		// The KEP's text says removing a key is "disallowed for RemoveOnly";
		// Examples 7, 8 and 10 allow it for RemoveOnly, and so does this
		// reading (docs/mutability.md).
		name: "9 immutable array keys, list type set",
		schema: `
properties:
  foo:
    type: array
    x-kubernetes-list-type: set
    x-kubernetes-key-mutability: MODE
    items: {type: string}`,
		modes: modes,
		cases: []transition{
			{`{}`, `{"foo":[]}`, all},
			{`{"foo":[]}`, `{}`, all},
			{`{"foo":["a","b"]}`, `{"foo":["b","a"]}`, all},
			{`{"foo":["a"]}`, `{"foo":["a","b"]}`, []Mutability{AddOnly}},
			{`{"foo":["a"]}`, `{"foo":["b","a"]}`, []Mutability{AddOnly}},
			{`{"foo":["a"]}`, `{"foo":[]}`, []Mutability{RemoveOnly}},
			{`{"foo":["a"]}`, `{"foo":["b"]}`, nil},
		},
	},
	{
		name: "10 immutable map keys",
		schema: `
properties:
  foo:
    type: object
    MAPTYPE
    x-kubernetes-key-mutability: MODE
    additionalProperties: {type: string}`,
		modes:    modes,
		mapTypes: []string{"", "granular", "atomic"},
		cases: []transition{
			{`{}`, `{"foo":{}}`, all},
			{`{"foo":{}}`, `{}`, all},
			{`{"foo":{"a":"1"}}`, `{"foo":{"a":"2"}}`, all},
			{`{}`, `{"foo":{"a":"1"}}`, []Mutability{AddOnly}},
			{`{"foo":{"a":"1"}}`, `{"foo":{"a":"1","b":"2"}}`, []Mutability{AddOnly}},
			{`{"foo":{"a":"1"}}`, `{}`, []Mutability{RemoveOnly}},
			{`{"foo":{"a":"1"}}`, `{"foo":{"b":"1"}}`, nil},
		},
	},
}

func mustSchema(t *testing.T, y string) *Schema {
	t.Helper()
	var raw map[string]interface{}
	if err := yaml.Unmarshal([]byte("type: object\n"+strings.TrimPrefix(y, "\n")), &raw); err != nil {
		t.Fatalf("schema: %v\n%s", err, y)
	}
	s, errs := ParseSchema(raw, field.NewPath("schema"))
	if len(errs) > 0 {
		t.Fatalf("placement: %v\n%s", errs, y)
	}
	return s
}

func mustObject(t *testing.T, js string) map[string]interface{} {
	t.Helper()
	var obj map[string]interface{}
	if err := json.Unmarshal([]byte(js), &obj); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return obj
}

func contains(ms []Mutability, m Mutability) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

func TestKEPExamples(t *testing.T) {
	for _, ex := range kepExamples {
		listTypes, mapTypes := ex.listTypes, ex.mapTypes
		if listTypes == nil {
			listTypes = []string{""}
		}
		if mapTypes == nil {
			mapTypes = []string{""}
		}
		for _, mode := range ex.modes {
			for _, lt := range listTypes {
				for _, mt := range mapTypes {
					y := strings.ReplaceAll(ex.schema, "MODE", string(mode))
					y = strings.ReplaceAll(y, "LISTTYPE", typeLine("x-kubernetes-list-type", lt))
					y = strings.ReplaceAll(y, "MAPTYPE", typeLine("x-kubernetes-map-type", mt))
					s := mustSchema(t, y)
					for _, tc := range ex.cases {
						name := fmt.Sprintf("Example %s, %s, list type %q, map type %q: %s -> %s", ex.name, mode, lt, mt, tc.old, tc.new)
						v := CheckMutability(s, mustObject(t, tc.old), mustObject(t, tc.new))
						if want := contains(tc.allowed, mode); want != (len(v) == 0) {
							t.Errorf("%s: allowed = %v, want %v (violations: %+v)", name, len(v) == 0, want, v)
						}
						// Nothing is ever refused for staying the same.
						if v := CheckMutability(s, mustObject(t, tc.old), mustObject(t, tc.old)); len(v) > 0 {
							t.Errorf("%s: identical objects refused: %+v", name, v)
						}
					}
				}
			}
		}
	}
}

func typeLine(key, value string) string {
	if value == "" {
		return ""
	}
	return key + ": " + value
}

// The recursive scope: a marker makes everything below it Immutable, and a
// field whose (unmarked) parent object goes away counts as removed.
func TestRecursiveScope(t *testing.T) {
	s := mustSchema(t, `
properties:
  spec:
    type: object
    properties:
      template:
        type: object
        x-kubernetes-mutability: AddOnly
        properties:
          image: {type: string}
          args: {type: array, items: {type: string}}
      name: {type: string, x-kubernetes-mutability: Immutable}`)
	for _, tc := range []struct {
		old, new string
		want     []string // "path rule: message"
	}{
		{`{}`, `{"spec":{"template":{"image":"a"}}}`, nil},
		{`{"spec":{"template":{"image":"a"}}}`, `{"spec":{"template":{"image":"b"}}}`,
			[]string{"spec.template x-kubernetes-mutability: AddOnly: cannot be changed"}},
		{`{"spec":{"template":{"args":["x"]}}}`, `{"spec":{"template":{"args":["x","y"]}}}`,
			[]string{"spec.template x-kubernetes-mutability: AddOnly: cannot be changed"}},
		{`{"spec":{"template":{"image":"a"}}}`, `{"spec":{}}`,
			[]string{"spec.template x-kubernetes-mutability: AddOnly: cannot be removed"}},
		{`{"spec":{"name":"n","template":{}}}`, `{}`,
			[]string{"spec.name x-kubernetes-mutability: Immutable: cannot be removed", "spec.template x-kubernetes-mutability: AddOnly: cannot be removed"}},
		{`{"spec":{"name":"n"}}`, `{"spec":{"name":null}}`,
			[]string{"spec.name x-kubernetes-mutability: Immutable: cannot be changed"}},
	} {
		var got []string
		for _, v := range CheckMutability(s, mustObject(t, tc.old), mustObject(t, tc.new)) {
			got = append(got, v.Path+" "+v.Rule+": "+v.Message)
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s -> %s:\ngot  %q\nwant %q", tc.old, tc.new, got, tc.want)
		}
	}
}

// Key-set violations name the keys, and item paths name the new position.
func TestViolationMessages(t *testing.T) {
	s := mustSchema(t, `
properties:
  ports:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name]
    x-kubernetes-key-mutability: AddOnly
    items:
      type: object
      properties:
        name: {type: string}
        port: {type: integer, x-kubernetes-mutability: Immutable}`)
	old := mustObject(t, `{"ports":[{"name":"a","port":1},{"name":"b","port":2}]}`)
	new := mustObject(t, `{"ports":[{"name":"b","port":3}]}`)
	var got []string
	for _, v := range CheckMutability(s, old, new) {
		got = append(got, fmt.Sprintf("%s %s: %s (%v -> %v)", v.Path, v.Rule, v.Message, v.Old, v.New))
	}
	want := []string{
		`ports x-kubernetes-key-mutability: AddOnly: key {name="a"} cannot be removed (<nil> -> <nil>)`,
		`ports[0].port x-kubernetes-mutability: Immutable: cannot be changed (2 -> 3)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The KEP's placement rules, one by one.
func TestPlacement(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"root", `x-kubernetes-mutability: Immutable`,
			"schema.x-kubernetes-mutability: Forbidden: must not be set at the root of the schema"},
		{"root keys", `x-kubernetes-key-mutability: Immutable`,
			"schema.x-kubernetes-key-mutability: Forbidden: must not be set at the root of the schema"},
		{"metadata", `
properties:
  metadata: {type: object, x-kubernetes-mutability: Immutable}`,
			"schema.properties[metadata].x-kubernetes-mutability: Forbidden: must not be set in metadata"},
		{"inside metadata", `
properties:
  metadata:
    type: object
    properties:
      name: {type: string, x-kubernetes-mutability: Immutable}`,
			"schema.properties[metadata].properties[name].x-kubernetes-mutability: Forbidden: must not be set in metadata"},
		{"key mutability on an object with properties", `
properties:
  spec: {type: object, x-kubernetes-key-mutability: Immutable, properties: {a: {type: string}}}`,
			"schema.properties[spec].x-kubernetes-key-mutability: Forbidden: only allowed for arrays and for objects with additionalProperties (maps), not for objects with properties or scalars"},
		{"key mutability on a scalar", `
properties:
  a: {type: string, x-kubernetes-key-mutability: AddOnly}`,
			"schema.properties[a].x-kubernetes-key-mutability: Forbidden: only allowed for arrays and for objects with additionalProperties (maps), not for objects with properties or scalars"},
		{"AddOnly on an array", `
properties:
  a: {type: array, x-kubernetes-mutability: AddOnly, items: {type: string}}`,
			`schema.properties[a].x-kubernetes-mutability: Unsupported value: "AddOnly": supported values: "Immutable"`},
		{"RemoveOnly on a map", `
properties:
  a: {type: object, x-kubernetes-mutability: RemoveOnly, additionalProperties: {type: string}}`,
			`schema.properties[a].x-kubernetes-mutability: Unsupported value: "RemoveOnly": supported values: "Immutable"`},
		{"unknown value", `
properties:
  a: {type: string, x-kubernetes-mutability: ReadOnly}`,
			`schema.properties[a].x-kubernetes-mutability: Unsupported value: "ReadOnly": supported values: "Immutable", "AddOnly", "RemoveOnly"`},
		{"allowed: Immutable on an array, key mutability on a map", `
properties:
  a: {type: array, x-kubernetes-mutability: Immutable, items: {type: string}}
  b: {type: object, x-kubernetes-key-mutability: RemoveOnly, additionalProperties: {type: string}}
  c: {type: object, x-kubernetes-mutability: AddOnly, properties: {d: {type: string}}}`,
			""},
	} {
		var raw map[string]interface{}
		if err := yaml.Unmarshal([]byte("type: object\n"+strings.TrimPrefix(tc.schema, "\n")), &raw); err != nil {
			t.Fatal(err)
		}
		_, errs := ParseSchema(raw, field.NewPath("schema"))
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
