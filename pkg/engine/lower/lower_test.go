package lower_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/kepimmutable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// crdWith is a CRD of kind Thing whose only version has the schema (YAML,
// type: object at the root).
func crdWith(t testing.TB, schemaYAML string) map[string]interface{} {
	t.Helper()
	var s map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(schemaYAML), &s); err != nil {
		t.Fatalf("schema: %v\n%s", err, schemaYAML)
	}
	return map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]interface{}{"name": "things.example.com"},
		"spec": map[string]interface{}{
			"group": "example.com",
			"names": map[string]interface{}{"kind": "Thing", "plural": "things"},
			"scope": "Namespaced",
			"versions": []interface{}{map[string]interface{}{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]interface{}{"openAPIV3Schema": s},
			}},
		},
	}
}

// thing is a Thing with the fields of a KEP example's object.
func thing(t testing.TB, fields string) map[string]interface{} {
	t.Helper()
	var obj map[string]interface{}
	// Integers stay int64, as the server decodes them.
	if err := utiljson.Unmarshal([]byte(fields), &obj); err != nil {
		t.Fatalf("%s: %v", fields, err)
	}
	obj["apiVersion"], obj["kind"] = "example.com/v1", "Thing"
	obj["metadata"] = map[string]interface{}{"name": "t", "namespace": "default"}
	return obj
}

func rootOf(crd map[string]interface{}) map[string]interface{} {
	return crd["spec"].(map[string]interface{})["versions"].([]interface{})[0].(map[string]interface{})["schema"].(map[string]interface{})["openAPIV3Schema"].(map[string]interface{})
}

// bound gives every list, map and string of a schema a size the test
// objects fit in, as the cost error asks.
func bound(s map[string]interface{}) {
	switch {
	case s["type"] == "array":
		s["maxItems"] = int64(8)
	case s["type"] == "string" && s["maxLength"] == nil:
		s["maxLength"] = int64(16)
	case s["type"] == "object" && s["additionalProperties"] != nil:
		s["maxProperties"] = int64(8)
	}
	if props, ok := s["properties"].(map[string]interface{}); ok {
		for _, p := range props {
			bound(p.(map[string]interface{}))
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := s[k].(map[string]interface{}); ok {
			bound(c)
		}
	}
}

// side is one CRD with what check-update's engine needs to decide an
// update: built once per schema (the validator compiles the CEL rules).
type checker struct {
	crd     *schema.CRD
	markers *update.Schema
	v       *strategy.Validator
}

func newChecker(t testing.TB, crd map[string]interface{}, markers bool) *checker {
	t.Helper()
	c, ok, err := schema.FromObject(crd, strategy.Validators{})
	if err != nil || !ok {
		t.Fatalf("CRD: %v", err)
	}
	ch := &checker{crd: c}
	if markers {
		m, errs := update.CRDSchemas(crd)
		if len(errs) > 0 {
			t.Fatalf("markers: %v", errs)
		}
		ch.markers = m["v1"]
	}
	if ch.v, err = (strategy.Validators{}).For(c, "v1"); err != nil {
		t.Fatal(err)
	}
	return ch
}

// refused is what check-update's engine refuses of the update.
func (c *checker) refused(t testing.TB, old, new string) []update.Finding {
	t.Helper()
	out, err := update.Check(thing(t, old), thing(t, new), c.crd, c.markers, c.v)
	if err != nil {
		t.Fatalf("%s -> %s: %v", old, new, err)
	}
	return out.Refused
}

// lowerBounded lowers the CRD of a schema; where the server would refuse
// the rules for their cost, the error names bounds, and with bounds on
// every list, map and string the CRD lowers.
func lowerBounded(t *testing.T, name, schemaYAML string) (marked map[string]interface{}, res *lower.Result) {
	t.Helper()
	marked = crdWith(t, schemaYAML)
	res, err := lower.CRD(marked, strategy.Validators{})
	var ce *lower.CostError
	if errors.As(err, &ce) {
		if len(ce.Bounds) == 0 {
			t.Errorf("%s: no bounds named: %v", name, err)
		}
		marked = crdWith(t, schemaYAML)
		bound(rootOf(marked))
		res, err = lower.CRD(marked, strategy.Validators{})
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return marked, res
}

// equivalent asserts that the lowered CRD refuses exactly the updates the
// emulation refuses, and that nothing is refused for staying the same.
func equivalent(t *testing.T, name, schemaYAML string, pairs [][2]string) {
	t.Helper()
	marked, res := lowerBounded(t, name, schemaYAML)
	emulation, lowered := newChecker(t, marked, true), newChecker(t, res.Object, false)
	failures := 0
	for _, p := range pairs {
		want, got := emulation.refused(t, p[0], p[1]), lowered.refused(t, p[0], p[1])
		for _, f := range got {
			// A rule that fails to evaluate refuses too, but says nothing useful.
			if !strings.Contains(f.Message, "mutability") {
				failures++
				t.Errorf("%s: %s -> %s: refused by something else than a rule's message: %+v", name, p[0], p[1], f)
			}
		}
		if (len(want) == 0) != (len(got) == 0) {
			failures++
			t.Errorf("%s: %s -> %s\nemulation refuses: %v\nlowered CRD refuses: %v", name, p[0], p[1], want, got)
		}
		for _, obj := range p {
			if got := lowered.refused(t, obj, obj); len(got) > 0 {
				failures++
				t.Errorf("%s: %s unchanged is refused: %v", name, obj, got)
			}
		}
		if failures > 3 {
			break
		}
	}
	if failures > 0 {
		t.Logf("%s: rules:%s", name, rulesOf(res))
	}
}

func beyond(t *testing.T, name string) kepimmutable.Updates {
	all, err := kepimmutable.Beyond()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range all {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("no updates %q", name)
	return kepimmutable.Updates{}
}

func rulesOf(res *lower.Result) string {
	var b strings.Builder
	for _, r := range res.Rules {
		fmt.Fprintf(&b, "\n  at %s: %s  # %s", r.Schema, r.Rule, r.Message)
	}
	return b.String()
}

// Every KEP example, in every mode, list type and map type: the lowered
// CRD's own validation gives the emulation's verdict.
func TestKEPExamplesLowered(t *testing.T) {
	cases, err := kepimmutable.Cases()
	if err != nil {
		t.Fatal(err)
	}
	bySchema := map[string][][2]string{}
	var order []string
	for _, tc := range cases {
		if _, ok := bySchema[tc.Schema]; !ok {
			order = append(order, tc.Schema)
		}
		bySchema[tc.Schema] = append(bySchema[tc.Schema], [2]string{tc.Old, tc.New})
	}
	for _, s := range order {
		equivalent(t, "KEP example schema\n"+s, s, bySchema[s])
	}
	if len(cases) < 100 {
		t.Errorf("only %d cases", len(cases))
	}
}

// Every update between the objects of each schema beyond the KEP, in every
// mode: the lowered CRD refuses what the emulation refuses, and only that.
// Unset then set again, of the field and of its optional parents, are among
// them: {"spec":{"a":{"b":{"c":"x"}}}} -> {"spec":{}} -> {"spec":{"a":{"b":{"c":"y"}}}}.
func TestTransitionsLowered(t *testing.T) {
	all, err := kepimmutable.Beyond()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range all {
		for _, mode := range u.Modes {
			equivalent(t, u.Name+" "+mode, u.SchemaFor(mode), u.Pairs())
		}
	}
}

// Lowering its own output changes nothing; a CRD without markers comes
// back as it was, without edits.
func TestIdempotent(t *testing.T) {
	cases, err := kepimmutable.Cases()
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	seen := map[string]bool{}
	for _, tc := range cases {
		if !seen[tc.Schema] {
			seen[tc.Schema] = true
			all = append(all, tc.Schema)
		}
	}
	beyond, err := kepimmutable.Beyond()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range beyond {
		all = append(all, u.SchemaFor("AddOnly"))
	}
	for _, s := range all {
		crd := crdWith(t, s)
		bound(rootOf(crd))
		once, err := lower.CRD(crd, strategy.Validators{})
		if err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
		twice, err := lower.CRD(once.Object, strategy.Validators{})
		if err != nil {
			t.Fatal(err)
		}
		if len(twice.Edits) > 0 || len(twice.Rules) > 0 {
			t.Errorf("lowering the output again edits it: %+v", twice.Edits)
		}
		if d := cmp.Diff(once.Object, twice.Object); d != "" {
			t.Errorf("lowering the output again changes it:\n%s", d)
		}
	}
}

// Markers kept beside rules lowered before (a CRD edited by hand after a
// lowering) do not add the same rules twice.
func TestRulesNotAddedTwice(t *testing.T) {
	s := beyond(t, "deep optional parents").SchemaFor("Immutable")
	once, err := lower.CRD(crdWith(t, s), strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	both := crdWith(t, s)
	root := rootOf(both)
	root[lower.ValidationsExtension] = []interface{}{map[string]interface{}{"rule": once.Rules[0].Rule, "message": "mine"}}
	again, err := lower.CRD(both, strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Rules) != 0 {
		t.Errorf("added again: %+v", again.Rules)
	}
	got := root[lower.ValidationsExtension]
	want := []interface{}{map[string]interface{}{"rule": once.Rules[0].Rule, "message": "mine"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

// Existing rules stay, before the new ones.
func TestExistingRulesKept(t *testing.T) {
	crd := crdWith(t, `
type: object
x-kubernetes-validations: [{rule: "self.metadata.name.startsWith('t')", message: "mine"}]
properties:
  spec:
    type: object
    x-kubernetes-validations: [{rule: "!has(self.a) || self.a != 'x'"}]
    properties:
      a: {type: string, x-kubernetes-mutability: Immutable}`)
	res, err := lower.CRD(crd, strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	root := rootOf(res.Object)
	got := root[lower.ValidationsExtension].([]interface{})
	if len(got) != 2 || got[0].(map[string]interface{})["message"] != "mine" {
		t.Errorf("root rules: %v", got)
	}
	spec := root["properties"].(map[string]interface{})["spec"].(map[string]interface{})
	if len(spec[lower.ValidationsExtension].([]interface{})) != 1 {
		t.Errorf("spec rules: %v", spec[lower.ValidationsExtension])
	}
	if _, ok := spec["properties"].(map[string]interface{})["a"].(map[string]interface{})[update.MutabilityExtension]; ok {
		t.Error("the marker is still there")
	}
}

// The messages name the field and the marker; the fieldPath names the
// field where the server can say it.
func TestRuleText(t *testing.T) {
	_, res := lowerBounded(t, "list map", beyond(t, "list map with immutable item field").Schema)
	var got []string
	for _, r := range res.Rules {
		got = append(got, fmt.Sprintf("%s | %s | %s | %s", r.Schema, r.Rule, r.Message, r.FieldPath))
	}
	want := []string{
		"spec.versions[0].schema.openAPIV3Schema | !has(oldSelf.ports) || oldSelf.ports.all(y, has(self.ports) && self.ports.exists(x, x.name == y.name)) | ports: x-kubernetes-key-mutability: AddOnly: keys cannot be removed | .ports",
		"spec.versions[0].schema.openAPIV3Schema.properties.ports.items | has(oldSelf.port) == has(self.port) && (!has(self.port) || self.port == oldSelf.port) | ports[*].port: x-kubernetes-mutability: Immutable: cannot be added, removed or changed | .port",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

// Misplaced markers are refused, with the server-style paths of the
// emulation's placement check.
func TestMisplacedMarkers(t *testing.T) {
	_, err := lower.CRD(crdWith(t, `
type: object
properties:
  spec: {type: object, x-kubernetes-key-mutability: Immutable, properties: {a: {type: string}}}`), strategy.Validators{})
	var me *lower.MarkerError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-key-mutability: Forbidden") {
		t.Errorf("got %v", err)
	}
}

// What CEL cannot tell apart: a null value is absent to the server's CEL
// (has() is false), so a nullable marked field may go from null to absent
// and back. The lowering says so in a warning.
func TestNullIsAbsentToCEL(t *testing.T) {
	s := `
type: object
properties:
  spec:
    type: object
    properties:
      ref: {type: string, nullable: true, x-kubernetes-mutability: Immutable}`
	marked, res := lowerBounded(t, "nullable", s)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].String(), "spec.ref: nullable") {
		t.Errorf("warnings: %q", res.Warnings)
	}
	emulation, lowered := newChecker(t, marked, true), newChecker(t, res.Object, false)
	if len(emulation.refused(t, `{"spec":{}}`, `{"spec":{"ref":null}}`)) == 0 {
		t.Error("the emulation allows adding a null")
	}
	if len(lowered.refused(t, `{"spec":{}}`, `{"spec":{"ref":null}}`)) != 0 {
		t.Error("the server's CEL now tells null from absent: the lowering can say more")
	}
	if len(lowered.refused(t, `{"spec":{"ref":"a"}}`, `{"spec":{"ref":null}}`)) == 0 {
		t.Error("removing by null is allowed")
	}
}

// An unbounded list makes the server estimate a huge cost: the lowering
// refuses with the field, the marker and the bound to add; with it, the
// server's validation accepts the CRD.
func TestCostUnboundedList(t *testing.T) {
	s := `
type: object
properties:
  spec:
    type: object
    properties:
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        x-kubernetes-key-mutability: Immutable
        items:
          type: object
          required: [name]
          properties:
            name: {type: string, maxLength: 63}`
	_, err := lower.CRD(crdWith(t, s), strategy.Validators{})
	var ce *lower.CostError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v", err)
	}
	want := "spec.ports: the rule lowered from x-kubernetes-key-mutability: Immutable is over the API server's CEL cost budget ("
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "): bound the sizes it reads with maxItems on spec.ports") {
		t.Errorf("got  %s\nwant %s...): bound the sizes it reads with maxItems on spec.ports", err, want)
	}
	if ce.Rule.Marked.String() != "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.ports" {
		t.Errorf("marked: %s", ce.Rule.Marked)
	}
	res, err := lower.CRD(crdWith(t, strings.Replace(s, "x-kubernetes-key-mutability: Immutable", "x-kubernetes-key-mutability: Immutable\n        maxItems: 64", 1)), strategy.Validators{})
	if err != nil || len(res.Rules) != 1 {
		t.Fatalf("with maxItems: %v", err)
	}
	c, _, err := schema.DecodeObject(res.Object, strategy.Validators{})
	if err != nil || c.InvalidErr() != nil {
		t.Errorf("the server's validation refuses it: %v %v", err, c.InvalidErr())
	}
}

// A field the server's CEL cannot read (no type) is refused with the
// server's compile error, not reported as a bug.
func TestUnreachableField(t *testing.T) {
	_, err := lower.CRD(crdWith(t, `
type: object
properties:
  spec:
    type: object
    properties:
      elements:
        type: array
        maxItems: 8
        x-kubernetes-key-mutability: AddOnly
        items: {x-kubernetes-preserve-unknown-fields: true}`), strategy.Validators{})
	var ue *lower.UnreachableError
	if !errors.As(err, &ue) || err.Error() != "spec.elements: x-kubernetes-key-mutability: AddOnly cannot be lowered: the API server's CEL cannot read the field, or a field below it, because its schema has no type (undefined field 'elements')" {
		t.Errorf("got %v", err)
	}
}

// A value holding list-type sets, with a schema so large that comparing
// them in order would make a rule longer than the server takes, is
// compared with CEL's ==, with a warning.
func TestLargeUnorderedValue(t *testing.T) {
	var b strings.Builder
	b.WriteString("type: object\nproperties:\n  spec:\n    type: object\n    properties:\n      big:\n        type: object\n        x-kubernetes-mutability: Immutable\n        properties:\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "          field%d: {type: array, maxItems: 4, x-kubernetes-list-type: set, items: {type: string, maxLength: 8}}\n", i)
	}
	res, err := lower.CRD(crdWith(t, b.String()), strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rules) != 1 || len(res.Rules[0].Rule) > 1000 || len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0].String(), "spec.big: compared with CEL's ==") {
		t.Errorf("rules %d (%d characters), warnings %q", len(res.Rules), len(res.Rules[0].Rule), res.Warnings)
	}
}
