package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// check-update -o json gives each violation of a CEL rule the type of the
// server's error (issue 39): the CRD of pkg/plugin/testdata/violationtype
// applied, its old object created, the new one sent as a dry-run update;
// the type of each cause of the server's refusal is the type check-update
// gives the violation at that field, offline. The mutability marker,
// which the server does not enforce, is no cause and has no type.
func TestCheckUpdateViolationTypeParity(t *testing.T) {
	requireOwnCluster(t) // it creates a CRD
	const dir = "pkg/plugin/testdata/violationtype"
	x := NewTest(t)
	k := kubectls[0].Path
	// The server does not know the marker: kubectl's strict validation would refuse it.
	if r := x.Run(k, "apply", "--validate=false", "-f", filepath.Join(dir, "crd.yaml")); r.Code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s", r.Code, r.Stderr)
	}
	t.Cleanup(func() { x.Run(k, "delete", "crd/locks.types.example.com", "--wait=false") })
	if r := x.Run(k, "wait", "--for=condition=Established", "--timeout=60s", "crd/locks.types.example.com"); r.Code != 0 {
		t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
	}
	ctx := context.Background()
	ri := dynamicClient(t).Resource(runtimeschema.GroupVersionResource{Group: "types.example.com", Version: "v1", Resource: "locks"}).Namespace("default")
	old := readDocs(t, filepath.Join(repoRoot(), dir, "old.yaml"))[0]
	created, err := createRetrying(ctx, ri, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(old.Object)})
	if err != nil {
		t.Fatal(err)
	}
	nu := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(readDocs(t, filepath.Join(repoRoot(), dir, "new.yaml"))[0].Object)}
	nu.SetResourceVersion(created.GetResourceVersion())
	_, err = ri.Update(ctx, nu, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("the server's answer: %v, want the update refused as invalid", err)
	}
	server := map[string]interface{}{}
	for _, c := range status.Status().Details.Causes {
		server[c.Field] = field.ErrorType(c.Type).String()
	}

	r := x.Run("kubectl-crd", "check-update", "--offline", "--crd-file", filepath.Join(dir, "crd.yaml"), "--old", filepath.Join(dir, "old.yaml"),
		"-f", filepath.Join(dir, "new.yaml"), "-o", "json")
	var report struct {
		Items []struct{ Violations []map[string]interface{} }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || r.Code != 1 || len(report.Items) != 1 {
		t.Fatalf("check-update: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	got := map[string]interface{}{}
	for _, v := range report.Items[0].Violations {
		if v["type"] != nil || v["rule"] != "x-kubernetes-mutability: Immutable" {
			got[v["path"].(string)] = v["type"]
		}
	}
	if diff := cmp.Diff(server, got); diff != "" {
		t.Errorf("the types of the violations by field, the server's against check-update's (-server +check-update):\n%s", diff)
	}
}
