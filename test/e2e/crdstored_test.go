package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// crdDriftExample is a CRD as people write it, which the server stores
// otherwise (docs/crd-drift.md).
const crdDriftExample = "examples/crd-drift/crd.yaml"

// serverSetMetadata are the fields of metadata the server sets on a create,
// which a manifest does not hold: what the comparisons leave out, with
// status.
var serverSetMetadata = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"}

// asManifest is a CRD as the server returns it, less status and what it
// sets of metadata, as JSON values (numbers float64) for comparison.
func asManifest(t *testing.T, obj map[string]interface{}) interface{} {
	t.Helper()
	obj = runtime.DeepCopyJSON(obj)
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]interface{}); ok {
		for _, f := range serverSetMetadata {
			delete(meta, f)
		}
	}
	return jsonValue(t, obj)
}

// jsonValue is v as encoding/json reads it back.
func jsonValue(t *testing.T, v interface{}) interface{} {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out interface{}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// pruneItems runs kubectl crd prune --offline on files, -o json, and
// returns the objects it prints, in order.
func pruneItems(t *testing.T, x *Test, files ...string) []interface{} {
	t.Helper()
	args := []string{"prune", "--offline", "-o", "json"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	r := x.Run("kubectl-crd", args...)
	if r.Code != 0 {
		t.Fatalf("prune: exit %d\n%s", r.Code, tail(r.Stderr, 40))
	}
	var list struct{ Items []interface{} }
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("prune -o json: %v", err)
	}
	return list.Items
}

// readManifests reads the objects of file as JSON values.
func readManifests(t *testing.T, file string) []interface{} {
	t.Helper()
	docs, err := document.Read(bytes.NewReader(mustRead(t, file)), file)
	if err != nil {
		t.Fatal(err)
	}
	var out []interface{}
	for _, d := range docs {
		out = append(out, jsonValue(t, d.Object))
	}
	return out
}

// TestCRDAsStoredExample creates the example CRD with kubectl create and
// reads it back with kubectl get: less status and what the server sets of
// metadata, it is what prune prints, and not the file as written (it
// drifts). After prune --in-place, the file is what the server holds, and
// kubectl diff --server-side finds nothing to change.
func TestCRDAsStoredExample(t *testing.T) {
	x := NewTest(t)
	k := kubectls[0].Path
	example := filepath.Join(repoRoot(), crdDriftExample)
	written := readManifests(t, example)
	if len(written) != 1 {
		t.Fatalf("%s: %d objects", crdDriftExample, len(written))
	}
	name := written[0].(map[string]interface{})["metadata"].(map[string]interface{})["name"].(string)
	if r := x.Run(k, "create", "-f", crdDriftExample); r.Code != 0 {
		t.Fatalf("kubectl create: exit %d\n%s", r.Code, r.Stderr)
	}
	t.Cleanup(func() { x.Run(k, "delete", "crd", name, "--wait=false") })
	get := x.Run(k, "get", "crd", name, "-o", "json")
	var live map[string]interface{}
	if err := json.Unmarshal([]byte(get.Stdout), &live); err != nil || get.Code != 0 {
		t.Fatalf("kubectl get: exit %d, %v\n%s", get.Code, err, get.Stderr)
	}
	server := asManifest(t, live)
	if cmp.Equal(server, written[0]) {
		t.Fatalf("the example does not drift: the server stores it as written")
	}
	ours := pruneItems(t, x, crdDriftExample)
	if d := cmp.Diff(server, ours[0]); d != "" {
		t.Errorf("the CRD as stored (-kubectl get +kubectl crd prune):\n%s", d)
	}

	dir := t.TempDir()
	copied := filepath.Join(dir, "crd.yaml")
	if err := os.WriteFile(copied, mustRead(t, example), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := x.Run("kubectl-crd", "prune", "--offline", "--in-place", "-f", copied); r.Code != 0 {
		t.Fatalf("prune --in-place: exit %d\n%s", r.Code, r.Stderr)
	}
	rewritten := mustRead(t, copied)
	if !bytes.Contains(rewritten, []byte("# cron syntax")) {
		t.Errorf("prune --in-place lost the comments:\n%s", rewritten)
	}
	if d := cmp.Diff(server, readManifests(t, copied)[0]); d != "" {
		t.Errorf("the file after --in-place (-kubectl get +file):\n%s", d)
	}
	diff := x.Run(k, "diff", "--server-side", "-f", copied)
	if diff.Code != 0 || diff.Stdout != "" {
		t.Errorf("kubectl diff --server-side after --in-place: exit %d\n%s%s", diff.Code, diff.Stdout, diff.Stderr)
	}
}

// TestCRDAsStoredCorpus is TestCRDAsStoredExample for every
// apiextensions.k8s.io/v1 CRD of the corpus (a sweep of CI's matrix
// target), against the server's create with dryRun, whose response is
// the object written through the storage codec and read back, as the
// create stores it: a CRD the server refuses under kubectl's default
// strict validation is left out (a create of it stores nothing). Each CRD
// the server takes is what prune prints; after prune --in-place, each file
// is that, and a create of the rewritten file stores it unchanged.
func TestCRDAsStoredCorpus(t *testing.T) {
	corpusSweep(t)
	dyn := dynamicClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	var files []string
	var server []interface{}
	refused := 0
	for i, d := range readCorpusV1CRDs(t) {
		stored, err := dryRunCreate(ctx, dyn, d.Object)
		if err != nil {
			refused++
			continue
		}
		f := filepath.Join(dir, fmt.Sprintf("%04d.yaml", i))
		if err := os.WriteFile(f, d.Raw(), 0o644); err != nil {
			t.Fatal(err)
		}
		files, server = append(files, f), append(server, asManifest(t, stored))
	}
	if len(files) == 0 {
		t.Fatal("the server took no CRD of the corpus")
	}
	x := NewTest(t)
	ours := pruneItems(t, x, dir)
	if len(ours) != len(files) {
		t.Fatalf("prune printed %d objects of %d CRDs", len(ours), len(files))
	}
	for i, f := range files {
		if d := cmp.Diff(server[i], ours[i]); d != "" {
			t.Errorf("%s (%s): the CRD as stored (-server +kubectl crd prune):\n%s", f, nameOf(server[i]), d)
		}
	}
	if r := x.Run("kubectl-crd", "prune", "--offline", "--in-place", "-f", dir); r.Code != 0 {
		t.Fatalf("prune --in-place: exit %d\n%s", r.Code, tail(r.Stderr, 40))
	}
	for i, f := range files {
		obj := readManifests(t, f)[0]
		if d := cmp.Diff(server[i], obj); d != "" {
			t.Errorf("%s after --in-place (-server +file):\n%s", f, d)
			continue
		}
		again, err := dryRunCreate(ctx, dyn, obj.(map[string]interface{}))
		if err != nil {
			t.Errorf("%s after --in-place: the server refuses it: %v", f, err)
		} else if d := cmp.Diff(obj, asManifest(t, again)); d != "" {
			t.Errorf("%s after --in-place: a create changes it (-file +server):\n%s", f, d)
		}
	}
	t.Logf("%d CRDs compared; %d refused by the server under strict validation, left out", len(files), refused)
}

// dryRunCreate is the server's create of obj, a CRD, with dryRun and
// kubectl's default strict field validation: the object it would store.
func dryRunCreate(ctx context.Context, dyn dynamic.Interface, obj map[string]interface{}) (map[string]interface{}, error) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	got, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	if apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("the suite's server holds a CRD of that name: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return got.Object, nil
}

// nameOf is the metadata.name of a JSON object.
func nameOf(v interface{}) string {
	b, _ := yaml.Marshal(v)
	var o struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	_ = yaml.Unmarshal(b, &o)
	return strings.TrimSpace(o.Metadata.Name)
}
