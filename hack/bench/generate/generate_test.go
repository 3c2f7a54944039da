package generate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/serverpath"
)

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [z]
            properties:
              a: {type: string, enum: [red, blue]}
              b: {type: integer, minimum: 3}
              c: {type: array, items: {type: object, properties: {d: {type: string, format: date-time}}}}
              e: {type: object, additionalProperties: {type: boolean}}
              f: {type: string}
              z: {x-kubernetes-int-or-string: true}
`

// TestObject: an object has the required properties and the first Width
// others, values the schema takes; the server prunes only the unknown
// field, and validates the rest.
func TestObject(t *testing.T) {
	js, err := sigsyaml.YAMLToJSON([]byte(crdYAML))
	if err != nil {
		t.Fatal(err)
	}
	crd, err := serverpath.DecodeCRD(js)
	if err != nil {
		t.Fatal(err)
	}
	got := Object(crd.Schema("v1"), "example.com/v1", "Thing", 1, true, Options{})
	want := map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Thing",
		"metadata": map[string]interface{}{"name": "bench-1", "namespace": "default", "labels": map[string]interface{}{"app": "bench"}},
		"spec": map[string]interface{}{
			"a": "blue", "b": int64(4),
			"c": []interface{}{map[string]interface{}{"d": "2026-01-02T03:04:05Z"}, map[string]interface{}{"d": "2026-01-02T03:04:05Z"}},
			"e": map[string]interface{}{"key0": true, "key1": true},
			"z": int64(1), UnknownField: int64(3),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Object (-want +got):\n%s", diff)
	}
	unknown, err := crd.Coerce(got, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec." + UnknownField}, unknown); diff != "" {
		t.Errorf("pruned (-want +got):\n%s", diff)
	}
	errs, err := crd.ValidateCreate(got, "default")
	if err != nil || len(errs) > 0 {
		t.Errorf("the server refuses the object: %v %v", err, errs)
	}
}
