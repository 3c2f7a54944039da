package prune_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// fuzzGen draws bounded choices from the fuzzer's bytes; once they run out
// every choice is 0, which always picks a leaf, so generation ends.
type fuzzGen struct {
	b []byte
	i int
}

func (g *fuzzGen) n(k int) int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1]) % k
}

const (
	maxDepth  = 3
	maxFields = 3
)

// Keys of schemas and objects come from one small alphabet, so that objects
// hit specified fields often; the meta keys exercise embedded resources.
var (
	propKeys   = []string{"a", "b", "c", "d"}
	objectKeys = []string{"a", "b", "c", "d", "e", "apiVersion", "kind", "metadata"}
	// Strings that YAML likes to read as something else.
	fuzzStrings = []string{"x", "", "yes", "null", "1", "a: b", "# c", "two\nlines", "~", "'q'", "@", " lead", "0x1F", "1e3", "-"}
)

func boolPtr(b bool) *bool { return &b }

func rawJSON(v interface{}) *apiextensionsv1.JSON {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &apiextensionsv1.JSON{Raw: b}
}

// schema builds a structural schema node; root is the resource root.
func (g *fuzzGen) schema(depth int, root bool) apiextensionsv1.JSONSchemaProps {
	var s apiextensionsv1.JSONSchemaProps
	kind := g.n(10)
	if depth >= maxDepth && kind >= 4 {
		kind = 0
	}
	if root {
		// The root is an object with properties, maybe preserving unknown fields.
		kind = 4
	}
	switch kind {
	case 0:
		s.Type = "string"
	case 1:
		s.Type = "integer"
	case 2:
		s.Type = "number"
	case 3:
		s.Type = "boolean"
	case 4, 5:
		s.Type = "object"
		s.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
		for i, n := 0, g.n(maxFields+1); i < n; i++ {
			s.Properties[propKeys[g.n(len(propKeys))]] = g.schema(depth+1, false)
		}
		if !root && g.n(4) == 0 {
			s.XEmbeddedResource = true
		}
	case 6:
		s.Type = "object"
		items := g.schema(depth+1, false)
		s.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &items}
	case 7:
		s.Type = "array"
		items := g.schema(depth+1, false)
		s.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}
	case 8:
		s.XIntOrString = true
	case 9:
		s.XPreserveUnknownFields = boolPtr(true)
		if g.n(2) == 0 {
			s.Type = "object"
		}
	}
	if s.Type == "object" && s.AdditionalProperties == nil && g.n(3) == 0 {
		s.XPreserveUnknownFields = boolPtr(true)
	}
	if s.XEmbeddedResource && len(s.Properties) == 0 {
		s.XPreserveUnknownFields = boolPtr(true)
	}
	if !root && g.n(2) == 0 {
		s.Nullable = true
	}
	if !root && g.n(3) == 0 {
		switch {
		case s.XIntOrString:
			s.Default = rawJSON([]interface{}{7, "seven"}[g.n(2)])
		case s.Type == "string":
			s.Default = rawJSON(fuzzStrings[g.n(len(fuzzStrings))])
		case s.Type == "integer":
			s.Default = rawJSON(7)
		case s.Type == "number":
			s.Default = rawJSON(1.5)
		case s.Type == "boolean":
			s.Default = rawJSON(true)
		case s.Type == "array":
			s.Default = rawJSON([]interface{}{})
		case s.Type == "object":
			// Pruned by the server's PruneDefaults where keys are unknown.
			s.Default = rawJSON(map[string]interface{}{"a": "x", "e": 1})
		}
	}
	return s
}

// value builds a JSON value, mostly shaped by s (nil: no guidance).
func (g *fuzzGen) value(s *apiextensionsv1.JSONSchemaProps, depth int) interface{} {
	if s == nil || g.n(4) == 0 {
		return g.anyValue(depth)
	}
	if s.Nullable && g.n(4) == 0 {
		return nil
	}
	switch {
	case s.XIntOrString:
		if g.n(2) == 0 {
			return int64(g.n(100))
		}
		return fuzzStrings[g.n(len(fuzzStrings))]
	case s.Type == "string":
		return fuzzStrings[g.n(len(fuzzStrings))]
	case s.Type == "integer":
		return int64(g.n(100)) - 50
	case s.Type == "number":
		return 0.5 + float64(g.n(10))
	case s.Type == "boolean":
		return g.n(2) == 0
	case s.Type == "array" && s.Items != nil:
		if depth >= maxDepth {
			return []interface{}{}
		}
		l := []interface{}{}
		for i, n := 0, g.n(maxFields); i < n; i++ {
			l = append(l, g.value(s.Items.Schema, depth+1))
		}
		return l
	case s.Type == "object" || (s.Type == "" && s.XPreserveUnknownFields != nil):
		m := map[string]interface{}{}
		if depth >= maxDepth {
			return m
		}
		for k, p := range s.Properties {
			if g.n(3) != 0 {
				p := p
				m[k] = g.value(&p, depth+1)
			}
		}
		var extra *apiextensionsv1.JSONSchemaProps
		if s.AdditionalProperties != nil {
			extra = s.AdditionalProperties.Schema
		}
		for i, n := 0, g.n(maxFields); i < n; i++ {
			m[objectKeys[g.n(len(objectKeys))]] = g.value(extra, depth+1)
		}
		if s.XEmbeddedResource {
			g.typeAndObjectMeta(m)
		}
		return m
	}
	return g.anyValue(depth)
}

func (g *fuzzGen) anyValue(depth int) interface{} {
	switch k := g.n(8); {
	case k == 0 || (k >= 5 && depth >= maxDepth):
		return fuzzStrings[g.n(len(fuzzStrings))]
	case k == 1:
		return nil
	case k == 2:
		return int64(g.n(100))
	case k == 3:
		return g.n(2) == 0
	case k == 4:
		return 0.25
	case k == 5:
		l := []interface{}{}
		for i, n := 0, g.n(maxFields); i < n; i++ {
			l = append(l, g.anyValue(depth+1))
		}
		return l
	default:
		m := map[string]interface{}{}
		for i, n := 0, g.n(maxFields+1); i < n; i++ {
			m[objectKeys[g.n(len(objectKeys))]] = g.anyValue(depth + 1)
		}
		return m
	}
}

// typeAndObjectMeta sets apiVersion, kind and metadata of an object,
// sometimes with an unknown metadata field or a malformed one.
func (g *fuzzGen) typeAndObjectMeta(m map[string]interface{}) {
	if g.n(4) != 0 {
		m["apiVersion"] = "v1"
		m["kind"] = "K"
	}
	if g.n(3) == 0 {
		return
	}
	md := map[string]interface{}{}
	for i, n := 0, g.n(4); i < n; i++ {
		switch g.n(8) {
		case 0:
			md["name"] = "n"
		case 1:
			md["labels"] = map[string]interface{}{"a": "b"}
		case 2:
			md["garbage"] = int64(1)
		case 3:
			md["annotations"] = map[string]interface{}{}
		case 4:
			md["creationTimestamp"] = nil
		case 5:
			md["generateName"] = ""
		case 6:
			md["name"] = int64(5) // malformed: the server refuses the object
		case 7:
			md["finalizers"] = []interface{}{"f"}
		}
	}
	m["metadata"] = md
}

func fuzzCRD(props apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "foos.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "foos", Singular: "foo", Kind: "Foo", ListKind: "FooList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &props},
			}},
		},
	}
}

func allUnknown(c *prune.Coerced) []string {
	out := append(append([]string(nil), c.UnknownFields...), c.UnknownMetadataFields...)
	sort.Strings(out)
	return out
}

func FuzzPrune(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 0, 5, 1, 4, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte("\x04\x03\x00\x06\x02\x07\x01\x09\x01\x05\x02\x01\x03\x03\x03\x01\x02\x03\x04"))
	f.Add(bytes.Repeat([]byte{1, 4, 2, 9}, 16))
	f.Add(bytes.Repeat([]byte{5, 6, 7, 0, 3}, 20))
	f.Add([]byte("embedded resources: \x05\x01\x03\x00\x00\x00\x07\x07\x07\x06\x02"))
	f.Add(bytes.Repeat([]byte{255, 128, 64, 32, 16, 8, 4, 2, 1}, 12))
	f.Add(bytes.Repeat([]byte{4, 7, 2, 5, 1, 6, 3}, 15))
	f.Add(bytes.Repeat([]byte{6, 5, 4, 3, 2, 1, 9, 8}, 15))

	f.Fuzz(func(t *testing.T, data []byte) {
		g := &fuzzGen{b: data}
		props := g.schema(0, true)
		crdObj := fuzzCRD(props)

		served, err := upstreamServedSchemas(crdObj)
		if err != nil {
			t.Fatalf("upstream cannot serve the generated schema: %v", err)
		}
		s := served["v1"]
		raw, err := upstreamStructural(crdObj.Spec.Versions[0].Schema)
		if err != nil {
			t.Fatal(err)
		}
		if errs := structuralschema.ValidateStructural(field.NewPath("schema"), raw); len(errs) > 0 {
			t.Fatalf("generator made a non-structural schema: %v\n%s", errs, mustJSON(props))
		}
		crd := schema.NewCRD(crdObj)
		ourServed, err := crd.ServedSchema("v1")
		if err != nil {
			t.Fatalf("ServedSchema: %v", err)
		}
		if diff := cmp.Diff(s, ourServed); diff != "" {
			t.Fatalf("ServedSchema (-upstream +ours):\n%s", diff)
		}
		reg := schema.NewRegistry()
		reg.Add(crd)

		obj := map[string]interface{}{}
		if v, ok := g.value(&props, 0).(map[string]interface{}); ok {
			obj = v
		}
		obj["apiVersion"] = "example.com/v1"
		obj["kind"] = "Foo"
		if _, ok := obj["metadata"].(map[string]interface{}); !ok {
			delete(obj, "metadata")
		}
		if g.n(2) == 0 {
			g.typeAndObjectMeta(obj)
			obj["apiVersion"], obj["kind"] = "example.com/v1", "Foo"
		}
		sent := runtime.DeepCopyJSON(obj)
		render := g.n(4)
		ctx := func() string { return fmt.Sprintf("schema %s\nobject %s", mustJSON(props), mustJSON(sent)) }

		// With pruning off (a v1beta1 CRD) the server uses the schema as written.
		{
			got, oerr := prune.Coerce(obj, raw, kepGK, true, false)
			want, unknown, uerr := upstreamCoerce(sent, raw, kepGK, true, false)
			if (oerr == nil) != (uerr == nil) {
				t.Fatalf("preserveUnknownFields: Coerce error %v, upstream %v\n%s", oerr, uerr, ctx())
			}
			if oerr == nil {
				if diff := cmp.Diff(want, got.Object); diff != "" {
					t.Errorf("preserveUnknownFields: Coerce (-upstream +got):\n%s\n%s", diff, ctx())
				}
				if diff := cmp.Diff(unknown, allUnknown(got), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("preserveUnknownFields: unknown paths (-upstream +got):\n%s\n%s", diff, ctx())
				}
			}
		}

		for _, defaults := range []bool{false, true} {
			got, oerr := prune.Coerce(obj, s, kepGK, false, defaults)
			if diff := cmp.Diff(sent, obj); diff != "" {
				t.Fatalf("Coerce modified its input:\n%s", diff)
			}
			want, unknown, uerr := upstreamCoerce(sent, s, kepGK, false, defaults)
			if (oerr == nil) != (uerr == nil) {
				t.Fatalf("defaults=%v: Coerce error %v, upstream %v\n%s", defaults, oerr, uerr, ctx())
			}
			if oerr != nil {
				continue
			}
			if diff := cmp.Diff(want, got.Object); diff != "" {
				t.Fatalf("defaults=%v: Coerce (-upstream +got):\n%s\n%s", defaults, diff, ctx())
			}
			if diff := cmp.Diff(unknown, allUnknown(got), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("defaults=%v: unknown paths (-upstream +got):\n%s\n%s", defaults, diff, ctx())
			}

			// Idempotence: what the server stores, sent again, is stored as is.
			again, err := prune.Coerce(got.Object, s, kepGK, false, defaults)
			if err != nil {
				t.Fatalf("defaults=%v: second Coerce: %v\n%s", defaults, err, ctx())
			}
			if diff := cmp.Diff(got.Object, again.Object); diff != "" {
				t.Fatalf("defaults=%v: second Coerce changed the object (-first +second):\n%s\n%s", defaults, diff, ctx())
			}
			if ch := prune.Changes(got.Object, again, s); len(ch) > 0 || len(allUnknown(again)) > 0 {
				t.Fatalf("defaults=%v: second Coerce reports changes %+v, unknown %v\n%s", defaults, ch, allUnknown(again), ctx())
			}

			// The YAML edit: render as people write it, prune in place.
			y, err := renderDoc(sent, render)
			if err != nil {
				t.Fatal(err)
			}
			docs, err := document.Read(bytes.NewReader(y), "fuzz.yaml")
			if err != nil || len(docs) != 1 {
				t.Fatalf("Read of rendered YAML: %d docs, %v\n%s", len(docs), err, y)
			}
			if diff := cmp.Diff(sent, docs[0].Object); diff != "" {
				t.Fatalf("rendered YAML reads back differently (-sent +read):\n%s\n%s", diff, y)
			}
			res, err := prune.Document(docs[0], reg, prune.Options{Defaults: defaults})
			if err != nil {
				t.Fatalf("defaults=%v: Document: %v\n%s", defaults, err, y)
			}
			out, err := docs[0].Reparse()
			if err != nil {
				t.Fatalf("defaults=%v: edited YAML does not parse: %v\n%s", defaults, err, y)
			}
			if diff := cmp.Diff(got.Object, out); diff != "" {
				edited, _ := docs[0].Encode()
				t.Fatalf("defaults=%v: edited YAML (-coerced +reread):\n%s\ninput:\n%s\noutput:\n%s", defaults, diff, y, edited)
			}
			if res.Reformatted != "" {
				edited, _ := docs[0].Encode()
				t.Errorf("defaults=%v: document rewritten instead of edited in place: %s\ninput:\n%s\noutput:\n%s", defaults, res.Reformatted, y, edited)
			}
		}
	})
}

// renderDoc writes obj as sigs.k8s.io/yaml does (sequences not indented),
// as kyaml does with indented sequences, or as indented JSON.
func renderDoc(obj map[string]interface{}, how int) ([]byte, error) {
	switch how {
	case 1, 2:
		style := kyaml.WideSequenceStyle
		if how == 2 {
			style = kyaml.CompactSequenceStyle
		}
		var buf bytes.Buffer
		enc := kyaml.NewEncoderWithOptions(&buf, &kyaml.EncoderOptions{SeqIndent: style})
		if err := enc.Encode(obj); err != nil {
			return nil, err
		}
		err := enc.Close()
		return buf.Bytes(), err
	case 3:
		return json.MarshalIndent(obj, "", "  ")
	default:
		return sigsyaml.Marshal(obj)
	}
}

func mustJSON(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
