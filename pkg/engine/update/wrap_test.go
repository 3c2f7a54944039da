package update_test

import (
	"encoding/json"
	"errors"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

const fooCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.com}
spec:
  group: example.com
  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
`

// An object the server cannot decode fails the check with an error that
// names which object, wrapping the decoder's (issue 39: errors.As reaches
// the cause through update and prune), its text as before.
func TestCheckWrapsTheCause(t *testing.T) {
	var obj map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(fooCRD), &obj); err != nil {
		t.Fatal(err)
	}
	crd, _, err := schema.FromObject(obj, strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]interface{}{"name": "a"}}
	bad := map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]interface{}{"name": "a", "labels": "x"}}
	const cause = "metadata: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string"
	for _, tc := range []struct {
		name     string
		old, new map[string]interface{}
		want     string
	}{
		{"old", bad, good, "the old object: " + cause},
		{"new", good, bad, "the server would refuse the new object: " + cause},
	} {
		_, err := update.Check(tc.old, tc.new, crd, nil, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) || te.Field != "labels" {
			t.Errorf("%s: errors.As finds no *json.UnmarshalTypeError of the labels in %v", tc.name, err)
		}
	}
}
