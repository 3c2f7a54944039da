package finding

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// Each shape of the checks converts to one Finding, worded here.
func TestConversions(t *testing.T) {
	for _, tc := range []struct {
		got  Finding
		want Finding
	}{
		{FromChange(prune.Change{Path: "spec.x", Reason: prune.UnknownField, Action: prune.Removed, Value: 1, Line: 4}, "Widget", ""),
			Finding{Check: Prune, Reason: "UnknownField", Path: "spec.x", Severity: Warning, Message: `pruned unknown field "spec.x"`, Value: 1, Line: 4}},
		{FromChange(prune.Change{Path: "metadata.namespace", Reason: prune.ClusterScoped, Action: prune.Removed}, "Widget", ""),
			Finding{Check: Prune, Reason: "ClusterScoped", Path: "metadata.namespace", Severity: Warning, Message: `dropped "metadata.namespace": Widget is cluster-scoped`}},
		{FromChange(prune.Change{Path: "spec.a", Reason: prune.Defaulted, Action: prune.Added, NewValue: map[string]interface{}{"b": "<&>"}}, "Widget", ""),
			Finding{Check: Prune, Reason: "Defaulted", Path: "spec.a", Severity: Warning, Message: `defaulted "spec.a" to {"b":"<&>"}`, NewValue: map[string]interface{}{"b": "<&>"}}},
		{FromInvalid(prune.FieldError{Field: "spec.size", Type: "Invalid value", Value: 50, Message: "spec.size: Invalid value: 50: too big", Line: 7}),
			Finding{Check: Invalid, Reason: "Invalid value", Path: "spec.size", Severity: Error, Message: "the server would refuse it: spec.size: Invalid value: 50: too big", Line: 7}},
		{FromUpdate(update.Finding{Path: "spec.region", Rule: "x-kubernetes-mutability: Immutable", Message: "cannot be changed", Old: "a", New: "b", Line: 3}),
			Finding{Check: Update, Reason: "x-kubernetes-mutability: Immutable", Path: "spec.region", Severity: Error, Message: "x-kubernetes-mutability: Immutable: cannot be changed", Value: "a", NewValue: "b", Line: 3}},
		{FromStructural("ws.example.com", field.Required(field.NewPath("spec", "x", "type"), "must not be empty for specified object fields")),
			Finding{Check: NonStructural, Reason: "Required value", Path: "spec.x.type", Severity: Error, Message: "CustomResourceDefinition ws.example.com is not structural: Required value: must not be empty for specified object fields"}},
		{FromCRDChange(crdupgrade.Change{Kind: crdupgrade.FieldRemoved, Severity: crdupgrade.DataLoss, Version: "v1", Path: "spec.name"}),
			Finding{Check: DataLoss, Reason: "FieldRemoved", Path: "spec.name", Version: "v1", Severity: Error, Message: `v1: "spec.name" removed from the schema: pruned from every stored object`}},
		{FromCRDChange(crdupgrade.Change{Kind: crdupgrade.EnumTightened, Severity: crdupgrade.Invalid, Version: "v1", Path: "spec.mode", Keyword: "enum", Old: []interface{}{"c"}}),
			Finding{Check: Invalid, Reason: "EnumTightened", Path: "spec.mode", Version: "v1", Severity: Error, Message: `v1: "spec.mode" no longer allows ["c"]`, Value: []interface{}{"c"}}},
		{FromCRDChange(crdupgrade.Change{Kind: crdupgrade.BoundTightened, Severity: crdupgrade.Invalid, Version: "v1", Path: "spec.size", Keyword: "maximum", Old: 10.0, New: 5.0}),
			Finding{Check: Invalid, Reason: "BoundTightened", Path: "spec.size", Version: "v1", Severity: Error, Message: `v1: "spec.size" maximum changed from 10 to 5`, Value: 10.0, NewValue: 5.0}},
		{FromCRDChange(crdupgrade.Change{Kind: crdupgrade.DefaultAdded, Severity: crdupgrade.Warning, Version: "v1", Path: "spec.size", Keyword: "default", New: 3.0}),
			Finding{Check: CRDChange, Reason: "DefaultAdded", Path: "spec.size", Version: "v1", Severity: Warning, Message: `v1: "spec.size" new default 3: objects without it read as having it`, NewValue: 3.0}},
		{FromCRDChange(crdupgrade.Change{Kind: crdupgrade.VersionAdded, Severity: crdupgrade.Info, Version: "v2", Path: "spec.versions[v2]"}),
			Finding{Check: CRDChange, Reason: "VersionAdded", Path: "spec.versions[v2]", Version: "v2", Severity: Info, Message: "version v2 added"}},
		{FromCRDChange(crdupgrade.Change{Kind: crdupgrade.Refused, Severity: crdupgrade.Breaking, Path: "spec.scope", Detail: `Invalid value: "Cluster": field is immutable`}),
			Finding{Check: Breaking, Reason: "Refused", Path: "spec.scope", Severity: Error, Message: `the server would refuse the CRD update: spec.scope: Invalid value: "Cluster": field is immutable`}},
		{FromCRDWarning(`unrecognized format "uint"`),
			Finding{Check: CRDWarning, Severity: Warning, Message: `unrecognized format "uint"`}},
		{NoCRD(document.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget"}),
			Finding{Check: MissingCRD, Severity: Warning, Message: "no CustomResourceDefinition for example.com/v1, kind Widget: not checked"}},
	} {
		if tc.got.Message != tc.want.Message || tc.got.Check != tc.want.Check || tc.got.Reason != tc.want.Reason || tc.got.Path != tc.want.Path || tc.got.Version != tc.want.Version ||
			tc.got.Severity != tc.want.Severity || tc.got.Line != tc.want.Line || JSON(tc.got.Value) != JSON(tc.want.Value) || JSON(tc.got.NewValue) != JSON(tc.want.NewValue) {
			t.Errorf("got  %+v\nwant %+v", tc.got, tc.want)
		}
	}
}

// The objects a change hurts, at the end of its message: the first three
// by name; every object for a harmful change of none in particular.
func TestObjectsHurt(t *testing.T) {
	objs := func(names ...string) []document.ObjectRef {
		var out []document.ObjectRef
		for _, n := range names {
			out = append(out, document.ObjectRef{Kind: "Gizmo", Namespace: "default", Name: n})
		}
		return out
	}
	removed := crdupgrade.Change{Kind: crdupgrade.FieldRemoved, Severity: crdupgrade.DataLoss}
	renamed := crdupgrade.Change{Kind: crdupgrade.NameChanged, Severity: crdupgrade.Breaking}
	unserved := crdupgrade.Change{Kind: crdupgrade.VersionUnserved, Severity: crdupgrade.Breaking}
	added := crdupgrade.Change{Kind: crdupgrade.VersionAdded, Severity: crdupgrade.Info}
	for _, tc := range []struct {
		a       crdupgrade.Affected
		checked int
		want    string
	}{
		{crdupgrade.Affected{Change: removed, Counted: true}, 4, ""},
		{crdupgrade.Affected{Change: removed, Counted: true, Objects: objs("a")}, 4, " [1 object: Gizmo default/a]"},
		{crdupgrade.Affected{Change: removed, Counted: true, Objects: objs("a", "b", "c", "d", "e")}, 5, " [5 objects: Gizmo default/a, Gizmo default/b, Gizmo default/c, and 2 more]"},
		{crdupgrade.Affected{Change: renamed}, 4, " [all 4 objects]"},
		{crdupgrade.Affected{Change: renamed}, 0, ""},
		{crdupgrade.Affected{Change: unserved, Counted: true, Objects: objs("a")}, 4, " [1 object: Gizmo default/a]"},
		{crdupgrade.Affected{Change: unserved, Counted: true}, 4, ""},
		{crdupgrade.Affected{Change: added}, 4, ""},
	} {
		if got := ObjectsHurt(tc.a, tc.checked); got != tc.want {
			t.Errorf("ObjectsHurt(%s, %d objects, %d checked) = %q, want %q", tc.a.Change.Kind, len(tc.a.Objects), tc.checked, got, tc.want)
		}
	}
}

// An object of a version the new CRD removes or no longer serves: a
// Breaking error at its apiVersion, by its manifest or by a field manager
// of it (an object of a cluster); the first, before what it loses.
func TestFromImpactVersionUse(t *testing.T) {
	imp := &crdupgrade.ObjectImpact{
		Result: prune.Result{Object: document.ObjectRef{APIVersion: "example.com/v1alpha1", Kind: "Gizmo", Namespace: "default", Name: "a"},
			Changes: []prune.Change{{Path: "spec.x", Reason: prune.UnknownField, Line: 7}}},
		Unserved: []crdupgrade.VersionUse{
			{Version: "v1alpha1", Removed: true, Line: 2},
			{Version: "v1beta1", Manager: "gizmo-controller", Operation: "Update", Subresource: "status"},
			{Version: "v1alpha1", Removed: true, Manager: "kubectl-client-side-apply", Operation: "Update"},
		},
	}
	var got []string
	for _, f := range FromImpact(imp) {
		got = append(got, fmt.Sprintf("%s %s %s %s %s %v line %d: %s", f.Check, f.Severity, f.Reason, f.Path, f.Version, f.Value, f.Line, f.Message))
	}
	want := []string{
		"Breaking error VersionRemoved apiVersion v1alpha1 example.com/v1alpha1 line 2: apiVersion example.com/v1alpha1 is removed by the new CRD: its manifest is refused once the new CRD is applied",
		`Breaking error VersionUnserved apiVersion v1beta1 example.com/v1beta1 line 0: field manager "gizmo-controller" wrote it in apiVersion example.com/v1beta1 (Update of /status), a version the new CRD no longer serves: its next write in that version is refused (metadata.managedFields)`,
		`Breaking error VersionRemoved apiVersion v1alpha1 example.com/v1alpha1 line 0: field manager "kubectl-client-side-apply" wrote it in apiVersion example.com/v1alpha1 (Update), a version the new CRD removes: its next write in that version is refused (metadata.managedFields)`,
		`DataLoss error UnknownField spec.x  <nil> line 7: loses "spec.x" under the new CRD: pruned when read, for good on its next write`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromImpact (-want +got):\n%s", diff)
	}
}

// fakeCRDValidator accepts every CRD, with the warnings given.
type fakeCRDValidator []string

func (v fakeCRDValidator) ValidateCRDCreate(*apiextensionsv1.CustomResourceDefinition) (field.ErrorList, []string) {
	return nil, v
}

func (v fakeCRDValidator) ValidateDecodedCRDCreate(*apiextensionsinternal.CustomResourceDefinition) (field.ErrorList, []string) {
	return nil, v
}

func (v fakeCRDValidator) ValidateCRDLegacy(*apiextensionsv1.CustomResourceDefinition) (field.ErrorList, []string) {
	return nil, v
}

// The warnings about a CRD as read: that no server serves
// apiextensions.k8s.io/v1beta1, then the server's, in its words.
func TestOfCRD(t *testing.T) {
	for _, tc := range []struct {
		apiVersion string
		warnings   []string
		want       []Finding
	}{
		{"apiextensions.k8s.io/v1", nil, nil},
		{"apiextensions.k8s.io/v1", []string{`unrecognized format "uint"`}, []Finding{{Check: CRDWarning, Severity: Warning, Message: `unrecognized format "uint"`}}},
		{"apiextensions.k8s.io/v1beta1", []string{"w"}, []Finding{LegacyCRD("foos.example.com"), {Check: CRDWarning, Severity: Warning, Message: "w"}}},
	} {
		obj := map[string]interface{}{
			"apiVersion": tc.apiVersion, "kind": "CustomResourceDefinition",
			"metadata": map[string]interface{}{"name": "foos.example.com"},
			"spec": map[string]interface{}{
				"group": "example.com", "scope": "Namespaced",
				"names":    map[string]interface{}{"plural": "foos", "kind": "Foo"},
				"versions": []interface{}{map[string]interface{}{"name": "v1", "served": true, "storage": true}},
			},
		}
		crd, _, err := schema.DecodeObject(obj, fakeCRDValidator(tc.warnings))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, OfCRD(crd)); diff != "" {
			t.Errorf("%s: OfCRD (-want +got):\n%s", tc.apiVersion, diff)
		}
	}
	legacy := LegacyCRD("foos.example.com")
	for _, words := range []string{"no API server since Kubernetes 1.22", "cannot be applied", "apiextensions.k8s.io/v1 ", "kubectl get crd foos.example.com -o yaml", "structural"} {
		if !strings.Contains(legacy.Message, words) {
			t.Errorf("LegacyCRD does not say %q: %s", words, legacy.Message)
		}
	}
}

// TestEmulationDiffers: a CRD whose rules call a function that the
// emulated minor's own server answers otherwise gets a note that says so,
// on that minor only; a CRD that does not call it gets none. The note
// fails no run.
func TestEmulationDiffers(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	crdOf := func(rule string) *schema.CRD {
		t.Helper()
		var obj map[string]interface{}
		if err := yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: subnets.example.com}
spec:
  group: example.com
  names: {kind: Subnet, plural: subnets}
  scope: Cluster
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
            properties:
              l: {type: array, maxItems: 4, items: {type: string, maxLength: 43}}
            x-kubernetes-validations:
            - rule: '`+rule+`'
`), &obj); err != nil {
			t.Fatal(err)
		}
		crd, ok, err := schema.FromObject(obj, strategy.Validators{})
		if err != nil || !ok {
			t.Fatal(err)
		}
		return crd
	}
	const calls = "self.l.all(a, self.l.all(b, a == b || !cidr(a).containsCIDR(cidr(b))))"
	for _, tc := range []struct {
		minor kubeversion.Minor
		rule  string
		notes int
	}{
		{31, calls, 1},
		{32, calls, 0},
		{37, calls, 0},
		{31, "self.l.all(a, isCIDR(a))", 0},
	} {
		if _, err := kubeversion.Use(tc.minor); err != nil {
			t.Fatal(err)
		}
		var notes []Finding
		for _, f := range OfCRD(crdOf(tc.rule)) {
			if f.Reason == ReasonEmulationDiffers {
				notes = append(notes, f)
			}
		}
		if len(notes) != tc.notes {
			t.Errorf("%s, %s: %d notes, want %d: %+v", tc.minor, tc.rule, len(notes), tc.notes, notes)
		}
		for _, n := range notes {
			if n.Check != "" || !strings.Contains(n.Message, "kube-apiserver 1.31's own server") || !strings.Contains(n.Message, "kubernetes#130450") {
				t.Errorf("%s: %+v: want a note of no check naming the minor and the fix", tc.minor, n)
			}
		}
	}
}
