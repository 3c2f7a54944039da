package strategy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// The server's status strategy, as ValidateStatusUpdate runs it on
// createCRD's Widget: the object it stores is the old one but for the
// request's status (spec and labels as they were, the generation not
// bumped), and it refuses only what status breaks; the update of the
// object itself refuses by spec and ignores status.
func TestValidateStatusUpdate(t *testing.T) {
	v, err := Validators{}.For(createRegistryCRD(t), "v1")
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]interface{}{"name": "w", "namespace": "ns", "generation": int64(1), "labels": map[string]interface{}{"a": "b"}},
		"spec":     map[string]interface{}{"engine": "mysql", "size": "small", "replicas": int64(1), "minReplicas": int64(0)},
	}
	type refusal struct{ Field, Type string }
	for _, tc := range []struct {
		name                string
		spec, status        map[string]interface{}
		wantStatus, wantObj []refusal
	}{
		{name: "a status", status: map[string]interface{}{"phase": "Ready"}},
		{name: "a status the schema refuses", status: map[string]interface{}{"phase": "Broken"},
			wantStatus: []refusal{{"status.phase", "Unsupported value"}, {"<nil>", "Invalid value"}}},
		{name: "a spec its rule refuses, and a status", spec: map[string]interface{}{"engine": "mysql", "size": "small", "replicas": int64(1), "minReplicas": int64(2)},
			status:  map[string]interface{}{"phase": "Broken"},
			wantObj: []refusal{{"spec", "Invalid value"}}, wantStatus: []refusal{{"status.phase", "Unsupported value"}, {"<nil>", "Invalid value"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec == nil {
				spec = old["spec"].(map[string]interface{})
			}
			new := map[string]interface{}{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]interface{}{"name": "w", "namespace": "ns", "labels": map[string]interface{}{"c": "d"}},
				"spec":     spec, "status": tc.status,
			}
			stored, errs := v.ValidateStatusUpdate(old, new)
			var got []refusal
			for _, e := range errs {
				got = append(got, refusal{e.Field, e.Type.String()})
			}
			if d := cmp.Diff(tc.wantStatus, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("/status refusals (-want +got):\n%s", d)
			}
			if d := cmp.Diff(old["spec"], stored["spec"]); d != "" {
				t.Errorf("/status stored another spec than the old one (-old +stored):\n%s", d)
			}
			if d := cmp.Diff(tc.status, stored["status"]); d != "" {
				t.Errorf("/status stored another status than the request's (-request +stored):\n%s", d)
			}
			meta := stored["metadata"].(map[string]interface{})
			if d := cmp.Diff(old["metadata"].(map[string]interface{})["labels"], meta["labels"]); d != "" || meta["generation"] != int64(1) {
				t.Errorf("/status stored metadata %v, want the old labels and generation 1", meta)
			}
			got = nil
			for _, e := range v.ValidateUpdate(old, new) {
				got = append(got, refusal{e.Field, e.Type.String()})
			}
			if d := cmp.Diff(tc.wantObj, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("refusals of the object's update (-want +got):\n%s", d)
			}
		})
	}
}

// A version without the status subresource has no status validator: the
// server answers 404 to a write of /status.
func TestStatusValidatorWithoutSubresource(t *testing.T) {
	docs, err := document.Read(strings.NewReader(strings.Replace(strings.Replace(createCRD, "SCOPE", "Namespaced", 1), "    subresources: {status: {}}\n", "", 1)), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd, ok, err := schema.FromObject(docs[0].Object, Validators{})
	if err != nil || !ok {
		t.Fatalf("the CRD: %v", err)
	}
	if crd.StatusSubresource("v1") {
		t.Fatal("the CRD still has the status subresource")
	}
	_, err = Validators{}.StatusValidator(crd, "v1")
	if want := `version "v1" of CustomResourceDefinition widgets.example.com has no status subresource`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := (Validators{}).StatusValidator(createRegistryCRD(t), "v1"); err != nil {
		t.Errorf("with the status subresource: %v", err)
	}
}

func createRegistryCRD(t *testing.T) *schema.CRD {
	t.Helper()
	crd, ok := createRegistry(t, "Namespaced").Lookup("example.com/v1", "Widget")
	if !ok {
		t.Fatal("no Widget")
	}
	return crd
}
