package schema_test

import (
	"encoding/json"
	"errors"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// A CRD that does not decode is an error that says so, wrapping the
// decoder's (issue 39: errors.As reaches the cause), its text as before.
func TestDecodeObjectWrapsTheCause(t *testing.T) {
	var obj map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(crdWith("v1", "foos.example.com", "versions: x\n")), &obj); err != nil {
		t.Fatal(err)
	}
	_, ok, err := schema.DecodeObject(obj, nil)
	const want = "invalid CustomResourceDefinition: json: cannot unmarshal string into Go struct field CustomResourceDefinitionSpec.spec.versions of type []v1.CustomResourceDefinitionVersion"
	if !ok || err == nil || err.Error() != want {
		t.Fatalf("DecodeObject: %v, %v; want %q", ok, err, want)
	}
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		t.Errorf("errors.As finds no *json.UnmarshalTypeError in %v", err)
	}
}
