package prune_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// writtenCRD is a CRD as people write it: the defaults left out, false and
// empty values written, a status block of a generator, a vendor extension.
const writtenCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  creationTimestamp: null
spec:
  group: example.com
  preserveUnknownFields: false # the default
  names:
    kind: Widget
    plural: widgets
    shortNames: []
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns: []
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: []
            properties:
              zone:
                type: string
                x-kubernetes-mutability: Immutable # kubectl crd's marker
status:
  acceptedNames: {kind: "", plural: ""}
  conditions: []
  storedVersions: []
`

func pruneCRD(t *testing.T, text string, p schema.CRDPreparer) (*prune.Result, string) {
	t.Helper()
	docs, err := document.Read(strings.NewReader(text), "crd.yaml")
	if err != nil || len(docs) != 1 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	res, err := prune.Document(docs[0], schema.NewRegistry(), prune.Options{CRDs: p})
	if err != nil {
		t.Fatal(err)
	}
	b, err := docs[0].Encode()
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestStoredCRD: each change the server makes to a CRD is named with the
// step that makes it; the document becomes the stored CRD, comments and
// the vendor extensions the types lack kept; pruned again, it is unchanged.
func TestStoredCRD(t *testing.T) {
	res, out := pruneCRD(t, writtenCRD, strategy.Validators{})
	if res.Status != prune.IsCRD {
		t.Fatalf("status %s", res.Status)
	}
	var got []string
	for _, ch := range res.Changes {
		if ch.Line == 0 {
			t.Errorf("%s: no line", ch.Path)
		}
		got = append(got, string(ch.Reason)+" "+string(ch.Action)+" "+ch.Path)
	}
	sort.Strings(got)
	want := []string{
		"Defaulted Added spec.conversion",
		"Defaulted Added spec.names.listKind",
		"Defaulted Added spec.names.singular",
		"MetadataNormalized Removed metadata.creationTimestamp",
		"Normalized Removed spec.names.shortNames",
		"Normalized Removed spec.preserveUnknownFields",
		"Normalized Removed spec.versions[0].additionalPrinterColumns",
		"Normalized Removed spec.versions[0].schema.openAPIV3Schema.properties.spec.required",
		"StatusSubresource Removed status",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
	for _, keep := range []string{"x-kubernetes-mutability: Immutable # kubectl crd's marker", "strategy: None"} {
		if !strings.Contains(out, keep) {
			t.Errorf("no %q in\n%s", keep, out)
		}
	}
	again, out2 := pruneCRD(t, out, strategy.Validators{})
	if len(again.Changes) != 0 || out2 != out {
		t.Errorf("not idempotent: %+v\n%s", again.Changes, out2)
	}
	// Without the server's preparation, a CRD passes through.
	if res, out := pruneCRD(t, writtenCRD, nil); len(res.Changes) != 0 || out != writtenCRD {
		t.Errorf("without CRDs: %+v\n%s", res.Changes, out)
	}
}

// A CRD in apiextensions.k8s.io/v1beta1 is created by no server: it
// passes through.
func TestStoredCRDLegacyPassesThrough(t *testing.T) {
	legacy := strings.Replace(writtenCRD, "apiextensions.k8s.io/v1\n", "apiextensions.k8s.io/v1beta1\n", 1)
	if res, out := pruneCRD(t, legacy, strategy.Validators{}); len(res.Changes) != 0 || out != legacy {
		t.Errorf("v1beta1: %+v\n%s", res.Changes, out)
	}
}
