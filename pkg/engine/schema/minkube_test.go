package schema_test

import (
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// MinKubeVersion: the lowest minor whose server accepts a CRD, and each
// refusing minor's first reason, as the server code answers per minor
// (strategy's TestCRDCreateByMinor holds those answers to the real
// servers): the format library from 1.32, semver from 1.34, a rule that
// compiles nowhere on no minor. The minor that answered before answers
// again afterwards.
func TestMinKubeVersion(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	if _, err := kubeversion.Use(33); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule   string
		lowest kubeversion.Minor
		reason string
	}{
		{`!format.dns1123Label().validate(self.a).hasValue()`, 32, "undeclared reference to 'format'"},
		{`isSemver(self.a)`, 34, "undeclared reference to 'isSemver'"},
		{`self.a.size() <= 10`, 31, ""},
		{`self.a.noSuchFunction()`, 0, "undeclared reference to 'noSuchFunction'"},
	} {
		a, err := schema.MinKubeVersion(minorCRD(t, tc.rule), strategy.Validators{})
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		if a.Lowest != tc.lowest || a.From() != (tc.lowest != 0) || len(a.Accepted)+len(a.Refused) != len(kubeversion.Supported()) {
			t.Errorf("%s: lowest %s, from %v, accepted %v, refused %v; want lowest %s", tc.rule, a.Lowest, a.From(), a.Accepted, a.Refused, tc.lowest)
		}
		for _, r := range a.Refused {
			if (tc.lowest != 0 && r.Minor >= tc.lowest) || !strings.Contains(r.Reason, "compilation failed") || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("%s: refused by %s: %q, want refused below %s only, for %q", tc.rule, r.Minor, r.Reason, tc.lowest, tc.reason)
			}
		}
		if want := int(tc.lowest - kubeversion.Oldest); tc.lowest != 0 && len(a.Refused) != want {
			t.Errorf("%s: %d minors refuse, want %d", tc.rule, len(a.Refused), want)
		}
		if got := kubeversion.Current().Minor; got != 33 {
			t.Errorf("%s: afterwards %s answers, want 1.33", tc.rule, got)
		}
	}
}

// A CRD of a cluster is asked as a create of it anew: what the server set
// on it (status, uid, resourceVersion) is not what a create sends, and
// the server accepts the rest.
func TestAsCreated(t *testing.T) {
	var crd apiextensionsv1.CustomResourceDefinition
	obj := minorCRD(t, `self.a.size() <= 10`)
	meta := obj["metadata"].(map[string]interface{})
	meta["uid"], meta["resourceVersion"], meta["generation"] = "8f4b", "4711", 3
	meta["labels"] = map[string]interface{}{"app": "w"}
	obj["status"] = map[string]interface{}{"acceptedNames": map[string]interface{}{"kind": "Widget", "plural": "widgets"}, "storedVersions": []interface{}{"v1"}}
	data, _ := yaml.Marshal(obj)
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	created, err := schema.AsCreated(&crd)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Refusal(created, strategy.Validators{}); err != nil {
		t.Errorf("created anew: %v", err)
	}
	if got := fmt.Sprint(created["metadata"]); got != "map[labels:map[app:w] name:widgets.example.com]" {
		t.Errorf("metadata %s", got)
	}
	if _, ok := created["status"]; ok {
		t.Errorf("status kept: %v", created["status"])
	}
}

func minorCRD(t *testing.T, rule string) map[string]interface{} {
	t.Helper()
	var obj map[string]interface{}
	err := yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
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
            required: [a]
            properties:
              a: {type: string, maxLength: 10}
            x-kubernetes-validations:
            - rule: '`+rule+`'
`), &obj)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}
