package update

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// RawWalk visits properties by name, then additionalProperties, then items
// (items first when asked), only where they are schemas; a node whose
// children are not walked is still left.
func TestRawWalk(t *testing.T) {
	var raw map[string]interface{}
	if err := yaml.Unmarshal([]byte(`
type: object
properties:
  z: {type: string}
  a:
    type: array
    items: {type: string}
    additionalProperties: {type: integer}
  skip:
    type: object
    properties: {below: {type: string}}
  bad: not a schema
additionalProperties: true
items: [{type: string}]
`), &raw); err != nil {
		t.Fatal(err)
	}
	walk := func(itemsFirst bool) string {
		var got []string
		RawWalk[string]{
			ItemsFirst: itemsFirst,
			Enter: func(parent string, step RawStep, node map[string]interface{}) (string, bool) {
				path := parent + "/" + step.Key
				if step.Key == RawProperties {
					path += "/" + step.Name
				}
				got = append(got, "enter "+path)
				return path, step.Name != "skip"
			},
			Leave: func(path string) { got = append(got, "leave "+path) },
		}.Walk(raw, "")
		return strings.Join(got, "\n")
	}
	want := `enter /
enter //properties/a
enter //properties/a/additionalProperties
leave //properties/a/additionalProperties
enter //properties/a/items
leave //properties/a/items
leave //properties/a
enter //properties/skip
leave //properties/skip
enter //properties/z
leave //properties/z
leave /`
	if got := walk(false); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	itemsFirst := strings.Replace(want, `enter //properties/a/additionalProperties
leave //properties/a/additionalProperties
enter //properties/a/items
leave //properties/a/items`, `enter //properties/a/items
leave //properties/a/items
enter //properties/a/additionalProperties
leave //properties/a/additionalProperties`, 1)
	if got := walk(true); got != itemsFirst || itemsFirst == want {
		t.Errorf("items first: got:\n%s\nwant:\n%s", got, itemsFirst)
	}
}

// BenchmarkParseSchemaDeep: a schema nested 4,000 deep (properties, with a
// map and a list every tenth level) and a marker at the bottom.
//
//	go test ./pkg/engine/update -run '^$' -bench ParseSchemaDeep -benchmem
func BenchmarkParseSchemaDeep(b *testing.B) {
	s := map[string]interface{}{"type": "string", MutabilityExtension: "Immutable"}
	for i := 0; i < 4000; i++ {
		switch i % 10 {
		case 3:
			s = map[string]interface{}{"type": "object", "additionalProperties": s}
		case 7:
			s = map[string]interface{}{"type": "array", "items": s}
		default:
			s = map[string]interface{}{"type": "object", "properties": map[string]interface{}{"a": s}}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if s, errs := ParseSchema(s, field.NewPath("schema")); len(errs) > 0 || !s.HasMarkers() {
			b.Fatal(errs)
		}
	}
}
