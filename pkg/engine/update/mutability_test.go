package update

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/kepimmutable"
)

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

// Every example of the KEP, in every mode, list type and map type it names.
func TestKEPExamples(t *testing.T) {
	cases, err := kepimmutable.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		s := mustSchema(t, strings.TrimPrefix(tc.Schema, "type: object\n"))
		v := CheckMutability(s, mustObject(t, tc.Old), mustObject(t, tc.New))
		if tc.Allowed != (len(v) == 0) {
			t.Errorf("%s: allowed = %v, want %v (violations: %+v)", tc.Name, len(v) == 0, tc.Allowed, v)
		}
		// Nothing is ever refused for staying the same.
		if v := CheckMutability(s, mustObject(t, tc.Old), mustObject(t, tc.Old)); len(v) > 0 {
			t.Errorf("%s: identical objects refused: %+v", tc.Name, v)
		}
	}
	if len(cases) < 100 {
		t.Errorf("only %d cases", len(cases))
	}
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
