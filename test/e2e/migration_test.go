package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/migration"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// svmFieldManager is the field manager of kube-controller-manager's
// StorageVersionMigration controller (names.StorageVersionMigratorController).
const svmFieldManager = "storage-version-migrator-controller"

// The plan of a storage-version migration (check-update --migration-plan),
// on the test API server, whose migration the test runs as
// kube-controller-manager's StorageVersionMigration controller does (the
// test server has no controller manager): every object, listed in the
// preferred version, written back by a server-side apply of its
// apiVersion, kind, uid and resourceVersion alone. Then etcd holds, for
// every object, what the plan says: rewritten as the storage version
// without exactly the fields it names, or (refused, with the server's
// errors) still as before; and the trim of status.storedVersions is safe
// (no object is left in the old version) exactly when the plan says so.
// When it is, the plan's patch trims them, and the CRD's next release
// without the old version is accepted.
func TestStorageVersionMigrationPlan(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	// The three CRDs are of groups of their own: they are tried at once,
	// since most of the time goes to waiting for the server (a CRD
	// established, discovery), each CRD's two runs in turn.
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, tc := range []struct {
		dir, plural string
		safe        bool
	}{
		{storageMoveDir, "widgets", true},
		{"test/e2e/testdata/migration", "gadgets", false},
		// The preferred version (v1) is not the storage version (v2beta1).
		{"test/e2e/testdata/migration-via", "sprockets", true},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The controller's apply, and the way without it: each object as
			// read written back whole (kubectl get | kubectl replace).
			for _, replace := range []bool{false, true} {
				name := tc.plural + "/migrator"
				if replace {
					name = tc.plural + "/replace"
				}
				t.Run(name, func(t *testing.T) {
					m := newMigrationRun(t, tc.dir)
					if m.plan.Trim.Safe != tc.safe {
						t.Fatalf("the test data's own claim: the trim is safe: %v, want %v (%s)", m.plan.Trim.Safe, tc.safe, m.plan.Trim.Reason)
					}
					m.upgrade(t)
					m.compare(t, m.migrate(t, replace))
					m.trim(t)
				})
			}
		}()
	}
}

// migrationRun is one CRD's upgrade and migration on the test server.
type migrationRun struct {
	ctx       context.Context
	dir       string
	crds      *apiextensionsclient.Clientset
	cfg       *rest.Config
	etcd      *clientv3.Client
	old, new  *schema.CRD
	gvr       runtimeschema.GroupVersionResource // of the old CRD's version
	before    map[string]map[string]interface{}  // by name, as created
	plan      *migration.Plan
	predicted map[string]migration.Object
}

// newMigrationRun creates the old CRD of dir and its objects, and asks
// check-update for the plan of the upgrade to the new one, live; offline,
// from the files, the plan says the same of every object.
func newMigrationRun(t *testing.T, dir string) *migrationRun {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.WarningHandler = rest.NoWarnings{}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", etcdPort)}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	m := &migrationRun{ctx: ctx, dir: dir, crds: apiextensionsclient.NewForConfigOrDie(cfg), cfg: cfg, etcd: etcd, before: map[string]map[string]interface{}{}}
	decode := func(name string) *schema.CRD {
		c, _, err := schema.DecodeObject(readOneCRD(t, filepath.Join(dir, name)).Object, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	m.old, m.new = decode("old.yaml"), decode("new.yaml")
	if err := replaceCRD(ctx, m.crds, m.old.Object); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.crds.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), m.old.Name(), metav1.DeleteOptions{})
	})
	m.gvr = runtimeschema.GroupVersionResource{Group: m.old.Object.Spec.Group, Version: m.old.StorageVersion(), Resource: m.old.Object.Spec.Names.Plural}
	ri := dynamicClient(t).Resource(m.gvr).Namespace("default")
	objects := filepath.Join(repoRoot(), dir, "objects.yaml")
	docs := readDocs(t, objects)
	for _, d := range docs {
		got, err := createRetrying(ctx, ri, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)})
		if err != nil {
			t.Fatalf("%s: %v", d.Source, err)
		}
		m.before[got.GetName()] = got.Object
	}
	newFile := filepath.Join(repoRoot(), dir, "new.yaml")
	x := NewTest(t)
	m.plan = migrationPlan(t, x.Run("kubectl-crd", "check-update", "-f", newFile, "-o", "json", "--migration-plan"))
	offline := migrationPlan(t, x.Run("kubectl-crd", "check-update", "--offline", "--old", filepath.Join(repoRoot(), dir, "old.yaml"),
		"--objects", objects, "-f", newFile, "-o", "json", "--migration-plan"))
	m.predicted = map[string]migration.Object{}
	for _, o := range m.plan.Objects {
		m.predicted[o.Object.Name] = o
	}
	if m.plan.Checked != len(docs) || m.plan.Intact+len(m.plan.Objects) != len(docs) {
		t.Errorf("the plan: %d objects checked, %d intact, %d listed; want %d", m.plan.Checked, m.plan.Intact, len(m.plan.Objects), len(docs))
	}
	if diff := cmp.Diff(planSummary(offline), planSummary(m.plan)); diff != "" {
		t.Errorf("the plan offline (-) and live (+):\n%s", diff)
	}
	return m
}

// migrationPlan is the one plan of check-update -o json --migration-plan
// (exit 0, or 1 when the upgrade's findings fail it).
func migrationPlan(t *testing.T, r Result) *migration.Plan {
	t.Helper()
	var report struct {
		Upgrades []struct {
			Migration *migration.Plan `json:"migration"`
		} `json:"upgrades"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || r.Code > 1 || len(report.Upgrades) != 1 || report.Upgrades[0].Migration == nil {
		t.Fatalf("check-update: exit %d, %v; stdout:\n%s\nstderr:\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return report.Upgrades[0].Migration
}

// planSummary is what a plan says of each object and of the trim,
// without where the objects were read from.
func planSummary(p *migration.Plan) []string {
	out := []string{fmt.Sprintf("trim %v: %s %s", p.Trim.Safe, p.Trim.Patch, p.Trim.Reason)}
	for _, o := range p.Objects {
		for _, c := range o.Loses {
			out = append(out, fmt.Sprintf("%s loses %s %v", o.Object.Name, c.Path, c.Value))
		}
		for _, e := range o.Refused {
			out = append(out, fmt.Sprintf("%s refused: %s", o.Object.Name, e.Message))
		}
	}
	return out
}

// upgrade applies the new CRD, and waits until discovery prefers the
// version the plan says every rewrite goes through.
func (m *migrationRun) upgrade(t *testing.T) {
	crds := m.crds.ApiextensionsV1().CustomResourceDefinitions()
	cur, err := crds.Get(m.ctx, m.old.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec = m.new.Object.Spec
	if _, err := crds.Update(m.ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the CRD: %v", err)
	}
	disco := discovery.NewDiscoveryClientForConfigOrDie(m.cfg)
	if err := wait.PollUntilContextTimeout(m.ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		groups, err := disco.ServerGroups()
		if err != nil {
			return false, nil
		}
		for _, g := range groups.Groups {
			if g.Name == m.gvr.Group {
				return g.PreferredVersion.Version == m.plan.Via, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("discovery never preferred %s, the version the plan rewrites through: %v", m.plan.Via, err)
	}
}

// migrate does what the StorageVersionMigration controller does
// (pkg/controller/storageversionmigrator, runMigration): each object,
// listed in the preferred version, patched by a server-side apply of
// apiVersion, kind, metadata.uid and metadata.resourceVersion, as its
// field manager; with replace, what kubectl get | kubectl replace does:
// each object, as listed, updated whole. It returns each refusal by the
// object's name.
func (m *migrationRun) migrate(t *testing.T, replace bool) map[string]error {
	gvr := m.gvr
	gvr.Version = m.plan.Via
	ri := dynamicClient(t).Resource(gvr)
	var list *unstructured.UnstructuredList
	if err := wait.PollUntilContextTimeout(m.ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		list, err = ri.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == len(m.before), nil
	}); err != nil {
		t.Fatalf("listing the objects in %s: %v", gvr.Version, err)
	}
	errs := map[string]error{}
	for _, obj := range list.Items {
		if replace {
			if _, err := ri.Namespace(obj.GetNamespace()).Update(m.ctx, &obj, metav1.UpdateOptions{}); err != nil {
				errs[obj.GetName()] = err
			}
			continue
		}
		body, err := json.Marshal(map[string]interface{}{
			"apiVersion": gvr.GroupVersion().String(), "kind": obj.GetKind(),
			"metadata": map[string]interface{}{"uid": obj.GetUID(), "resourceVersion": obj.GetResourceVersion()},
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ri.Namespace(obj.GetNamespace()).Patch(m.ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: svmFieldManager})
		if err != nil {
			errs[obj.GetName()] = err
		}
	}
	return errs
}

// stored is an object as etcd holds it.
func (m *migrationRun) stored(t *testing.T, name string) map[string]interface{} {
	t.Helper()
	// The apiextensions-apiserver's etcd prefix, then the CRD's group and resource.
	key := fmt.Sprintf("/registry/apiextensions.kubernetes.io/%s/%s/default/%s", m.gvr.Group, m.gvr.Resource, name)
	resp, err := m.etcd.Get(m.ctx, key)
	if err != nil || len(resp.Kvs) != 1 {
		all, _ := m.etcd.Get(m.ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		var keys []string
		for _, kv := range all.Kvs {
			keys = append(keys, string(kv.Key))
		}
		t.Fatalf("etcd %s: %v (%d keys); etcd has %v", key, err, len(resp.Kvs), keys)
	}
	var obj map[string]interface{}
	if err := json.Unmarshal(resp.Kvs[0].Value, &obj); err != nil {
		t.Fatalf("etcd %s: %v", key, err)
	}
	return obj
}

// compare checks what etcd holds of every object against the plan: the
// version it is stored as, the fields lost, the refusals.
func (m *migrationRun) compare(t *testing.T, patchErrs map[string]error) {
	oldVersion := m.gvr.GroupVersion().String()
	newVersion := runtimeschema.GroupVersion{Group: m.gvr.Group, Version: m.plan.StorageVersion}.String()
	for name, before := range m.before {
		o := m.predicted[name]
		var wantRefused []string
		for _, e := range o.Refused {
			wantRefused = append(wantRefused, e.Message)
		}
		sort.Strings(wantRefused)
		refused, err := invalidCauses(patchErrs[name])
		if err != nil {
			t.Errorf("%s: the migration's patch: %v", name, err)
		}
		if diff := cmp.Diff(wantRefused, refused); diff != "" {
			t.Errorf("%s: the rewrite refused, the plan (-) and the server (+):\n%s", name, diff)
		}
		stored := m.stored(t, name)
		want := newVersion
		if len(refused) > 0 {
			want = oldVersion
		}
		if got := stored["apiVersion"]; got != want {
			t.Errorf("%s: etcd holds it as %v, want %s", name, got, want)
		}
		var lost, gained, wantLost []string
		diffPaths("", before["spec"], stored["spec"], &lost, &gained)
		for _, c := range o.Loses {
			wantLost = append(wantLost, c.Path)
		}
		sort.Strings(wantLost)
		if diff := cmp.Diff(wantLost, lost); diff != "" || len(gained) > 0 {
			t.Errorf("%s: lost when rewritten, the plan (-) and etcd (+):\n%s\ngained: %v", name, diff, gained)
		}
	}
}

// trim checks the plan's verdict on the trim against etcd: safe exactly
// when no object is left stored in the old version. When safe, the
// plan's patch trims status.storedVersions, and the next release without
// the old version is accepted; every object still reads.
func (m *migrationRun) trim(t *testing.T) {
	left := 0
	storedAs := runtimeschema.GroupVersion{Group: m.gvr.Group, Version: m.plan.StorageVersion}.String()
	for name := range m.before {
		if m.stored(t, name)["apiVersion"] != storedAs {
			left++
		}
	}
	if m.plan.Trim.Safe != (left == 0) {
		t.Fatalf("the plan says the trim is safe: %v; %d objects are left in the old version", m.plan.Trim.Safe, left)
	}
	if !m.plan.Trim.Safe {
		return
	}
	crds := m.crds.ApiextensionsV1().CustomResourceDefinitions()
	got, err := crds.Patch(m.ctx, m.new.Name(), types.MergePatchType, []byte(m.plan.Trim.Patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("the plan's patch: %v", err)
	}
	if diff := cmp.Diff(m.plan.Trim.StoredVersions, got.Status.StoredVersions); diff != "" {
		t.Errorf("status.storedVersions after the patch (-plan +server):\n%s", diff)
	}
	var kept []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range got.Spec.Versions {
		if v.Name == m.plan.StorageVersion {
			kept = append(kept, v)
		}
	}
	got.Spec.Versions = kept
	if _, err := crds.Update(m.ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the release without %v, after the trim: %v", m.plan.From, err)
	}
	gvr := m.gvr
	gvr.Version = m.plan.StorageVersion
	ri := dynamicClient(t).Resource(gvr).Namespace("default")
	for name := range m.before {
		if _, err := ri.Get(m.ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s after the trim: %v", name, err)
		}
	}
}
