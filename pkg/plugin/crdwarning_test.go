package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// uintCRD is a CRD the server accepts with a warning.
const uintCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.com}
spec:
  group: example.com
  names: {kind: Foo, plural: foos}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {n: {type: integer, format: uint}}}}
`

// serverWarnings are the server's warnings on uintCRD (strategy.Validators').
func serverWarnings(t *testing.T) []string {
	t.Helper()
	docs, err := document.Read(strings.NewReader(uintCRD), "-")
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := schema.DecodeObject(docs[0].Object, strategy.Validators{})
	if err != nil || len(c.Warnings()) == 0 {
		t.Fatalf("the server warns of nothing: %v", err)
	}
	return c.Warnings()
}

// The server's warnings on a CRD, and a CRD in apiextensions.k8s.io/v1beta1:
// explain-structural reports them in its JSON and prints them; the exit
// codes are those without them.
func TestExplainCRDWarnings(t *testing.T) {
	server := serverWarnings(t)
	r := run(t, uintCRD, "explain-structural", "-f", "-", "-o", "json")
	var got structuralReport
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 || len(got.CRDs) != 1 {
		t.Fatalf("explain-structural -o json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var want []crdWarning
	var stderr string
	for _, w := range server {
		want = append(want, crdWarning{Message: w})
		stderr += "Warning: CustomResourceDefinition foos.example.com: " + w + " (-:1)\n"
	}
	if diff := cmp.Diff(want, got.CRDs[0].Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if r.stderr != stderr {
		t.Errorf("stderr %q, want %q", r.stderr, stderr)
	}

	legacy := strings.Replace(uintCRD, "apiextensions.k8s.io/v1\n", "apiextensions.k8s.io/v1beta1\n", 1)
	r = run(t, legacy, "explain-structural", "-f", "-")
	note := finding.LegacyCRD("foos.example.com").Message
	if !strings.Contains(r.stderr, "Warning: CustomResourceDefinition foos.example.com: "+note+" (-:1)\n") ||
		!strings.Contains(r.stdout, "in apiextensions.k8s.io/v1beta1, which no API server serves since Kubernetes 1.22") {
		t.Errorf("a v1beta1 CRD: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
