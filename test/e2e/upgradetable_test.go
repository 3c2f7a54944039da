package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/hack/upgrades/table"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// The upgrade safety table of docs/upgrades.md, on the test API server:
// the page's table is what hack/upgrades generates, and for every pair of
// releases whose CRD update the server accepts (no Refused change), release
// N's CRDs created, the samples N stores created, release N+1's CRDs applied
// over them; then each sample read, created again (a dry run), written back
// as read and read again. What the server drops when reading, refuses of
// the create and of the write, and drops on the write (the next write after
// a storage-version move) must be what the table's computation says, path
// for path; a sample the server refuses under N that the table counts fails
// too.
func TestUpgradeTableCorpus(t *testing.T) {
	corpusSweep(t)
	requireOwnCluster(t) // it creates and deletes CRDs
	dir := corpus.Dir(t)
	start := time.Now()
	pairs, err := table.Compute(dir)
	if err != nil {
		t.Fatal(err)
	}
	computed := time.Since(start)
	page, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "upgrades.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := table.Generated(string(page)); !ok {
		t.Errorf("docs/upgrades.md: no generated table")
	} else if diff := cmp.Diff(table.Render(pairs), got); diff != "" {
		t.Errorf("docs/upgrades.md's table is not what hack/upgrades generates (go run ./hack/upgrades -corpus %s -w docs/upgrades.md), generated (-) and the page (+):\n%s", dir, diff)
	}

	s := newUpgradeServer(t)
	var confirmed, samples, hurt int
	for _, p := range pairs {
		name := fmt.Sprintf("%s/%s-%s", p.Project, p.From, p.To)
		switch {
		case len(p.Refused) > 0:
			// The table says no cluster holds these files: the server
			// must refuse them too.
			t.Run(name, func(t *testing.T) { s.confirmRefused(t, p) })
			continue
		case refused(p):
			t.Logf("%s %s → %s: the server refuses the CRD update (%s): not confirmed", p.Project, p.From, p.To, p.Verdict)
			continue
		}
		t.Run(name, func(t *testing.T) {
			s.confirm(t, p)
			confirmed++
			samples += len(p.Samples)
			hurt += len(p.Hurt())
		})
	}
	t.Logf("%d pairs of %d confirmed on the server, %d samples, %d hurt; the table computed in %v, all in %v",
		confirmed, len(pairs), samples, hurt, computed.Round(time.Second), time.Since(start).Round(time.Second))
	if confirmed == 0 {
		t.Errorf("no pair confirmed")
	}
}

// refused says whether the table says the server refuses the pair's CRD update.
func refused(p *table.Pair) bool {
	for _, u := range p.Upgrades {
		for _, ch := range u.Changes {
			if ch.Kind == crdupgrade.Refused {
				return true
			}
		}
	}
	return false
}

type upgradeServer struct {
	crds    apiextensionsclient.Interface
	dyn     dynamic.Interface
	canary  *canary
	deleted map[string]bool
}

func newUpgradeServer(t *testing.T) *upgradeServer {
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.WarningHandler = rest.NoWarnings{}
	s := &upgradeServer{crds: apiextensionsclient.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg), deleted: map[string]bool{}}
	s.canary = newCanary(t, s.crds, s.dyn)
	t.Cleanup(func() { s.awaitDeleted(t) })
	return s
}

// upgradeSample is a sample as created on the server.
type upgradeSample struct {
	c        *table.Checked
	manifest *unstructured.Unstructured // as sent, renamed when its name was taken
	ri       dynamic.ResourceInterface  // in the version it is read in under N+1
	before   map[string]interface{}     // as the server stored it under N
}

// confirmRefused holds the server to the table's CRDs of release N it
// refuses to create as written.
func (s *upgradeServer) confirmRefused(t *testing.T, p *table.Pair) {
	for _, u := range p.Upgrades {
		crd := crdAsWritten(t, u.Old.Raw)
		_, err := s.crds.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crd, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if want := slices.Contains(p.Refused, u.Name); want != (err != nil) {
			t.Errorf("%s of %s: the table says refused %v, the server: %v", u.Name, p.From, want, err)
		}
	}
}

func (s *upgradeServer) confirm(t *testing.T, p *table.Pair) {
	ctx := context.Background()
	names := make([]string, len(p.Upgrades))
	for i, u := range p.Upgrades {
		names[i] = u.Name
	}
	t.Cleanup(func() { s.deleteCRDs(names) })
	errs := make([]error, len(p.Upgrades))
	inTurn(parityRequests, len(p.Upgrades), func(_, i int) {
		errs[i] = replaceCRD(ctx, s.crds, crdAsWritten(t, p.Upgrades[i].Old.Raw))
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s of %s: the server refuses the CRD: %v", names[i], p.From, err)
		}
	}
	objs := s.createSamples(t, p)
	t.Cleanup(func() { s.release(objs) }) // before the CRDs' deletion: cleanups run last first
	for _, u := range p.Upgrades {
		if err := s.update(ctx, crdAsWritten(t, u.New.Raw)); err != nil {
			t.Errorf("%s: the server refuses the update to %s, the table says it accepts it: %v", u.Name, p.To, err)
		}
	}
	if t.Failed() {
		return
	}
	s.canary.sync(t)
	for _, o := range objs {
		s.confirmSample(t, o)
	}
	t.Logf("%s: %d samples confirmed, %d hurt", p.Verdict, len(objs), len(p.Hurt()))
}

// createSamples creates the samples the table checked, each under a name
// of its own (samples of one kind share names), and returns them as stored.
func (s *upgradeServer) createSamples(t *testing.T, p *table.Pair) []*upgradeSample {
	ctx := context.Background()
	taken := map[string]bool{}
	var out []*upgradeSample
	for i, c := range p.Samples {
		crd := c.Upgrade.Old.CRD
		gv, _ := runtimeschema.ParseGroupVersion(c.Ref.APIVersion)
		obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(c.Doc.Object)}
		ns := ""
		if !crd.ClusterScoped() {
			if ns = obj.GetNamespace(); ns == "" {
				ns = "default"
			}
		}
		if key := crd.Name() + "/" + ns + "/" + obj.GetName(); taken[key] {
			obj.SetName(fmt.Sprintf("%s-%d", obj.GetName(), i))
		}
		taken[crd.Name()+"/"+ns+"/"+obj.GetName()] = true
		plural := crd.Object.Spec.Names.Plural
		got, err := createWith(ctx, s.resource(gv.WithResource(plural), ns), obj, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("%s (%s): %s stores it, the table says; the server refuses it: %v", c.Ref, c.Doc.Source, p.From, err)
			continue
		}
		version := gv.Version
		if c.Impact.ReadAs != "" {
			version = c.Impact.ReadAs
		}
		out = append(out, &upgradeSample{c: c, manifest: obj, ri: s.resource(gv.WithResource(plural).GroupResource().WithVersion(version), ns), before: got.Object})
	}
	return out
}

func (s *upgradeServer) resource(gvr runtimeschema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return s.dyn.Resource(gvr)
	}
	return s.dyn.Resource(gvr).Namespace(ns)
}

// confirmSample reads a sample under N+1, creates it again (a dry run),
// writes it back as read and reads it again, each held to the table.
func (s *upgradeServer) confirmSample(t *testing.T, o *upgradeSample) {
	t.Helper()
	ctx := context.Background()
	imp := o.c.Impact
	where := fmt.Sprintf("%s (%s)", o.c.Ref, o.c.Doc.Source)
	read, err := o.ri.Get(ctx, o.manifest.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Errorf("%s: reading it under the new CRDs: %v", where, err)
		return
	}
	want := predictedChanges(imp.Changes)
	if diff := cmp.Diff(want, objectDiff(o.before, read.Object)); diff != "" {
		t.Errorf("%s: read under the new CRDs, what changes: the table (-) and the server (+):\n%s", where, diff)
	}

	manifest := o.manifest.DeepCopy()
	manifest.SetAPIVersion(read.GetAPIVersion())
	_, err = o.ri.Create(ctx, manifest, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case len(imp.Errors) == 0 && !apierrors.IsAlreadyExists(err):
		t.Errorf("%s: a create of its manifest again: the table says valid, the server: %v", where, err)
	case len(imp.Errors) > 0:
		if diff := cmp.Diff(fieldErrorPaths(imp.Errors), causeFields(err)); diff != "" {
			t.Errorf("%s: a create of its manifest again, the fields refused: the table (-) and the server (+), %v:\n%s", where, err, diff)
		}
	}

	_, err = o.ri.Update(ctx, read, metav1.UpdateOptions{})
	if len(imp.UpdateErrors) > 0 || err != nil {
		if diff := cmp.Diff(fieldErrorPaths(imp.UpdateErrors), causeFields(err)); diff != "" {
			t.Errorf("%s: written back as read, the fields refused: the table (-) and the server (+), %v:\n%s", where, err, diff)
		}
		return
	}
	written, err := o.ri.Get(ctx, o.manifest.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: reading it after its write: %v", where, err)
	}
	// What the next write drops beyond the read: the new storage
	// version's schema lacks it.
	want = predictedChanges(append(append([]prune.Change(nil), imp.Changes...), imp.NextWrite...))
	if diff := cmp.Diff(want, objectDiff(o.before, written.Object)); diff != "" {
		t.Errorf("%s: after its next write, what changes: the table (-) and the server (+):\n%s", where, diff)
	}
}

// predictedChanges are the engine's changes as objectDiff words them:
// "removed PATH", "added PATH", "replaced PATH".
func predictedChanges(changes []prune.Change) []string {
	out := []string{}
	for _, ch := range changes {
		out = append(out, strings.ToLower(string(ch.Action))+" "+ch.Path)
	}
	sort.Strings(out)
	return out
}

// objectDiff names what differs from a to b, as the engine's changes do
// (paths in the server's format), leaving out what the server sets on
// every write and the apiVersion (read in another version).
func objectDiff(a, b map[string]interface{}) []string {
	out := []string{}
	var walk func(path string, a, b interface{})
	walk = func(path string, a, b interface{}) {
		am, aok := a.(map[string]interface{})
		bm, bok := b.(map[string]interface{})
		if aok && bok {
			for k, av := range am {
				p := joinPath(path, k)
				if bv, ok := bm[k]; ok {
					walk(p, av, bv)
				} else if !serverSet(p) {
					out = append(out, "removed "+p)
				}
			}
			for k := range bm {
				if _, ok := am[k]; !ok && !serverSet(joinPath(path, k)) {
					out = append(out, "added "+joinPath(path, k))
				}
			}
			return
		}
		al, aok := a.([]interface{})
		bl, bok := b.([]interface{})
		if aok && bok && len(al) == len(bl) {
			for i := range al {
				walk(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])
			}
			return
		}
		if !serverSet(path) && !reflect.DeepEqual(jsonOf(a), jsonOf(b)) {
			out = append(out, "replaced "+path)
		}
	}
	walk("", a, b)
	sort.Strings(out)
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// serverSet are the fields the server sets on each write, and the apiVersion.
func serverSet(path string) bool {
	switch path {
	case "apiVersion", "metadata.resourceVersion", "metadata.generation", "metadata.managedFields":
		return true
	}
	return strings.HasPrefix(path, "metadata.managedFields")
}

// jsonOf is v as JSON would hold it (an int64 and a float64 of one value alike).
func jsonOf(v interface{}) interface{} {
	b, _ := json.Marshal(v)
	var out interface{}
	_ = json.Unmarshal(b, &out)
	return out
}

func fieldErrorPaths(errs []prune.FieldError) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Field)
	}
	sort.Strings(out)
	return out
}

// causeFields are the fields of the server's refusal; none for no error.
func causeFields(err error) []string {
	out := []string{}
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) || status.Status().Details == nil {
		if err != nil {
			out = append(out, "not a refusal: "+err.Error())
		}
		return out
	}
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field)
	}
	sort.Strings(out)
	return out
}

// crdAsWritten is a CRD as its file writes it: the server defaults it itself.
func crdAsWritten(t *testing.T, raw map[string]interface{}) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(b, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// update applies crd over the cluster's CRD of its name, as kubectl apply
// of the new release does: its spec, labels and annotations.
func (s *upgradeServer) update(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	crds := s.crds.ApiextensionsV1().CustomResourceDefinitions()
	cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Spec, cur.Labels, cur.Annotations = crd.Spec, crd.Labels, crd.Annotations
	_, err = crds.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// release drops the finalizers of the samples that have some (Argo CD's
// Applications): no controller removes them, and the deletion of their
// CRD would wait for them for ever.
func (s *upgradeServer) release(objs []*upgradeSample) {
	for _, o := range objs {
		if fs, _, _ := unstructured.NestedStringSlice(o.before, "metadata", "finalizers"); len(fs) > 0 {
			_, _ = o.ri.Patch(context.Background(), o.manifest.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}
	}
}

// deleteCRDs deletes the pair's CRDs, without waiting: the server deletes
// their objects first, a few seconds a CRD, while the next pair runs
// (replaceCRD waits for those it creates again); awaitDeleted waits for
// them all at the end.
func (s *upgradeServer) deleteCRDs(names []string) {
	for _, n := range names {
		_ = s.crds.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), n, metav1.DeleteOptions{})
		s.deleted[n] = true
	}
}

// awaitDeleted waits until every CRD the test deleted is gone, so that
// the tests after it find none of them terminating.
func (s *upgradeServer) awaitDeleted(t *testing.T) {
	crds := s.crds.ApiextensionsV1().CustomResourceDefinitions()
	for n := range s.deleted {
		err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := crds.Get(ctx, n, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("%s: still there 10 minutes after its deletion: %v", n, err)
		}
	}
}

// canary tells when the server serves the CRDs as last updated. The server
// keeps a handler per CRD, dropped when its informer delivers the CRD's
// update; the updates are delivered in order. So once a canary CRD's
// handler, built before, serves the canary's own later update, every CRD
// updated before it is served as updated.
type canary struct {
	crds apiextensionsclient.Interface
	ri   dynamic.ResourceInterface
	n    int
}

const canaryName = "canaries.upgradetable.example.com"

func newCanary(t *testing.T, crds apiextensionsclient.Interface, dyn dynamic.Interface) *canary {
	c := &canary{crds: crds, ri: dyn.Resource(runtimeschema.GroupVersionResource{Group: "upgradetable.example.com", Version: "v1", Resource: "canaries"}).Namespace("default")}
	if err := replaceCRD(context.Background(), crds, c.crd()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = crds.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), canaryName, metav1.DeleteOptions{})
	})
	c.await(t)
	return c
}

// crd is the canary with one field, named after its count of updates.
func (c *canary) crd() *apiextensionsv1.CustomResourceDefinition {
	field := fmt.Sprintf("f%d", c.n)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: canaryName},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "upgradetable.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "canaries", Singular: "canary", Kind: "Canary", ListKind: "CanaryList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{field: {Type: "string"}}}}}}}},
		},
	}
}

// sync updates the canary and waits until its handler serves the update.
func (c *canary) sync(t *testing.T) {
	t.Helper()
	c.n++
	crds := c.crds.ApiextensionsV1().CustomResourceDefinitions()
	cur, err := crds.Get(context.Background(), canaryName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec = c.crd().Spec
	if _, err := crds.Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.await(t)
}

// await waits until a canary's field of the current count is kept (a dry
// run), which builds the handler the next sync must see dropped.
func (c *canary) await(t *testing.T) {
	t.Helper()
	field := fmt.Sprintf("f%d", c.n)
	obj := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "upgradetable.example.com/v1", "kind": "Canary",
		"metadata": map[string]interface{}{"name": "canary"}, "spec": map[string]interface{}{field: "x"}}}
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := c.ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, nil
		}
		_, kept, _ := unstructured.NestedString(got.Object, "spec", field)
		return kept, nil
	})
	if err != nil {
		t.Fatalf("the canary's update %d never served: %v", c.n, err)
	}
}
