package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

func read(t *testing.T, name, text string) []*document.Document {
	t.Helper()
	docs, err := document.Read(strings.NewReader(text), name)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func readFile(t *testing.T, name string) []*document.Document {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return read(t, name, string(b))
}

const databaseCRD = "../../../examples/immutable/crd.yaml"

func newWithCRD(t *testing.T, opts Options) *Catalog {
	t.Helper()
	c := newServed(opts)
	for _, d := range readFile(t, databaseCRD) {
		if _, _, err := c.addCRD(d); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

const database = `apiVersion: storage.example.com/v1
kind: Database
metadata:
  name: orders
spec:
  engine: postgres
  region: eu-west-1
  colour: blue
`

func TestAddCRDRedefined(t *testing.T) {
	c := newWithCRD(t, Options{})
	b, err := os.ReadFile(databaseCRD)
	if err != nil {
		t.Fatal(err)
	}
	again := read(t, "again.yaml", strings.Replace(string(b), "shortNames: [db]", "shortNames: [dbs]", 1))[0]
	crd, findings, err := c.addCRD(again)
	if err != nil || crd == nil {
		t.Fatalf("addCRD: %v, %v", crd, err)
	}
	if len(findings) != 1 || findings[0].Reason != finding.ReasonRedefined ||
		findings[0].Message != "defined twice, differently ("+databaseCRD+":5 and again.yaml:5): the later one, of again.yaml:5, is used" {
		t.Errorf("findings: %+v", findings)
	}
	if got, _ := c.reg.Lookup("storage.example.com/v1", "Database"); got != crd {
		t.Error("the later CRD is not the one used")
	}
	// Not a CRD: nothing added, no error.
	if crd, findings, err := c.addCRD(read(t, "db.yaml", database)[0]); crd != nil || findings != nil || err != nil {
		t.Errorf("a custom resource: %v, %v, %v", crd, findings, err)
	}
	// A CRD the server refuses is an input error naming the document.
	_, _, err = c.addCRD(read(t, "bad.yaml", "apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\n")[0])
	var ie *document.InputError
	if !errors.As(err, &ie) || ie.Source.File != "bad.yaml" {
		t.Errorf("a refused CRD: %v", err)
	}
}

func TestNamespaces(t *testing.T) {
	c := newWithCRD(t, Options{})
	namespaced, _ := c.reg.Lookup("storage.example.com/v1", "Database")
	for _, tc := range []struct {
		rule           Namespaces
		ns             string
		shown, request string
	}{
		{Namespaces{}, "", "", "default"},
		{Namespaces{}, "a", "a", "a"},
		{Namespaces{Default: "ctx"}, "", "ctx", "ctx"},
		{Namespaces{Default: "ctx", Offline: true}, "", "", "ctx"},
		{Namespaces{Default: "n", Explicit: true, Offline: true}, "", "n", "n"},
		{Namespaces{Default: "n", Explicit: true}, "a", "a", "a"},
	} {
		if got := tc.rule.shown(namespaced, tc.ns); got != tc.shown {
			t.Errorf("%+v.shown(%q) = %q, want %q", tc.rule, tc.ns, got, tc.shown)
		}
		if got := tc.rule.request(namespaced, tc.ns); got != tc.request {
			t.Errorf("%+v.request(%q) = %q, want %q", tc.rule, tc.ns, got, tc.request)
		}
	}
	d := read(t, "db.yaml", strings.Replace(database, "name: orders", "name: orders\n  namespace: a", 1))[0]
	if err := (Namespaces{Default: "a", Explicit: true}).Check(d); err != nil {
		t.Error(err)
	}
	if err := (Namespaces{Default: "b"}).Check(d); err != nil {
		t.Error(err)
	}
	err := (Namespaces{Default: "b", Explicit: true}).Check(d)
	if err == nil || !strings.Contains(err.Error(), `db.yaml:1: the namespace from the provided object "a" does not match the namespace "b"`) {
		t.Errorf("Check: %v", err)
	}
}

// fakeCluster serves the CRDs and kinds it is given, and counts the lists.
type fakeCluster struct {
	crds   []*schema.CRD
	served map[runtimeschema.GroupVersionKind]bool
	objs   map[string]map[string]interface{}
	lists  int
}

func (f *fakeCluster) CRDs(_ context.Context, kinds map[runtimeschema.GroupKind]bool) ([]*schema.CRD, error) {
	f.lists++
	return f.crds, nil
}

func (f *fakeCluster) Serves(_ context.Context, gvk runtimeschema.GroupVersionKind) (bool, error) {
	return f.served[gvk], nil
}

func (f *fakeCluster) GetObject(_ context.Context, gvr runtimeschema.GroupVersionResource, ns, name string) (map[string]interface{}, error) {
	return f.objs[gvr.Resource+"/"+ns+"/"+name], nil
}

func (f *fakeCluster) Where() string { return "the fake" }

func kindsOf(docs ...*document.Document) Kinds {
	k := Kinds{}
	for _, d := range docs {
		k.Add(d.Object)
	}
	return k
}

func TestResolveOffline(t *testing.T) {
	c := newServed(Options{})
	bad := read(t, "x.yaml", "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: web}\n")[0]
	good := read(t, "y.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")[0]
	custom := read(t, "z.yaml", database)[0]
	if err := c.Resolve(context.Background(), kindsOf(bad, good, custom)); err != nil {
		t.Fatal(err)
	}
	if err := c.Refusal(bad); err == nil || !strings.HasPrefix(err.Error(), `x.yaml:1: Deploymnet web: no matches for kind "Deploymnet" in version "apps/v1"`) {
		t.Errorf("Refusal(Deploymnet) = %v", err)
	}
	if err := c.Refusal(good); err != nil {
		t.Errorf("Refusal(Deployment) = %v", err)
	}
	// Offline, a custom kind without a CRD is passed through, not refused.
	if err := c.Refusal(custom); err != nil {
		t.Errorf("Refusal(Database) = %v", err)
	}
}

func TestResolveLive(t *testing.T) {
	crdDoc := readFile(t, databaseCRD)[0]
	live, _, err := schema.FromObject(crdDoc.Object, strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	db := read(t, "db.yaml", database)[0]
	other := read(t, "o.yaml", "apiVersion: other.example.com/v1\nkind: Thing\nmetadata: {name: t}\n")[0]
	deploy := read(t, "d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")[0]
	appsV1Deployment := runtimeschema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

	// The cluster's CRD for a kind the files do not define; a kind neither defines is refused.
	f := &fakeCluster{crds: []*schema.CRD{live}, served: map[runtimeschema.GroupVersionKind]bool{appsV1Deployment: true}}
	c := newServed(Options{Cluster: f})
	if err := c.Resolve(context.Background(), kindsOf(db, other, deploy)); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.reg.Lookup("storage.example.com/v1", "Database"); !ok || got != live {
		t.Error("the cluster's CRD was not added")
	}
	want := `o.yaml:1: Thing t: no CustomResourceDefinition defines kind "Thing" in other.example.com/v1, on the fake or in the inputs; the API server would refuse it (no matches for kind)`
	if err := c.Refusal(other); err == nil || err.Error() != want {
		t.Errorf("Refusal(Thing) = %v\nwant %s", err, want)
	}
	if c.Refusal(db) != nil || c.Refusal(deploy) != nil {
		t.Error("a served kind is refused")
	}

	// Added CRDs win over the cluster's, and then the cluster's are not even listed.
	f = &fakeCluster{crds: []*schema.CRD{live}}
	c = newWithCRD(t, Options{Cluster: f})
	fromFile, _ := c.reg.Lookup("storage.example.com/v1", "Database")
	if err := c.Resolve(context.Background(), kindsOf(db)); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.reg.Lookup("storage.example.com/v1", "Database"); got != fromFile || f.lists != 0 {
		t.Errorf("the file's CRD was replaced, or the cluster listed (%d)", f.lists)
	}

	// A built-in kind the cluster does not serve fails the run before the CRDs are listed.
	f = &fakeCluster{}
	c = newServed(Options{Cluster: f})
	if err := c.Resolve(context.Background(), kindsOf(db, deploy)); err != nil {
		t.Fatal(err)
	}
	if err := c.Refusal(deploy); err == nil || !strings.Contains(err.Error(), "not served by the fake") || f.lists != 0 {
		t.Errorf("Refusal(Deployment) = %v, %d lists", err, f.lists)
	}
}

func TestPruneNamesAndFinds(t *testing.T) {
	c := newWithCRD(t, Options{Namespaces: Namespaces{Default: "ctx"}})
	d := read(t, "db.yaml", database)[0]
	res, findings, err := c.prune(d, pruneOptions{Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Object.Namespace != "ctx" {
		t.Errorf("namespace %q, want the rule's", res.Object.Namespace)
	}
	got := []string{}
	for _, f := range findings {
		got = append(got, string(f.Check)+" "+f.Message)
	}
	if diff := cmp.Diff([]string{`Prune pruned unknown field "spec.colour"`}, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestUpdate(t *testing.T) {
	old := strings.Replace(database, "  colour: blue\n", "", 1)
	changed := strings.Replace(database, "eu-west-1", "us-east-1", 1)
	f := &fakeCluster{objs: map[string]map[string]interface{}{}}
	// The cluster's old object is in the namespace the rule gives the new one.
	f.objs["databases/ctx/orders"] = read(t, "live", old)[0].Object
	for _, tc := range []struct {
		name    string
		opts    Options
		olds    []string
		status  UpdateStatus
		refused []string
	}{
		{"create", Options{}, nil, UpdateCreate, nil},
		{"old file, same namespace", Options{}, []string{old}, UpdateChecked, nil},
		{"old file, region changed", Options{}, []string{strings.Replace(old, "eu-west-1", "eu-north-1", 1)}, UpdateChecked,
			[]string{"spec.region x-kubernetes-mutability: Immutable"}},
		{"old file, another namespace", Options{}, []string{strings.Replace(old, "name: orders", "name: orders\n  namespace: x", 1)}, UpdateCreate, nil},
		{"old of the context's namespace", Options{Namespaces: Namespaces{Default: "ctx"}},
			[]string{strings.Replace(old, "name: orders", "name: orders\n  namespace: ctx", 1)}, UpdateChecked, nil},
		{"old from the cluster", Options{Cluster: f, OldFromCluster: true, Namespaces: Namespaces{Default: "ctx"}}, nil, UpdateChecked, nil},
		// kubectl get -o yaml prints the namespace the manifest leaves out.
		{"old export in default, offline", Options{Namespaces: Namespaces{Offline: true}},
			[]string{strings.Replace(old, "name: orders", "name: orders\n  namespace: default", 1)}, UpdateChecked, nil},
		{"old export in default, region changed, offline", Options{Namespaces: Namespaces{Offline: true}},
			[]string{strings.Replace(strings.Replace(old, "name: orders", "name: orders\n  namespace: default", 1), "eu-west-1", "eu-north-1", 1)}, UpdateChecked,
			[]string{"spec.region x-kubernetes-mutability: Immutable"}},
		{"old export in default, -n other", Options{Namespaces: Namespaces{Default: "other", Explicit: true}},
			[]string{strings.Replace(old, "name: orders", "name: orders\n  namespace: default", 1)}, UpdateCreate, nil},
		{"old without a namespace, context's", Options{Namespaces: Namespaces{Default: "ctx"}},
			[]string{old}, UpdateChecked, nil},
		{"two equal copies of the old", Options{Namespaces: Namespaces{Offline: true}},
			[]string{old, strings.Replace(old, "name: orders", "name: orders\n  namespace: default", 1)}, UpdateChecked, nil},

		{"not from the cluster without OldFromCluster", Options{Cluster: f, Namespaces: Namespaces{Default: "ctx"}}, nil, UpdateCreate, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newWithCRD(t, tc.opts)
			for _, o := range tc.olds {
				if err := c.AddOld(read(t, "old.yaml", o)[0]); err != nil {
					t.Fatal(err)
				}
			}
			text := database
			if tc.refused != nil {
				text = changed
			}
			res, err := c.updateResult(context.Background(), read(t, "new.yaml", text)[0])
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Errorf("status %q, want %q", res.Status, tc.status)
			}
			var refused []string
			for _, r := range res.Refused {
				refused = append(refused, r.Path+" "+r.Rule)
				if r.Line != 7 {
					t.Errorf("%s: line %d, want 7", r.Path, r.Line)
				}
			}
			if diff := cmp.Diff(tc.refused, refused); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			if len(res.Warnings) != 1 || res.Warnings[0].Reason != prune.UnknownField || res.Warnings[0].Line != 8 {
				t.Errorf("warnings: %+v", res.Warnings)
			}
		})
	}
	// Two old versions of one object that differ: bad input naming both,
	// in either order, whatever the namespace is written as.
	a := strings.Replace(old, "name: orders", "name: orders\n  namespace: default", 1)
	b := strings.Replace(old, "eu-west-1", "eu-north-1", 1)
	for _, order := range [][2]string{{a, b}, {b, a}} {
		c := newWithCRD(t, Options{Namespaces: Namespaces{Offline: true}})
		if err := c.AddOld(read(t, "first.yaml", order[0])[0]); err != nil {
			t.Fatal(err)
		}
		err := c.AddOld(read(t, "second.yaml", order[1])[0])
		if err == nil || !strings.Contains(err.Error(), "second.yaml:1: ") || !strings.Contains(err.Error(), "first.yaml:1") {
			t.Errorf("a second, different old version: %v", err)
		}
	}
	// Of another namespace, it is another object.
	c2 := newWithCRD(t, Options{})
	for i, o := range []string{a, strings.Replace(b, "name: orders", "name: orders\n  namespace: x", 1)} {
		if err := c2.AddOld(read(t, fmt.Sprint(i, ".yaml"), o)[0]); err != nil {
			t.Errorf("old %d: %v", i, err)
		}
	}
	if n := len(c2.OldObjects()); n != 2 {
		t.Errorf("%d old objects, want 2", n)
	}
	// An old object the server cannot have stored is refused.
	err := New(Options{}).AddOld(read(t, "old.yaml", "apiVersion: storage.example.com/v1\nkind: Database\nmetadata: {}\n")[0])
	if err == nil || !strings.Contains(err.Error(), "metadata.name must be set") {
		t.Errorf("AddOld without a name: %v", err)
	}
	// Not ours: a CRD, a built-in kind; unknown: a kind without a CRD.
	c := newServed(Options{})
	for text, want := range map[string]UpdateStatus{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n":       UpdateSkipped,
		"apiVersion: other.example.com/v1\nkind: Thing\nmetadata: {name: t}\n": UpdateMissingCRD,
	} {
		res, err := c.updateResult(context.Background(), read(t, "x.yaml", text)[0])
		if err != nil || res.Status != want {
			t.Errorf("%s: %v, %v, want %q", text, res, err, want)
		}
	}
}

// newServed is a catalog with the server's own validation, as the front
// ends make it.
func newServed(opts Options) *Catalog {
	opts.Server, opts.Builtins = strategy.Validators{}, builtin.Kinds{}
	return New(opts)
}

// TestCheckStoredOfAnotherObject: update.CheckStored takes the new object as
// stored from its caller only when it is what goes to the server; for an
// object without a namespace, which the check puts in one, it computes it
// again, so a stored object of another object changes nothing.
func TestCheckStoredOfAnotherObject(t *testing.T) {
	c := newWithCRD(t, Options{})
	crd, _ := c.reg.Lookup("storage.example.com/v1", "Database")
	old := read(t, "old.yaml", database)[0].Object
	d := read(t, "new.yaml", strings.Replace(database, "colour: blue", "colour: red\n  extra: x", 1))[0]
	other, err := prune.Store(read(t, "other.yaml", database)[0].Object, crd, "v1", true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := update.Check(old, d.Object, crd, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := update.CheckStored(old, d.Object, other, crd, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckStored with the stored object of another object (-Check +CheckStored):\n%s", diff)
	}
	if len(want.Pruned) == 0 {
		t.Error("the test's new object has nothing pruned: it shows nothing")
	}
}
