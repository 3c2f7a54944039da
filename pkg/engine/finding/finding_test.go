package finding

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
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
		{NoCRD(prune.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget"}),
			Finding{Check: MissingCRD, Severity: Warning, Message: "no CustomResourceDefinition for example.com/v1, kind Widget"}},
	} {
		if tc.got.Message != tc.want.Message || tc.got.Check != tc.want.Check || tc.got.Reason != tc.want.Reason || tc.got.Path != tc.want.Path ||
			tc.got.Severity != tc.want.Severity || tc.got.Line != tc.want.Line || JSON(tc.got.Value) != JSON(tc.want.Value) || JSON(tc.got.NewValue) != JSON(tc.want.NewValue) {
			t.Errorf("got  %+v\nwant %+v", tc.got, tc.want)
		}
	}
}
