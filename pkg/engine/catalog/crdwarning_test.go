package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// widgetsCRD is a CRD whose schema has a format the server does not know.
const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
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
            properties:
              replicas: {type: integer, format: uint}
`

// A CRD the server accepts with warnings is added with them, in the
// server's words, at the CRD's line; one in apiextensions.k8s.io/v1beta1
// with the word that no server serves it. Neither is an error.
func TestAddCRDWarnings(t *testing.T) {
	c := New(Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}})
	docs := read(t, "crds.yaml", "# the CRDs\n---\n"+widgetsCRD)
	_, server := strategy.Validators{}.ValidateCRDCreate(mustDecode(t, widgetsCRD).Object)
	if len(server) == 0 {
		t.Fatal("the server's validation warns of nothing")
	}
	var want []finding.Finding
	for _, w := range server {
		want = append(want, finding.Finding{Check: finding.CRDWarning, Severity: finding.Warning, Message: w, Line: 3})
	}
	_, got, err := c.addCRD(docs[0])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}

	legacy := read(t, "legacy.yaml", `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {plural: gadgets, kind: Gadget}
  scope: Namespaced
  version: v1
`)[0]
	crd, got, err := c.addCRD(legacy)
	if err != nil || crd == nil {
		t.Fatalf("addCRD: %v, %v", crd, err)
	}
	note := finding.LegacyCRD("gadgets.example.com")
	note.Line = 1
	var warnings []finding.Finding // not its violations: it is not structural
	for _, f := range got {
		if f.Check == finding.CRDWarning {
			warnings = append(warnings, f)
		}
	}
	if diff := cmp.Diff([]finding.Finding{note}, warnings); diff != "" {
		t.Errorf("findings of a v1beta1 CRD (-want +got):\n%s", diff)
	}
}

func mustDecode(t *testing.T, text string) *schema.CRD {
	t.Helper()
	crd, err := schema.DecodeCRD([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return schema.NewCRD(crd)
}
