package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// TestCheckUpdateCEL asks the API server whether each update of
// testdata/cel/cases.yaml is refused (CEL transition rules, optionalOldSelf,
// rules on list-type map items, ratcheting), and checks that kubectl crd
// check-update gives the same verdict, offline (--old) and live (the old
// object read from the cluster).
func TestCheckUpdateCEL(t *testing.T) {
	requireOwnCluster(t)
	const (
		dir  = "test/e2e/testdata/cel"
		name = "buckets.cel.example.com"
	)
	x := NewTest(t)
	kubectl := kubectls[0].Path
	apply := func(file string) {
		t.Helper()
		if r := x.Run(kubectl, "apply", "-f", filepath.Join(dir, file)); r.Code != 0 {
			t.Fatalf("kubectl apply %s: exit %d\n%s", file, r.Code, r.Stderr)
		}
		if r := x.Run(kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+name); r.Code != 0 {
			t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
		}
	}

	data, err := os.ReadFile(filepath.Join(repoRoot(), dir, "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name     string
		Old, New map[string]interface{}
	}
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	buckets := dynamic.NewForConfigOrDie(cfg).Resource(runtimeschema.GroupVersionResource{Group: "cel.example.com", Version: "v1", Resource: "buckets"}).Namespace("default")
	ctx := context.Background()
	bucket := func(i int, spec map[string]interface{}) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "cel.example.com/v1", "kind": "Bucket",
			"metadata": map[string]interface{}{"name": fmt.Sprintf("case-%d", i), "namespace": "default"},
			"spec":     spec,
		}}
	}

	// The old objects are created before spec.label has its maxLength.
	apply("crd-before.yaml")
	for i, tc := range cases {
		_ = buckets.Delete(ctx, fmt.Sprintf("case-%d", i), metav1.DeleteOptions{})
		if _, err := createRetrying(ctx, buckets, bucket(i, tc.Old)); err != nil {
			t.Fatalf("%s: creating the old object: %v", tc.Name, err)
		}
	}
	apply("crd.yaml")

	tmp := t.TempDir()
	refusedByServer := 0
	for i, tc := range cases {
		old, err := buckets.Get(ctx, fmt.Sprintf("case-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nu := bucket(i, tc.New)
		nu.SetResourceVersion(old.GetResourceVersion())
		_, serverErr := buckets.Update(ctx, nu, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		want := 0
		if serverErr != nil {
			want = 1
			refusedByServer++
		}

		oldFile, newFile := filepath.Join(tmp, fmt.Sprintf("old-%d.json", i)), filepath.Join(tmp, fmt.Sprintf("new-%d.json", i))
		writeJSON(t, oldFile, bucket(i, tc.Old).Object)
		writeJSON(t, newFile, bucket(i, tc.New).Object)
		for _, mode := range []struct {
			name string
			args []string
		}{
			{"offline", []string{"check-update", "--offline", "--crd-file", filepath.Join(dir, "crd.yaml"), "--old", oldFile, "-f", newFile}},
			{"live", []string{"check-update", "-f", newFile}},
		} {
			r := x.Run("kubectl-crd", mode.args...)
			if r.Code != want {
				t.Errorf("%s (%s): check-update exit %d, the server says %v\nstdout:\n%s\nstderr:\n%s", tc.Name, mode.name, r.Code, serverErr, r.Stdout, r.Stderr)
				continue
			}
			// Each message of the server's refusal is named.
			if serverErr != nil {
				for _, msg := range []string{"region is immutable", "storageClass is immutable once set", "storageClass cannot be removed", "tier can be set once", "the action of a rule is immutable", "may not be longer than 3"} {
					if strings.Contains(serverErr.Error(), msg) && !strings.Contains(r.Stdout, msg) {
						t.Errorf("%s (%s): the server says %q; check-update:\n%s", tc.Name, mode.name, msg, r.Stdout)
					}
				}
			}
		}
	}
	t.Logf("%d updates, %d refused by the server", len(cases), refusedByServer)
	if refusedByServer == 0 || refusedByServer == len(cases) {
		t.Errorf("the cases do not tell refusals from allowed updates")
	}
}

func writeJSON(t *testing.T, name string, obj interface{}) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// createRetrying creates obj; right after a CRD is established its endpoint
// may answer 404 for a moment.
func createRetrying(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return createWith(ctx, ri, obj, metav1.CreateOptions{})
}

// Live, an object that kubectl itself refuses to send (metadata it cannot
// decode, no apiVersion, an apiVersion that is not a string) is an input
// error with its file and line, found before the cluster is asked for the
// old object: exit 2, never a cluster error or a silent pass. An object
// without a name has no old version: a create, without a request.
func TestCheckUpdateBadInputLive(t *testing.T) {
	applyExampleCRD(t)
	const job = "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: rotate-logs\n  namespace: ops\nspec:\n  command: x\n"
	dir := t.TempDir()
	kubectl := kubectls[0].Path
	for _, tc := range []struct {
		name, object, want string
	}{
		{"a string for metadata", "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata: x\n",
			":1: the server would refuse this object: metadata: json: cannot unmarshal string into Go value of type v1.ObjectMeta"},
		{"a number for a name", strings.Replace(job, "rotate-logs", "5", 1),
			":1: the server would refuse this object: metadata: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"},
		{"no apiVersion", strings.Replace(job, "apiVersion: operations.example.com/v1\n", "", 1),
			":1: not a Kubernetes object: apiVersion and kind must be set"},
		{"a number for apiVersion", strings.Replace(job, "operations.example.com/v1", "5", 1),
			":1: not a Kubernetes object: apiVersion and kind must be set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(file, []byte(tc.object), 0o600); err != nil {
				t.Fatal(err)
			}
			x := NewTest(t)
			// kubectl refuses the file itself, before any request: an input problem.
			k := x.Run(kubectl, "apply", "--dry-run=server", "-f", file)
			if k.Code == 0 || !strings.HasPrefix(k.Stderr, "error: ") || !strings.Contains(k.Stderr, file) {
				t.Fatalf("kubectl apply: exit %d, stderr:\n%s", k.Code, k.Stderr)
			}
			r := x.Run("kubectl-crd", "check-update", "-f", file)
			if want := "error: " + file + tc.want + "\n"; r.Code != 2 || r.Stdout != "" || r.Stderr != want {
				t.Errorf("check-update: exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s\n(kubectl apply: %s)", r.Code, r.Stdout, r.Stderr, want, k.Stderr)
			}
		})
	}

	r := NewTest(t).WithStdin(strings.Replace(job, "name: rotate-logs", "generateName: job-", 1)).Run("kubectl-crd", "check-update", "-f", "-")
	if want := "MaintenanceNightlyJob ops/<unnamed>: no old object: a create, not an update (-:1)\n"; r.Code != 0 || r.Stdout != want {
		t.Errorf("generateName: exit %d, stdout %q, want %q; stderr:\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}
