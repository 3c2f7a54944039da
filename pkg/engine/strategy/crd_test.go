package strategy

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdregistry "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// updateCRD is a CRD of foos.example.com with the version list given.
func updateCRD(t *testing.T, scope, versions, status string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	doc := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.com}
spec:
  group: example.com
  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  scope: ` + scope + `
  versions:
` + versions + status
	var raw map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(doc), &raw); err != nil {
		t.Fatal(err)
	}
	crd, _, err := schema.DecodeObject(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return crd.Object
}

const (
	v1Storage = "  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"
	v1Served  = "  - {name: v1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}\n"
	v2Storage = "  - {name: v2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"
	noType    = "  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {properties: {spec: {type: object}}}}}\n"
	// established is the status of a CRD the server serves, as a cluster has it.
	established = `status:
  acceptedNames: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  conditions:
  - {type: NamesAccepted, status: "True", reason: NoConflicts, message: no conflicts found}
  - {type: Established, status: "True", reason: InitialNamesAccepted, message: the initial names have been accepted}
  storedVersions: [STORED]
`
)

// ValidateCRDUpdate against the upstream registry's own orchestration of an
// update (rest.BeforeUpdate with the CRD strategy) on the CRD as a cluster
// stores it; an old CRD of a file (no status) gives what the same CRD,
// established, gives.
func TestValidateCRDUpdate(t *testing.T) {
	for _, tc := range []struct {
		name                string
		oldScope, newScope  string
		old, new, oldStored string
		wantFields          []string
	}{
		{"unchanged", "Namespaced", "Namespaced", v1Storage, v1Storage, "v1", nil},
		{"scope", "Namespaced", "Cluster", v1Storage, v1Storage, "v1", []string{"spec.scope"}},
		{"storage moved", "Namespaced", "Namespaced", v1Storage, v1Served + v2Storage, "v1", nil},
		{"stored version removed", "Namespaced", "Namespaced", v1Served + v2Storage, v2Storage, "v1, v2", []string{"status.storedVersions[0]"}},
		{"non-structural", "Namespaced", "Namespaced", v1Storage, noType, "v1", []string{"spec.validation.openAPIV3Schema.type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := strings.Replace(established, "STORED", tc.oldStored, 1)
			stored := updateCRD(t, tc.oldScope, tc.old, status)
			new := updateCRD(t, tc.newScope, tc.new, "")
			got := fieldMessages(Validators{}.ValidateCRDUpdate(stored, new))
			want := upstreamCRDUpdate(t, stored, new)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ValidateCRDUpdate, against upstream (-want +got):\n%s", diff)
			}
			var fields []string
			for _, e := range (Validators{}).ValidateCRDUpdate(stored, new) {
				fields = append(fields, e.Field)
			}
			sort.Strings(fields)
			if diff := cmp.Diff(tc.wantFields, fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if strings.Contains(tc.oldStored, ",") {
				return // a file's old CRD has only its storage version stored
			}
			file := updateCRD(t, tc.oldScope, tc.old, "")
			if diff := cmp.Diff(got, fieldMessages(Validators{}.ValidateCRDUpdate(file, new))); diff != "" {
				t.Errorf("an old CRD of a file, against the same CRD established (-established +file):\n%s", diff)
			}
		})
	}
}

// fieldMessages are errs as the causes of the server's Invalid status.
func fieldMessages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+e.ErrorBody())
	}
	sort.Strings(out)
	return out
}

// upstreamCRDUpdate runs rest.BeforeUpdate of the upstream CRD strategy and
// returns the causes of its Invalid status, "field: message", sorted.
func upstreamCRDUpdate(t *testing.T, old, new *apiextensionsv1.CustomResourceDefinition) []string {
	t.Helper()
	stored, obj := &apiextensionsinternal.CustomResourceDefinition{}, &apiextensionsinternal.CustomResourceDefinition{}
	if err := scheme().Convert(old.DeepCopy(), stored, nil); err != nil {
		t.Fatal(err)
	}
	if err := scheme().Convert(new.DeepCopy(), obj, nil); err != nil {
		t.Fatal(err)
	}
	stored.ResourceVersion, stored.UID, stored.Generation = "1", "00000000-0000-0000-0000-000000000001", 1
	stored.CreationTimestamp = metav1.Now()
	obj.ResourceVersion = "1"
	err := rest.BeforeUpdate(crdregistry.NewStrategy(scheme()), requestContext("update", stored.Name), obj, stored)
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("upstream: %v, not an Invalid status", err)
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	sort.Strings(out)
	return out
}

// Two definitions of one CRD name (an upgrade's old and new) each validate
// with their own schema, through one Validators.
func TestValidatorsPerDefinition(t *testing.T) {
	schemaOf := func(max string) *schema.CRD {
		crd, _, err := schema.DecodeObject(mustYAML(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.com}
spec:
  group: example.com
  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer, maximum: `+max+`}}}}}}}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return crd
	}
	obj := map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Foo",
		"metadata": map[string]interface{}{"name": "a", "namespace": "default"}, "spec": map[string]interface{}{"size": int64(5)}}
	vs := Validators{}
	for _, tc := range []struct {
		max     string
		refused bool
	}{{"10", false}, {"3", true}} {
		errs, err := vs.ValidateCreate(schemaOf(tc.max), "v1", obj, "default")
		if err != nil {
			t.Fatal(err)
		}
		if (len(errs) > 0) != tc.refused {
			t.Errorf("maximum %s: %v, want refused %v", tc.max, errs, tc.refused)
		}
	}
}

func mustYAML(t *testing.T, doc string) map[string]interface{} {
	t.Helper()
	var raw map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(doc), &raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

// The warnings of ValidateCRDCreate are those the upstream registry's own
// create (rest.BeforeCreate with the CRD strategy) records, in its words.
func TestValidateCRDCreateWarnings(t *testing.T) {
	const uintFormat = "  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {n: {type: integer, format: uint}}}}}}}\n"
	for _, tc := range []struct {
		name     string
		versions string
		warned   bool
	}{
		{"none", v1Storage, false},
		{"unrecognized format", uintFormat, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crd := updateCRD(t, "Namespaced", tc.versions, "")
			errs, got := Validators{}.ValidateCRDCreate(crd)
			if len(errs) > 0 {
				t.Fatalf("refused: %v", errs)
			}
			obj, err := toInternal(crd)
			if err != nil {
				t.Fatal(err)
			}
			rest.FillObjectMetaSystemFields(&obj.ObjectMeta)
			recorder := new(recordedWarnings)
			if err := rest.BeforeCreate(crdregistry.NewStrategy(scheme()), warning.WithWarningRecorder(requestContext("create", ""), recorder), obj); err != nil {
				t.Fatalf("upstream: %v", err)
			}
			if diff := cmp.Diff([]string(*recorder), got); diff != "" {
				t.Errorf("warnings (-upstream +got):\n%s", diff)
			}
			if (len(got) > 0) != tc.warned {
				t.Errorf("warnings %q, want some: %v", got, tc.warned)
			}
		})
	}
}

// recordedWarnings is the server's record of a request's warnings.
type recordedWarnings []string

func (r *recordedWarnings) AddWarning(agent, text string) { *r = append(*r, text) }
