package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

const crdUpgradeDir = "test/e2e/testdata/crdupgrade"

// A real upgrade on the test API server: the old CRD and objects created,
// check-update run with the new CRD (the old one and the objects from the
// cluster, listed a page at a time; and from their files, offline), the
// new CRD applied, every object read back. Each object loses exactly the fields the impact says it loses and
// gains exactly the defaults it says; a dry-run create of its manifest is
// refused with exactly the errors it names (and passes where it names
// none); an unchanged update of it passes exactly when it says so.
func TestCRDUpgradeParity(t *testing.T) {
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

	upgradeCRD := func(name string) (crdupgrade.CRD, *apiextensionsv1.CustomResourceDefinition) {
		d := readOneCRD(t, filepath.Join(crdUpgradeDir, name))
		c, _, err := schema.FromObject(d.Object, strategy.Validators{})
		if err != nil {
			t.Fatal(err)
		}
		return crdupgrade.CRD{CRD: c, Raw: d.Object}, c.Object
	}
	old, oldCRD := upgradeCRD("old.yaml")
	new, newCRD := upgradeCRD("new.yaml")
	if err := replaceCRD(ctx, crdClient, oldCRD); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = crdClient.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), oldCRD.Name, metav1.DeleteOptions{})
	})
	gvr := runtimeschema.GroupVersionResource{Group: "upgrade.example.com", Version: "v1", Resource: "gizmos"}
	ri := dyn.Resource(gvr).Namespace("default")

	// The engine's verdict, before the upgrade.
	for _, ch := range crdupgrade.Compare(old, new, strategy.Validators{}) {
		if ch.Kind == crdupgrade.Refused {
			t.Fatalf("the engine says the server refuses the update: %+v", ch)
		}
	}
	objectsFile := filepath.Join(root, crdUpgradeDir, "objects.yaml")
	docs := readDocs(t, objectsFile)
	before := make([]map[string]interface{}, len(docs))
	for i, d := range docs {
		if _, err := createRetrying(ctx, ri, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)}); err != nil {
			t.Fatalf("%s: %v", d.Source, err)
		}
		got, err := ri.Get(ctx, document.Ref(d.Object).Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[i] = got.Object
	}
	// The report, live (three objects a page: two pages) and offline: the
	// objects changed or hurt, by name; the others are not in it.
	newFile := filepath.Join(root, crdUpgradeDir, "new.yaml")
	x := NewTest(t)
	liveImpacts := upgradeReport(t, x.Run("kubectl-crd", "check-update", "-f", newFile, "-o", "json", "--chunk-size", "3"), len(docs))
	offline := upgradeReport(t, x.Run("kubectl-crd", "check-update", "--offline", "--old", filepath.Join(root, crdUpgradeDir, "old.yaml"),
		"--objects", objectsFile, "-f", newFile, "-o", "json"), len(docs))
	impacts := make([]*crdupgrade.ObjectImpact, len(docs))
	for i, d := range docs {
		name := document.Ref(d.Object).Name
		impacts[i] = liveImpacts[name]
		if impacts[i] == nil {
			impacts[i] = &crdupgrade.ObjectImpact{Result: prune.Result{Object: document.Ref(d.Object)}}
		}
		if diff := cmp.Diff(summary(offline[name]), summary(liveImpacts[name])); diff != "" {
			t.Errorf("%s: the report offline (-) and live (+):\n%s", name, diff)
		}
	}

	// The upgrade, really: then wait until the objects read with the new
	// schema (its new default shows).
	crds := crdClient.ApiextensionsV1().CustomResourceDefinitions()
	cur, err := crds.Get(ctx, oldCRD.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec = newCRD.Spec
	if _, err := crds.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the CRD: %v", err)
	}
	last := impacts[len(impacts)-1].Object.Name
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := ri.Get(ctx, last, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		canary, _, _ := unstructured.NestedString(got.Object, "spec", "canary")
		return canary != "", nil
	}); err != nil {
		t.Fatalf("the new schema never took effect: %v", err)
	}

	for i, d := range docs {
		imp := impacts[i]
		name := imp.Object.Name
		after, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var lost, gained, wantLost, wantGained []string
		diffPaths("", before[i]["spec"], after.Object["spec"], &lost, &gained)
		for _, ch := range imp.Changes {
			switch ch.Reason {
			case prune.UnknownField:
				wantLost = append(wantLost, ch.Path)
			case prune.Defaulted:
				wantGained = append(wantGained, ch.Path)
			default:
				t.Errorf("%s: a change of another kind: %+v", name, ch)
			}
		}
		sort.Strings(wantLost)
		sort.Strings(wantGained)
		if diff := cmp.Diff(wantLost, lost); diff != "" {
			t.Errorf("%s: fields lost, the engine (-) and the server (+):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantGained, gained); diff != "" {
			t.Errorf("%s: defaults filled, the engine (-) and the server (+):\n%s", name, diff)
		}

		// A create of its manifest again.
		var wantRefused []string
		for _, e := range imp.Errors {
			wantRefused = append(wantRefused, e.Message)
		}
		sort.Strings(wantRefused)
		manifest := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)}
		manifest.SetName(name + "-again")
		_, err = createDryRun(ctx, ri, manifest)
		refused, err := invalidCauses(err)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(wantRefused, refused); diff != "" {
			t.Errorf("%s: a create refused, the engine (-) and the server (+):\n%s", name, diff)
		}

		// An unchanged write of it.
		var wantUpdate []string
		for _, e := range imp.UpdateErrors {
			wantUpdate = append(wantUpdate, e.Message)
		}
		sort.Strings(wantUpdate)
		_, err = ri.Update(ctx, after, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		refused, err = invalidCauses(err)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(wantUpdate, refused); diff != "" {
			t.Errorf("%s: an unchanged update refused, the engine (-) and the server (+):\n%s", name, diff)
		}
	}
	// The objects the engine says are hurt are those of the file's comments.
	var hurt []string
	for _, imp := range impacts {
		lost := false
		for _, ch := range imp.Changes {
			lost = lost || ch.Reason == prune.UnknownField
		}
		if lost || len(imp.Errors) > 0 {
			hurt = append(hurt, imp.Object.Name)
		}
	}
	if diff := cmp.Diff([]string{"g1", "g2", "g3"}, hurt); diff != "" {
		t.Errorf("objects hurt (-want +got):\n%s", diff)
	}
}

// upgradeReport is the one upgrade of check-update -o json, its objects
// by name; it exits 1 (objects are hurt) having checked them all.
func upgradeReport(t *testing.T, r Result, objects int) map[string]*crdupgrade.ObjectImpact {
	t.Helper()
	var report struct {
		Upgrades []struct {
			ObjectsChecked int                        `json:"objectsChecked"`
			Objects        []*crdupgrade.ObjectImpact `json:"objects"`
		} `json:"upgrades"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || r.Code != 1 || len(report.Upgrades) != 1 {
		t.Fatalf("check-update: exit %d, %v; stdout:\n%s\nstderr:\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if got := report.Upgrades[0].ObjectsChecked; got != objects {
		t.Errorf("check-update checked %d objects, want %d", got, objects)
	}
	out := map[string]*crdupgrade.ObjectImpact{}
	for _, imp := range report.Upgrades[0].Objects {
		out[imp.Object.Name] = imp
	}
	return out
}

// summary is what an impact says, without where it was read from.
func summary(imp *crdupgrade.ObjectImpact) []string {
	if imp == nil {
		return nil
	}
	var out []string
	for _, ch := range imp.Changes {
		out = append(out, fmt.Sprintf("%s %s %v", ch.Reason, ch.Path, ch.NewValue))
	}
	for _, e := range imp.Errors {
		out = append(out, "create: "+e.Message)
	}
	for _, e := range imp.UpdateErrors {
		out = append(out, "update: "+e.Message)
	}
	return out
}

// invalidCauses are the causes of an Invalid refusal, "field: message"
// sorted; nil for no error; an error of another kind is returned.
func invalidCauses(err error) ([]string, error) {
	if err == nil {
		return nil, nil
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return nil, err
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	sort.Strings(out)
	return out, nil
}

// diffPaths lists the fields of a that b lacks (lost) and of b that a lacks
// (gained), in the server's path format, sorted, descending into the maps
// both have.
func diffPaths(path string, a, b interface{}, lost, gained *[]string) {
	am, aok := a.(map[string]interface{})
	bm, bok := b.(map[string]interface{})
	if !aok || !bok {
		return
	}
	child := func(k string) string {
		if path == "" {
			return "spec." + k
		}
		return path + "." + k
	}
	for k, av := range am {
		if bv, ok := bm[k]; ok {
			diffPaths(child(k), av, bv, lost, gained)
		} else {
			*lost = append(*lost, child(k))
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			*gained = append(*gained, child(k))
		}
	}
	sort.Strings(*lost)
	sort.Strings(*gained)
}

// The server refuses a CRD update exactly as ValidateCRDUpdate says, with
// the old CRD as the cluster holds it (its status, its stored versions)
// and, for a CRD never stored in another version, as read from its file.
func TestCRDUpdateRefusalParity(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	crds := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	read := func(name string) *apiextensionsv1.CustomResourceDefinition {
		d := readOneCRD(t, filepath.Join(crdUpgradeDir, name))
		c, _, err := schema.FromObject(d.Object, strategy.Validators{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Object
	}
	old := read("old.yaml")
	withV2 := func(crd *apiextensionsv1.CustomResourceDefinition, v1Storage bool) *apiextensionsv1.CustomResourceDefinition {
		crd = crd.DeepCopy()
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name = "v2"
		v2.Storage = !v1Storage
		crd.Spec.Versions[0].Storage = v1Storage
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
		return crd
	}
	for _, tc := range []struct {
		name string
		// steps are applied in turn before new: the cluster's history.
		steps []*apiextensionsv1.CustomResourceDefinition
		new   *apiextensionsv1.CustomResourceDefinition
		// file: the old CRD read from its file gives the same verdict.
		file bool
	}{
		{"scope changed", nil, func() *apiextensionsv1.CustomResourceDefinition {
			c := old.DeepCopy()
			c.Spec.Scope = apiextensionsv1.ClusterScoped
			return c
		}(), true},
		{"kind changed", nil, func() *apiextensionsv1.CustomResourceDefinition {
			c := old.DeepCopy()
			c.Spec.Names.Kind, c.Spec.Names.ListKind = "Gadget", "GadgetList"
			return c
		}(), true},
		{"storage moved, then the old storage version removed", []*apiextensionsv1.CustomResourceDefinition{withV2(old, false)}, func() *apiextensionsv1.CustomResourceDefinition {
			c := withV2(old, false)
			c.Spec.Versions = c.Spec.Versions[1:]
			return c
		}(), false},
		{"the new CRD accepted", nil, read("new.yaml"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := replaceCRD(ctx, apiextensionsclient.NewForConfigOrDie(cfg), old); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = crds.Delete(context.Background(), old.Name, metav1.DeleteOptions{}) })
			for _, step := range tc.steps {
				cur, err := crds.Get(ctx, old.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				cur.Spec = step.Spec
				if _, err := crds.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			held, err := crds.Get(ctx, old.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			update := held.DeepCopy()
			update.Spec = tc.new.Spec
			_, err = crds.Update(ctx, update, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			server, err := invalidCauses(err)
			if err != nil {
				t.Fatal(err)
			}
			// The new CRD as a file gives it: without the cluster's metadata.
			ours := fieldMessages((strategy.Validators{}).ValidateCRDUpdate(held, tc.new))
			if diff := cmp.Diff(server, ours); diff != "" {
				t.Errorf("the CRD as the cluster holds it: the server (-) and ValidateCRDUpdate (+):\n%s", diff)
			}
			if tc.file {
				if diff := cmp.Diff(server, fieldMessages((strategy.Validators{}).ValidateCRDUpdate(old, tc.new))); diff != "" {
					t.Errorf("the old CRD of its file: the server (-) and ValidateCRDUpdate (+):\n%s", diff)
				}
			}
			if tc.name != "the new CRD accepted" && len(server) == 0 {
				t.Errorf("the server accepts it")
			}
		})
	}
}

// fieldMessages are errs as the causes of an Invalid status, sorted.
func fieldMessages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+e.ErrorBody())
	}
	sort.Strings(out)
	return out
}
