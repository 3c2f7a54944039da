package prune_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// kepExamples are examples 1-11 of KEP-2332 "Pruning for Custom Resources",
// verbatim: the KEP's schema is the CRD's root schema, the input is sent as a
// custom resource, want is the KEP's stated result.
//
// For examples 7 and 9 the KEP's stated result is not what the server does
// (and contradicts the KEP's own rule "pruning starts again at Y ... if Y is
// specified by properties" and the 2019 blog post: "within a nested
// properties or additionalProperties OpenAPI schema the pruning starts
// again"; upstream pruning/algorithm_test.go says x-kubernetes-preserve-
// unknown-fields "is not inherited by the schema inside of
// additionalProperties"). There server holds the server's result, and the
// test asserts both that the server differs from the KEP text and that the
// engine does what the server does.
//
// The KEP's inputs (but 11) are bare objects; a custom resource needs
// apiVersion, kind and metadata, which the KEP (example 11 and rule 4 of the
// proposal) says are implicitly specified at the root and kept. So crObject
// adds them to input and result alike.
var kepExamples = []struct {
	name   string
	schema string // YAML
	input  string // JSON
	want   string // JSON
	server string // JSON, the server's result where it differs from want
}{
	{
		name:   "1 unspecified",
		schema: `type: object`,
		input:  `{"foo": 42, "json": {"bar": 43}}`,
		want:   `{}`,
	},
	{
		name: "2 properties at top-level",
		schema: `
type: object
properties:
  foo:
    type: object`,
		input: `{"foo": {"abc": 42}, "json": {"bar": 43}}`,
		want:  `{"foo": {}}`,
	},
	{
		name: "3 properties at multiple levels",
		schema: `
type: object
properties:
  foo:
    type: object
    properties:
      bar:
        type: object`,
		input: `{"foo": {"bar": {"abc": 42}, "def": 43}, "json": {"ghi": 44}}`,
		want:  `{"foo": {"bar": {}}}`,
	},
	{
		name: "4 additionalProperties with a non-empty schema",
		schema: `
type: object
properties:
  foo:
    type: object
    additionalProperties:
      type: object`,
		input: `{"foo": {"abc": {"x": 42}, "def": {"y": 43}}, "json": {"ghi": 44}}`,
		want:  `{"foo": {"abc": {}, "def": {}}}`,
	},
	{
		// The KEP: "but validation will fail" – that is validation of the
		// object against additionalProperties: false, after pruning. The CRD
		// itself is accepted by v1 validation (false is only forbidden next
		// to properties), checked in TestKEPPruningExamples.
		name: "5 additionalProperties: false",
		schema: `
type: object
properties:
  foo:
    type: object
    additionalProperties: false`,
		input: `{"foo": {"abc": {"x": 42}, "def": {"y": 43}}, "json": {"ghi": 44}}`,
		want:  `{"foo": {"abc": {}, "def": {}}}`,
	},
	{
		name: "6 arbitrary JSON",
		schema: `
type: object
properties:
  json:
    x-kubernetes-preserve-unknown-fields: true
    nullable: true`,
		input: `{"foo": 42, "json": {"bar": 43}}`,
		want:  `{"json": {"bar": 43}}`,
	},
	{
		name: "7 JSON, but with properties at the same level",
		schema: `
type: object
properties:
  json:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    nullable: true
    properties:
      bar:
        type: object`,
		input: `{"foo": 42, "json": {"bar": {"abc": 43}, "def": 44}}`,
		want:  `{"json": {"bar": {"abc": 43}, "def": 44}}`,
		// bar is specified by properties (type: object without properties
		// of its own): pruning starts again there and drops bar.abc.
		server: `{"json": {"bar": {}, "def": 44}}`,
	},
	{
		name: "8 JSON, but with properties at the same and lower levels",
		schema: `
type: object
properties:
  json:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    nullable: true
    properties:
      bar:
        type: object
        properties:
          inner:
            type: integer`,
		input: `{"foo": 42, "json": {"bar": {"inner": 43, "abc": 44}, "def": 45}}`,
		want:  `{"json": {"bar": {"inner": 43}, "def": 45}}`,
	},
	{
		name: "9 additionalProperties within JSON",
		schema: `
type: object
properties:
  json:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    nullable: true
    additionalProperties:
      type: object`,
		input: `{"foo": 42, "json": {"bar": {"inner": 43, "abc": 44}, "def": 45}}`,
		want:  `{"json": {"bar": {"inner": 43, "abc": 44}, "def": 45}}`,
		// The additionalProperties schema (type: object) does not inherit
		// x-kubernetes-preserve-unknown-fields: everything inside bar goes.
		server: `{"json": {"bar": {}, "def": 45}}`,
	},
	{
		name: "10 embedded resource",
		schema: `
type: object
properties:
  object:
    type: object
    nullable: true
    x-kubernetes-embedded-resource: true
    x-kubernetes-preserve-unknown-fields: true`,
		input: `{"foo": 42, "object": {"bar": 43, "abc": 44, "metadata": {"name": "example", "garbage": 45}}}`,
		want:  `{"object": {"bar": 43, "abc": 44, "metadata": {"name": "example"}}}`,
	},
	{
		// The KEP writes apiVersion "example/v1"; a CRD group needs a dot
		// (spec.group: should be a domain with at least one dot), so the group
		// is example.com as in every other example.
		name:   "11 implicit metav1.TypeMeta and metav1.ObjectMeta",
		schema: `type: object`,
		input:  `{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "example", "garbage": 43}, "foo": 42}`,
		want:   `{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "example"}}`,
	},
}

var kepGK = runtimeschema.GroupKind{Group: "example.com", Kind: "Foo"}

// crObject parses a JSON object and adds the type and object meta a custom
// resource of kepCRD needs where the KEP leaves them out.
func crObject(t *testing.T, js string) map[string]interface{} {
	t.Helper()
	var obj map[string]interface{}
	if err := utiljson.Unmarshal([]byte(js), &obj); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	if _, ok := obj["apiVersion"]; !ok {
		obj["apiVersion"] = "example.com/v1"
	}
	if _, ok := obj["kind"]; !ok {
		obj["kind"] = "Foo"
	}
	if _, ok := obj["metadata"]; !ok {
		obj["metadata"] = map[string]interface{}{"name": "example"}
	}
	return obj
}

// kepServerResult returns the object the server stores for an example: the
// KEP's result, or server where the KEP text is off. Then it checks that the
// KEP text really is off, so the override cannot outlive a change upstream.
func kepServerResult(t *testing.T, kep, server string) map[string]interface{} {
	t.Helper()
	if server == "" {
		return crObject(t, kep)
	}
	if cmp.Equal(crObject(t, kep), crObject(t, server)) {
		t.Fatalf("server result %s is the KEP's; drop the override", server)
	}
	return crObject(t, server)
}

// kepCRD wraps a root schema into an apiextensions.k8s.io/v1 CRD for
// example.com/v1 Foo and returns its YAML.
func kepCRD(t *testing.T, rootSchema string) []byte {
	t.Helper()
	var s map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(rootSchema), &s); err != nil {
		t.Fatalf("schema: %v", err)
	}
	crd := map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]interface{}{"name": "foos.example.com"},
		"spec": map[string]interface{}{
			"group": "example.com",
			"names": map[string]interface{}{"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"},
			"scope": "Namespaced",
			"versions": []interface{}{map[string]interface{}{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]interface{}{"openAPIV3Schema": s},
			}},
		},
	}
	b, err := sigsyaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validateCRDUpstream runs the API server's create validation of a CRD.
func validateCRDUpstream(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) []string {
	t.Helper()
	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := upstreamScheme.Convert(crd, internal, nil); err != nil {
		t.Fatalf("convert to internal: %v", err)
	}
	var out []string
	for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), internal) {
		out = append(out, e.Error())
	}
	return out
}

// upstreamKEPPrune is what the KEP calls pruning, in upstream calls: the
// pruning algorithm, then the ObjectMeta coercion that drops unknown fields
// inside metadata (root and embedded), which the KEP counts as pruning too
// (examples 10 and 11) but which lives in the objectmeta package.
func upstreamKEPPrune(t *testing.T, obj map[string]interface{}, s *structuralschema.Structural) (out map[string]interface{}, unknown, unknownMeta []string) {
	t.Helper()
	out = runtime.DeepCopyJSON(obj)
	unknown = structuralpruning.PruneWithOptions(out, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	ferr, unknownMeta := schemaobjectmeta.CoerceWithOptions(nil, out, s, true, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if ferr != nil {
		t.Fatalf("upstream objectmeta.Coerce: %v", ferr)
	}
	return out, unknown, unknownMeta
}

func pathsOf(changes []prune.Change, reasons ...prune.Reason) []string {
	var out []string
	for _, ch := range changes {
		for _, r := range reasons {
			if ch.Reason == r {
				out = append(out, ch.Path)
			}
		}
	}
	return out
}

func TestKEPPruningExamples(t *testing.T) {
	for _, tt := range kepExamples {
		t.Run(tt.name, func(t *testing.T) {
			crdYAML := kepCRD(t, tt.schema)
			v1, err := schema.DecodeCRD(crdYAML)
			if err != nil {
				t.Fatalf("DecodeCRD: %v", err)
			}
			// Every example's CRD is one the v1 API accepts, so every example
			// is tested end to end as a custom resource (none needs to fall
			// back to the structural level only).
			if errs := validateCRDUpstream(t, v1); len(errs) > 0 {
				t.Fatalf("the API server refuses the CRD: %v", errs)
			}
			crd := schema.NewCRD(v1)
			if v := crd.Violations(); len(v) > 0 {
				t.Fatalf("Violations() = %v, want none", v)
			}
			s, err := crd.ServedSchema("v1")
			if err != nil {
				t.Fatalf("ServedSchema: %v", err)
			}
			reg := schema.NewRegistry()
			reg.Add(crd)

			input, want := crObject(t, tt.input), kepServerResult(t, tt.want, tt.server)
			upstream, upUnknown, upUnknownMeta := upstreamKEPPrune(t, input, s)
			if diff := cmp.Diff(want, upstream); diff != "" {
				t.Errorf("upstream pruning differs from the expected result (-want +upstream):\n%s", diff)
			}

			js, err := json.Marshal(input)
			if err != nil {
				t.Fatal(err)
			}
			y, err := sigsyaml.JSONToYAML(js)
			if err != nil {
				t.Fatal(err)
			}
			for _, src := range []struct{ format, text string }{{"yaml", string(y)}, {"json", string(js)}} {
				t.Run(src.format, func(t *testing.T) {
					docs, err := document.Read(strings.NewReader(src.text), "kep."+src.format)
					if err != nil || len(docs) != 1 {
						t.Fatalf("Read: %d docs, %v", len(docs), err)
					}
					res, err := prune.Document(docs[0], reg, prune.Options{})
					if err != nil {
						t.Fatalf("Document: %v", err)
					}
					if res.Status != prune.Checked {
						t.Fatalf("Status = %s, want %s", res.Status, prune.Checked)
					}
					got, err := docs[0].Reparse()
					if err != nil {
						t.Fatalf("Reparse: %v", err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Document output (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(upstream, got); diff != "" {
						t.Errorf("Document output differs from upstream pruning (-upstream +got):\n%s", diff)
					}
					if diff := cmp.Diff(upUnknown, pathsOf(res.Changes, prune.UnknownField)); diff != "" {
						t.Errorf("UnknownField paths (-upstream +got):\n%s", diff)
					}
					if diff := cmp.Diff(upUnknownMeta, pathsOf(res.Changes, prune.UnknownMetadataField)); diff != "" {
						t.Errorf("UnknownMetadataField paths (-upstream +got):\n%s", diff)
					}
					for _, ch := range res.Changes {
						if ch.Action != prune.Removed {
							t.Errorf("unexpected change %+v: pruning only removes", ch)
						}
						if ch.Reason != prune.UnknownField && ch.Reason != prune.UnknownMetadataField {
							t.Errorf("unexpected reason %s for %s", ch.Reason, ch.Path)
						}
						if src.format == "yaml" && ch.Line == 0 {
							t.Errorf("%s: no source line", ch.Path)
						}
					}
					if res.Reformatted != "" {
						t.Errorf("Reformatted = %q; the edit should be made in place", res.Reformatted)
					}
				})
			}
		})
	}
}

// TestKEPPruningExamplesStructural checks the same examples one level down:
// the structural schema straight from upstream NewStructural, pruned by our
// Coerce and by upstream PruneWithOptions.
func TestKEPPruningExamplesStructural(t *testing.T) {
	for _, tt := range kepExamples {
		t.Run(tt.name, func(t *testing.T) {
			var props apiextensionsv1.JSONSchemaProps
			if err := sigsyaml.UnmarshalStrict([]byte(tt.schema), &props); err != nil {
				t.Fatalf("schema: %v", err)
			}
			var internal apiextensionsinternal.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
				t.Fatal(err)
			}
			s, err := structuralschema.NewStructural(&internal)
			if err != nil {
				t.Fatalf("NewStructural: %v", err)
			}
			if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
				t.Fatalf("not structural: %v", errs)
			}
			input, want := crObject(t, tt.input), kepServerResult(t, tt.want, tt.server)
			before := runtime.DeepCopyJSON(input)
			c, err := prune.Coerce(input, s, kepGK, false, false)
			if err != nil {
				t.Fatalf("Coerce: %v", err)
			}
			if diff := cmp.Diff(before, input); diff != "" {
				t.Errorf("Coerce modified its input:\n%s", diff)
			}
			if diff := cmp.Diff(want, c.Object); diff != "" {
				t.Errorf("Coerce (-want +got):\n%s", diff)
			}
			upstream, upUnknown, upUnknownMeta := upstreamKEPPrune(t, input, s)
			if diff := cmp.Diff(upstream, c.Object); diff != "" {
				t.Errorf("Coerce (-upstream +got):\n%s", diff)
			}
			if diff := cmp.Diff(upUnknown, c.UnknownFields); diff != "" {
				t.Errorf("UnknownFields (-upstream +got):\n%s", diff)
			}
			if diff := cmp.Diff(upUnknownMeta, c.UnknownMetadataFields); diff != "" {
				t.Errorf("UnknownMetadataFields (-upstream +got):\n%s", diff)
			}
			// Pruning is idempotent.
			again, err := prune.Coerce(c.Object, s, kepGK, false, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.Object, again.Object); diff != "" || len(again.UnknownFields)+len(again.UnknownMetadataFields) > 0 {
				t.Errorf("second Coerce changed %v %v:\n%s", again.UnknownFields, again.UnknownMetadataFields, diff)
			}
		})
	}
}

// TestKEPExample11RoundTrip: the server keeps apiVersion, kind and metadata
// verbatim; the YAML edit must not reorder or requote what it keeps.
func TestKEPExample11RoundTrip(t *testing.T) {
	in := "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: example\n  garbage: 43\nfoo: 42\n"
	want := "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: example\n"
	v1, err := schema.DecodeCRD(kepCRD(t, "type: object"))
	if err != nil {
		t.Fatal(err)
	}
	reg := schema.NewRegistry()
	reg.Add(schema.NewCRD(v1))
	docs, err := document.Read(strings.NewReader(in), "ex11.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := prune.Document(docs[0], reg, prune.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := docs[0].Encode()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Encode (-want +got):\n%s", diff)
	}
	type line struct {
		Path   string
		Reason prune.Reason
		Line   int
	}
	var gotLines []line
	for _, ch := range res.Changes {
		gotLines = append(gotLines, line{ch.Path, ch.Reason, ch.Line})
	}
	wantLines := []line{{"foo", prune.UnknownField, 6}, {"metadata.garbage", prune.UnknownMetadataField, 5}}
	if diff := cmp.Diff(wantLines, gotLines); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}
