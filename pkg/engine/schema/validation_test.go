package schema_test

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	crdregistry "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// crdWith is a CRD of foos.example.com whose spec.versions (and any other
// spec fields) are the YAML lines given, indented under spec.
func crdWith(apiVersion, name, spec string) string {
	return "apiVersion: apiextensions.k8s.io/" + apiVersion + `
kind: CustomResourceDefinition
metadata:
  name: ` + name + `
spec:
  group: example.com
  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  scope: Namespaced
` + indent(strings.TrimPrefix(spec, "\n"), "  ")
}

const objectSchema = `  schema:
    openAPIV3Schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            size: {type: integer}
`

// celSchema is a schema with one rule on spec.
func celSchema(rule string) string {
	return `  schema:
    openAPIV3Schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            list:
              type: array
              items: {type: string}
          x-kubernetes-validations:
          - rule: '` + rule + `'
`
}

// validationCases are CRDs with the verdict stated by hand: the paths of the
// errors the server refuses them with (none: it accepts them). The errors
// themselves are compared with the upstream registry's create (or update).
var validationCases = []struct {
	name   string
	crd    string
	fields []string
}{
	{"valid", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+objectSchema), nil},
	{"valid, two versions", crdWith("v1", "foos.example.com",
		"versions:\n- name: v1\n  served: true\n  storage: false\n"+objectSchema+"- name: v2\n  served: true\n  storage: true\n"+objectSchema), nil},
	{"two storage versions", crdWith("v1", "foos.example.com",
		"versions:\n- name: v1\n  served: true\n  storage: true\n"+objectSchema+"- name: v2\n  served: true\n  storage: true\n"+objectSchema),
		[]string{"spec.versions", "status.storedVersions"}},
	{"no storage version", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: false\n"+objectSchema),
		[]string{"spec.versions", "status.storedVersions"}},
	{"no versions", crdWith("v1", "foos.example.com", "versions: []\n"),
		[]string{"spec.versions", "status.storedVersions"}},
	{"name not plural.group", crdWith("v1", "foo.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+objectSchema),
		[]string{"metadata.name"}},
	{"CEL rule that does not compile", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+celSchema("self.list ==")),
		[]string{"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"}},
	{"CEL rule that costs too much", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+celSchema("self.list.all(x, self.list.all(y, x == y))")),
		[]string{"spec.validation.openAPIV3Schema", "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"}},
	{"no schema", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"),
		[]string{"spec.versions[0].schema.openAPIV3Schema"}},
	{"non-structural", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n  schema:\n    openAPIV3Schema:\n      properties:\n        spec: {type: object}\n"),
		[]string{"spec.validation.openAPIV3Schema.type"}},
	{"metadata.namespace is dropped, not refused", strings.Replace(crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+objectSchema), "metadata:\n", "metadata:\n  namespace: default\n", 1), nil},

	// v1beta1: validated as an unchanged write of the CRD it stands for.
	{"v1beta1 non-structural, preserveUnknownFields defaulted", v1beta1CRD(blogNonStructural, ""), nil},
	{"v1beta1 without schema", crdWith("v1beta1", "foos.example.com", "version: v1\n"), nil},
	{"v1beta1 two storage versions", crdWith("v1beta1", "foos.example.com", "versions:\n- {name: v1, served: true, storage: true}\n- {name: v2, served: true, storage: true}\n"),
		[]string{"spec.versions", "status.storedVersions"}},
	{"v1beta1 CEL rule that does not compile", strings.Replace(v1beta1CRD(blogStructural, "  preserveUnknownFields: false\n"), "      type: object\n", "      type: object\n      x-kubernetes-validations:\n      - rule: 'self.spec =='\n", 1),
		[]string{"spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule"}},
}

// upstreamRefusal sends the CRD through the upstream registry's own
// orchestration, rest.BeforeCreate (rest.BeforeUpdate of itself for
// v1beta1) with the CRD strategy, and returns the causes of the Invalid
// status it refuses with, one "field: message" a line, sorted.
func upstreamRefusal(t *testing.T, data string) []string {
	t.Helper()
	refusal, _ := upstreamWrite(t, data)
	return refusal
}

// warningRecorder is the server's record of a request's warnings, as its
// handler chain keeps it: each text once.
type warningRecorder []string

func (r *warningRecorder) AddWarning(agent, text string) {
	if text != "" && !slices.Contains(*r, text) {
		*r = append(*r, text)
	}
}

// upstreamWrite is upstreamRefusal, also returning the warnings the
// upstream registry records when it accepts the CRD, sorted.
func upstreamWrite(t *testing.T, data string) (refusal, warnings []string) {
	t.Helper()
	crd := decodeBoth(t, []byte(data))
	obj := &apiextensionsinternal.CustomResourceDefinition{}
	if err := upstreamScheme.Convert(crd, obj, nil); err != nil {
		t.Fatal(err)
	}
	strategy := crdregistry.NewStrategy(upstreamScheme)
	rest.FillObjectMetaSystemFields(&obj.ObjectMeta)
	recorder := new(warningRecorder)
	ctx := warning.WithWarningRecorder(genericapirequest.WithNamespace(genericapirequest.NewContext(), ""), recorder)
	var err error
	if strings.HasPrefix(data, "apiVersion: apiextensions.k8s.io/v1beta1") {
		obj.Namespace, obj.ResourceVersion = "", "1"
		strategy.PrepareForCreate(ctx, obj)
		err = rest.BeforeUpdate(strategy, ctx, obj.DeepCopy(), obj)
	} else {
		err = rest.BeforeCreate(strategy, ctx, obj)
	}
	if err == nil {
		warnings = *recorder
		sort.Strings(warnings)
		return nil, warnings
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
	if len(*recorder) > 0 {
		t.Fatalf("upstream refused the CRD, and warned of %q", *recorder)
	}
	return out, nil
}

func TestInvalid(t *testing.T) {
	for _, tt := range validationCases {
		t.Run(tt.name, func(t *testing.T) {
			var obj map[string]interface{}
			if err := sigsyaml.Unmarshal([]byte(tt.crd), &obj); err != nil {
				t.Fatal(err)
			}
			want := upstreamRefusal(t, tt.crd)
			var wantFields []string
			for _, w := range want {
				wantFields = append(wantFields, w[:strings.Index(w, ": ")])
			}
			if diff := cmp.Diff(uniq(tt.fields), uniq(wantFields)); diff != "" {
				t.Fatalf("upstream refuses with other fields than the case states (-case +upstream):\n%s\n%s", diff, strings.Join(want, "\n"))
			}

			c, ok, err := schema.DecodeObject(obj, strategy.Validators{})
			if err != nil || !ok {
				t.Fatalf("DecodeObject: %v, %v", ok, err)
			}
			var got []string
			for _, e := range c.Invalid() {
				got = append(got, e.Field+": "+e.ErrorBody())
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Invalid() (-upstream +got):\n%s", diff)
			}

			// FromObject refuses exactly these, in one *InvalidError.
			_, ok, err = schema.FromObject(obj, strategy.Validators{})
			var invalid *schema.InvalidError
			switch {
			case !ok:
				t.Errorf("FromObject: not a CRD")
			case len(want) == 0 && err != nil:
				t.Errorf("FromObject: %v, want no error", err)
			case len(want) > 0 && !errors.As(err, &invalid):
				t.Errorf("FromObject: %v, want an *InvalidError", err)
			case len(want) > 0 && !strings.HasPrefix(err.Error(), "CustomResourceDefinition "+c.Name()+" is invalid: "):
				t.Errorf("FromObject: %q", err)
			}
		})
	}
}

// A CRD of a cluster (NewCRD) was accepted by that server: not validated again.
func TestInvalidNotForClusterCRDs(t *testing.T) {
	tt := validationCases[2]
	if tt.name != "two storage versions" {
		t.Fatalf("case %q", tt.name)
	}
	c := schema.NewCRD(decodeBoth(t, []byte(tt.crd)))
	if errs := c.Invalid(); errs != nil {
		t.Errorf("Invalid() = %v, want nil for a CRD of a cluster", errs)
	}
	if err := c.InvalidErr(); err != nil {
		t.Errorf("InvalidErr() = %v", err)
	}
	// Nor is one decoded without a validator; with one, it is refused.
	var obj map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(tt.crd), &obj); err != nil {
		t.Fatal(err)
	}
	for _, v := range []schema.CRDValidator{nil, strategy.Validators{}} {
		c, _, err := schema.DecodeObject(obj, v)
		if err != nil {
			t.Fatalf("DecodeObject: %v", err)
		}
		if errs := c.Invalid(); (v == nil) != (errs == nil) {
			t.Errorf("DecodeObject with validator %T: Invalid() = %v", v, errs)
		}
	}
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// formatSchema is a schema whose spec.count has the format given.
func formatSchema(format string) string {
	return `  schema:
    openAPIV3Schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            count: {type: integer, format: ` + format + `}
            name: {type: string, format: ` + format + `}
`
}

// setOfObjects is a schema with a list-type set whose items are objects
// (atomic, else the server refuses it).
const setOfObjects = `  schema:
    openAPIV3Schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            ports:
              type: array
              x-kubernetes-list-type: set
              items: {type: object, x-kubernetes-map-type: atomic, properties: {port: {type: integer}}}
`

// The warnings the server returns when it accepts a CRD are the upstream
// registry's (WarningsOnCreate, or WarningsOnUpdate for a v1beta1 CRD,
// which is the rewrite of the CRD stored), in its words, each once; none
// when it refuses the CRD, nor for a CRD of a cluster. The cases state
// only whether there are any: the words are upstream's.
func TestWarnings(t *testing.T) {
	for _, tt := range []struct {
		name   string
		crd    string
		warned bool
		legacy bool
	}{
		{"none", validationCases[0].crd, false, false},
		{"unrecognized format", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+formatSchema("uint")), true, false},
		{"two versions, the same warnings once", crdWith("v1", "foos.example.com",
			"versions:\n- name: v1\n  served: true\n  storage: false\n"+formatSchema("uint")+"- name: v2\n  served: true\n  storage: true\n"+formatSchema("uint")+"            extra: {type: string}\n"), true, false},
		{"list-type set of objects", crdWith("v1", "foos.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+setOfObjects), true, false},
		{"refused: no warnings", crdWith("v1", "foo.example.com", "versions:\n- name: v1\n  served: true\n  storage: true\n"+formatSchema("uint")), false, false},
		// What the stored CRD has, its rewrite ratchets.
		{"v1beta1: the rewrite of the stored CRD", crdWith("v1beta1", "foos.example.com", "version: v1\nvalidation:\n"+strings.TrimPrefix(formatSchema("uint"), "  schema:\n")), false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var obj map[string]interface{}
			if err := sigsyaml.Unmarshal([]byte(tt.crd), &obj); err != nil {
				t.Fatal(err)
			}
			refusal, want := upstreamWrite(t, tt.crd)
			if (len(want) > 0) != tt.warned {
				t.Fatalf("upstream warns of %q (refuses with %q), the case says warned: %v", want, refusal, tt.warned)
			}
			c, _, err := schema.DecodeObject(obj, strategy.Validators{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, c.Warnings()); diff != "" {
				t.Errorf("Warnings() (-upstream +got):\n%s", diff)
			}
			if c.Legacy() != tt.legacy {
				t.Errorf("Legacy() = %v", c.Legacy())
			}
			// Without the server's validation, and for a CRD of a cluster: none.
			c, _, err = schema.DecodeObject(obj, nil)
			if err != nil {
				t.Fatal(err)
			}
			if w := c.Warnings(); w != nil {
				t.Errorf("without a validator: Warnings() = %q", w)
			}
			if w := schema.NewCRD(c.Object).Warnings(); w != nil {
				t.Errorf("of a cluster: Warnings() = %q", w)
			}
		})
	}
}
