package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

const storageMoveDir = "test/e2e/testdata/storagemove"

// krmNextWrite is an object's result of the function for a field its next
// write drops, as kustomize prints it.
var krmNextWrite = regexp.MustCompile(`(?m)^\[error\] storagemove\.example\.com/v1alpha1/Widget/default/(\S+) (\S+): loses "[^"]+" when next written, stored as v1beta1`)

// A CRD upgrade that moves the storage version to a version whose schema
// lacks fields, on the test API server: check-update (live and offline)
// says which fields each object loses on its next write; the new CRD
// applied, every object reads back intact; a label written on each, every
// object reads back without exactly the fields predicted, and nothing else.
func TestCRDUpgradeNextWriteParity(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	ctx := context.Background()
	root := repoRoot()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.WarningHandler = rest.NoWarnings{}
	crdClient := apiextensionsclient.NewForConfigOrDie(cfg)
	dyn := dynamicClient(t)
	decode := func(name string) *schema.CRD {
		c, _, err := schema.DecodeObject(readOneCRD(t, filepath.Join(storageMoveDir, name)).Object, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	oldCRD, newCRD := decode("old.yaml"), decode("new.yaml")
	if err := replaceCRD(ctx, crdClient, oldCRD.Object); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = crdClient.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), oldCRD.Name(), metav1.DeleteOptions{})
	})
	gvr := runtimeschema.GroupVersionResource{Group: "storagemove.example.com", Version: "v1alpha1", Resource: "widgets"}
	ri := dyn.Resource(gvr).Namespace("default")

	objectsFile := filepath.Join(root, storageMoveDir, "objects.yaml")
	docs := readDocs(t, objectsFile)
	before := map[string]map[string]interface{}{}
	for _, d := range docs {
		got, err := createRetrying(ctx, ri, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)})
		if err != nil {
			t.Fatalf("%s: %v", d.Source, err)
		}
		before[got.GetName()] = got.Object
	}

	// The verdicts, live and offline: what each object loses, and when.
	newFile := filepath.Join(root, storageMoveDir, "new.yaml")
	x := NewTest(t)
	live := upgradeReport(t, x.Run("kubectl-crd", "check-update", "-f", newFile, "-o", "json"), len(docs))
	offline := upgradeReport(t, x.Run("kubectl-crd", "check-update", "--offline", "--old", filepath.Join(root, storageMoveDir, "old.yaml"),
		"--objects", objectsFile, "-f", newFile, "-o", "json"), len(docs))
	predicted := func(imp *crdupgrade.ObjectImpact, reason prune.Reason) []string {
		var out []string
		if imp == nil {
			return nil
		}
		changes := imp.Changes
		if reason == prune.StorageVersion {
			changes = imp.NextWrite
		}
		for _, ch := range changes {
			if ch.Reason == reason {
				out = append(out, ch.Path)
			}
		}
		sort.Strings(out)
		return out
	}
	for name := range before {
		for _, reason := range []prune.Reason{prune.UnknownField, prune.StorageVersion} {
			if diff := cmp.Diff(predicted(offline[name], reason), predicted(live[name], reason)); diff != "" {
				t.Errorf("%s: %s, offline (-) and live (+):\n%s", name, reason, diff)
			}
		}
		if imp := live[name]; imp != nil && len(imp.NextWrite) > 0 && imp.WrittenAs != "v1beta1" {
			t.Errorf("%s: written as %q, want v1beta1", name, imp.WrittenAs)
		}
	}

	// The KRM function in a real kustomize build: previous/ holds the old
	// CRD, the items the new one and the objects.
	build := t.TempDir()
	copyFile(t, filepath.Join(storageMoveDir, "new.yaml"), filepath.Join(build, "new.yaml"))
	copyFile(t, filepath.Join(storageMoveDir, "objects.yaml"), filepath.Join(build, "objects.yaml"))
	copyFile(t, filepath.Join(storageMoveDir, "old.yaml"), filepath.Join(build, "previous", "old.yaml"))
	copyFile(t, "test/e2e/testdata/oldidentity/check.yaml", filepath.Join(build, "check.yaml"))
	if err := os.WriteFile(filepath.Join(build, "kustomization.yaml"), []byte("resources:\n- new.yaml\n- objects.yaml\ntransformers:\n- check.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", build)
	if r.Code != 1 || r.Stdout != "" {
		t.Fatalf("kustomize build: exit %d, want 1 and nothing on stdout:\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	krmLost := map[string][]string{}
	for _, m := range krmNextWrite.FindAllStringSubmatch(r.Stderr, -1) {
		krmLost[m[1]] = append(krmLost[m[1]], m[2])
	}

	// The upgrade, really; v1beta1 served says it took effect.
	crds := crdClient.ApiextensionsV1().CustomResourceDefinitions()
	cur, err := crds.Get(ctx, oldCRD.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec = newCRD.Object.Spec
	if _, err := crds.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the CRD: %v", err)
	}
	beta := dyn.Resource(runtimeschema.GroupVersionResource{Group: gvr.Group, Version: "v1beta1", Resource: gvr.Resource}).Namespace("default")
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := beta.Get(ctx, "w1", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the new CRD never took effect: %v", err)
	}

	spec := func(name string) interface{} {
		t.Helper()
		got, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Object["spec"]
	}
	hurt := 0
	for name, obj := range before {
		// Read: intact, as the report says (nothing lost when read).
		var lost, gained []string
		diffPaths("", obj["spec"], spec(name), &lost, &gained)
		if diff := cmp.Diff(predicted(live[name], prune.UnknownField), lost); diff != "" || len(gained) > 0 {
			t.Errorf("%s read after the upgrade: lost, the engine (-) and the server (+):\n%s\ngained: %v", name, diff, gained)
		}
		// Any write: a label.
		patch := []byte(`{"metadata":{"labels":{"touched":"yes"}}}`)
		if _, err := ri.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: labelling: %v", name, err)
		}
		lost, gained = nil, nil
		diffPaths("", obj["spec"], spec(name), &lost, &gained)
		want := predicted(live[name], prune.StorageVersion)
		if diff := cmp.Diff(want, lost); diff != "" || len(gained) > 0 {
			t.Errorf("%s after its next write: lost, the engine (-) and the server (+):\n%s\ngained: %v", name, diff, gained)
		}
		if len(lost) > 0 {
			hurt++
		}
		sort.Strings(krmLost[name])
		if diff := cmp.Diff(krmLost[name], lost); diff != "" {
			t.Errorf("%s after its next write: lost, the KRM function (-) and the server (+):\n%s", name, diff)
		}
	}
	// The test data's own claim: w1 and w3 lose fields.
	if hurt != 2 {
		t.Errorf("%d objects lost fields on their next write, want 2 (w1, w3)", hurt)
	}
}
