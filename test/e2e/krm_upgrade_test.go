package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

const krmUpgradeDir = "examples/krm-upgrade"

// An object's result of the upgrade check, as kustomize prints it: the
// field it loses, or a field a create of it again is refused for.
var krmUpgradeObjectResult = regexp.MustCompile(`(?m)^\[error\] upgrade\.example\.com/v1/Gizmo/default/(\S+) (\S+): (loses|a create of it again would be refused|even an unchanged update of it would be refused) `)

// kustomize build of examples/krm-upgrade, whose previous/ holds the old
// Gizmo CRD: the function fails the build with the upgrade's changes on
// the CRD and what each gizmo loses or would be refused. Then the upgrade,
// really, on the test API server: the old CRD and the gizmos created, the
// new CRD applied with kubectl, every gizmo read back. Each loses exactly
// the fields the function said, a dry-run create of its manifest is
// refused exactly at the fields it said (and passes for the others), and
// an unchanged update of it passes unless it said otherwise.
func TestKRMKustomizeUpgrade(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	x := NewTest(t)
	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", krmUpgradeDir)
	if r.Code != 1 || r.Stdout != "" {
		t.Fatalf("exit %d, want 1 and nothing on stdout:\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		`[error] apiextensions.k8s.io/v1/CustomResourceDefinition/gizmos.upgrade.example.com: v1: "spec.name" removed from the schema: pruned from every stored object [1 object: Gizmo default/g1]`,
		`[error] apiextensions.k8s.io/v1/CustomResourceDefinition/gizmos.upgrade.example.com: v1: "spec.size" now required [1 object: Gizmo default/g3]`,
		`[warning] apiextensions.k8s.io/v1/CustomResourceDefinition/gizmos.upgrade.example.com: v1: "spec.canary" new default "new": objects without it read as having it [4 objects: Gizmo default/g1, Gizmo default/g2, Gizmo default/g3, and 1 more]`,
	} {
		if !strings.Contains(r.Stderr, want+"\n") {
			t.Errorf("stderr lacks\n  %s\nstderr:\n%s", want, r.Stderr)
		}
	}
	lost, refused, refusedUpdate := map[string][]string{}, map[string][]string{}, map[string][]string{}
	for _, m := range krmUpgradeObjectResult.FindAllStringSubmatch(r.Stderr, -1) {
		switch m[3] {
		case "loses":
			lost[m[1]] = append(lost[m[1]], m[2])
		case "a create of it again would be refused":
			refused[m[1]] = append(refused[m[1]], m[2])
		default:
			refusedUpdate[m[1]] = append(refusedUpdate[m[1]], m[2])
		}
	}
	if len(lost) == 0 || len(refused) == 0 {
		t.Fatalf("no object results in stderr:\n%s", r.Stderr)
	}

	ctx := context.Background()
	k := kubectls[0].Path
	crdName := "crd/gizmos.upgrade.example.com"
	if r := x.Run(k, "apply", "-f", filepath.Join(krmUpgradeDir, "previous", "crd.yaml")); r.Code != 0 {
		t.Fatalf("kubectl apply the old CRD: exit %d\n%s", r.Code, r.Stderr)
	}
	t.Cleanup(func() { x.Run(k, "delete", crdName, "--wait=false") })
	if r := x.Run(k, "wait", "--for=condition=Established", "--timeout=60s", crdName); r.Code != 0 {
		t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
	}
	ri := dynamicClient(t).Resource(runtimeschema.GroupVersionResource{Group: "upgrade.example.com", Version: "v1", Resource: "gizmos"}).Namespace("default")
	docs := readDocs(t, filepath.Join(repoRoot(), krmUpgradeDir, "gizmos.yaml"))
	before := map[string]map[string]interface{}{}
	for _, d := range docs {
		got, err := createRetrying(ctx, ri, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)})
		if err != nil {
			t.Fatalf("%s: %v", d.Source, err)
		}
		before[got.GetName()] = got.Object
	}
	if r := x.Run(k, "apply", "-f", filepath.Join(krmUpgradeDir, "crd.yaml")); r.Code != 0 {
		t.Fatalf("kubectl apply the new CRD: exit %d\n%s", r.Code, r.Stderr)
	}
	// The new schema has taken effect when its default shows.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := ri.Get(ctx, "g4", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		canary, _, _ := unstructured.NestedString(got.Object, "spec", "canary")
		return canary != "", nil
	}); err != nil {
		t.Fatalf("the new schema never took effect: %v", err)
	}

	for _, d := range docs {
		name := d.Object["metadata"].(map[string]interface{})["name"].(string)
		after, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var gone, gained []string
		diffPaths("", before[name]["spec"], after.Object["spec"], &gone, &gained)
		if diff := cmp.Diff(sorted(lost[name]), gone); diff != "" {
			t.Errorf("%s: fields lost, the function (-) and the server (+):\n%s", name, diff)
		}

		manifest := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)}
		manifest.SetName(name + "-again")
		_, err = createDryRun(ctx, ri, manifest)
		causes, err := invalidCauses(err)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(sorted(refused[name]), fieldsOf(causes)); diff != "" {
			t.Errorf("%s: a create refused at, the function (-) and the server (+):\n%s", name, diff)
		}

		_, err = ri.Update(ctx, after, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		causes, err = invalidCauses(err)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(sorted(refusedUpdate[name]), fieldsOf(causes)); diff != "" {
			t.Errorf("%s: an unchanged update refused at, the function (-) and the server (+):\n%s", name, diff)
		}
	}
}

// fieldsOf are the fields of invalidCauses' "field: message", sorted.
func fieldsOf(causes []string) []string {
	var out []string
	for _, c := range causes {
		out = append(out, strings.SplitN(c, ": ", 2)[0])
	}
	return sorted(out)
}

func sorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
