package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdtest"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// testReport is the part of kubectl crd test -o json this test reads.
type testReport struct {
	Cases []struct {
		Name     string            `json:"name"`
		Observed *crdtest.Observed `json:"observed"`
	} `json:"cases"`
}

// For every case of every shipped suite (examples/*/*.test.yaml), the real
// API server gets the case's objects: the suite's CRDs installed (with the
// markers lowered: the server drops them), the object created, or the old
// object created and updated to the new one (a case of subresource status:
// the old object's status written with UpdateStatus, the new one sent to
// /status with UpdateStatus, dry run), or, for an upgrade, created
// under the old CRDs, then under the new ones read, created again and
// written back (upgradeVerdict). The server allows or refuses it as
// kubectl crd test -o json says, with the same errors, by field and type.
//
// Of the KEP suite (every KEP example in every mode, list type and map
// type: 217 of the 250 cases), the cases of one kind of each example go,
// the modes, list types and map types taking turns (kepSample);
// TestTestSuitesAgainstServerSweep sends the others.
func TestTestSuitesAgainstServer(t *testing.T) {
	requireOwnCluster(t)
	_, status := testSuitesAgainstServer(t, func(rel string, c *crdtest.Case, sample map[*crdtest.Case]bool) bool {
		return rel != kepSuite || sample[c]
	})
	if status == 0 {
		t.Error("no case of the shipped suites writes /status: examples/status has them")
	}
}

// TestTestSuitesAgainstServerSweep sends the cases of the KEP suite that
// TestTestSuitesAgainstServer leaves out: run by .ci/run's matrix target.
func TestTestSuitesAgainstServerSweep(t *testing.T) {
	matrixSweep(t)
	requireOwnCluster(t)
	if cases, _ := testSuitesAgainstServer(t, func(rel string, c *crdtest.Case, sample map[*crdtest.Case]bool) bool {
		return rel == kepSuite && !sample[c]
	}); cases == 0 {
		t.Errorf("no case of %s sent", kepSuite)
	}
}

// kepSuite is the suite of the KEP's examples, relative to the repository.
const kepSuite = "examples/kep-immutable/kep.test.yaml"

// kepSample are the cases of one kind of each KEP example of the suites:
// of the k-th example ("Example N" in the cases' names), the cases of its
// k-th kind (modulo its number of kinds).
func kepSample(suites []*crdtest.Suite) map[*crdtest.Case]bool {
	var examples []string
	kinds := map[string][]string{}
	for _, s := range suites {
		for _, c := range s.Cases {
			ex := strings.Join(strings.Fields(c.Name)[:min(2, len(strings.Fields(c.Name)))], " ")
			kind, _ := c.Object.Object["kind"].(string)
			if _, ok := kinds[ex]; !ok {
				examples = append(examples, ex)
			}
			if !slices.Contains(kinds[ex], kind) {
				kinds[ex] = append(kinds[ex], kind)
			}
		}
	}
	chosen := map[string]bool{}
	for k, ex := range examples {
		chosen[kinds[ex][k%len(kinds[ex])]] = true
	}
	out := map[*crdtest.Case]bool{}
	for _, s := range suites {
		for _, c := range s.Cases {
			kind, _ := c.Object.Object["kind"].(string)
			out[c] = chosen[kind]
		}
	}
	return out
}

// testSuitesAgainstServer sends the cases of the shipped suites that send
// picks (by the suite file relative to the repository) to the server.
func testSuitesAgainstServer(t *testing.T, send func(rel string, c *crdtest.Case, sample map[*crdtest.Case]bool) bool) (cases, status int) {
	x := NewTest(t)
	dyn := dynamicClient(t)
	files, err := filepath.Glob(filepath.Join(repoRoot(), "examples", "*", "*.test.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suites: %v", err)
	}
	refused := 0
	installed := map[string]string{}
	for _, file := range files {
		rel, _ := filepath.Rel(repoRoot(), file)
		r := x.Run("kubectl-crd", "test", "-o", "json", rel)
		var report testReport
		if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || r.Code != 0 {
			t.Fatalf("kubectl crd test %s: exit %d, %v\n%s", rel, r.Code, err, r.Stderr)
		}
		suites, err := crdtest.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sample := kepSample(suites)
		i := 0
		for _, s := range suites {
			sent := false
			for _, c := range s.Cases {
				want := report.Cases[i].Observed
				if report.Cases[i].Name != c.Name {
					t.Fatalf("%s: case %d is %q in the report, %q in the file", rel, i, report.Cases[i].Name, c.Name)
				}
				if !send(rel, c, sample) {
					i++
					continue
				}
				sent = true
				got, texts := serverVerdict(t, dyn, installed, s, c)
				if diff := cmp.Diff(verdictOf(want), got); diff != "" {
					t.Errorf("%s %s: kubectl crd test against the server (-test +server):\n%s", c.Source, c.Name, diff)
				}
				if diff := cmp.Diff(textsOf(want), texts); texts != nil && diff != "" {
					t.Errorf("%s %s: the errors' text of kubectl crd test against the server's (-test +server):\n%s", c.Source, c.Name, diff)
				}
				cases++
				if c.Subresource == "status" {
					status++
				}
				if want.Result == crdtest.Refused {
					refused++
				}
				i++
			}
			if sent {
				deleteSuiteCRDs(t, dyn, installed, s.CRDs)
			}
		}
	}
	t.Logf("%d cases of %d files sent to the server, %d refused, %d to /status", cases, len(files), refused, status)
	return cases, status
}

// verdictOf is a verdict as the comparison reads it: the result, and each
// error's "field|type", sorted.
func verdictOf(o *crdtest.Observed) []string {
	out := []string{}
	for _, e := range o.Errors {
		out = append(out, e.Field+"|"+e.Type)
	}
	sort.Strings(out)
	return append([]string{string(o.Result)}, out...)
}

// textsOf are the texts of the errors observed, sorted: what the server
// returns for each (field.Error's Error), as kubectl apply prints it.
func textsOf(o *crdtest.Observed) []string {
	out := []string{}
	for _, e := range o.Errors {
		out = append(out, e.Text)
	}
	sort.Strings(out)
	return out
}

// serverTexts are the texts of the server's refusal err, sorted: each
// cause's field and message, as field.Error's Error joins them (the
// cause's message is its ErrorBody).
func serverTexts(err error) []string {
	out := []string{}
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) || status.Status().Details == nil {
		return out
	}
	for _, cause := range status.Status().Details.Causes {
		out = append(out, cause.Field+": "+cause.Message)
	}
	sort.Strings(out)
	return out
}

// serverVerdict sends c's objects to the server, the suite's CRDs (or the
// case's old CRDs) installed, and deletes the object again; with the
// server's texts of its errors, but for an upgrade (nil: its errors are
// not one request's).
func serverVerdict(t *testing.T, dyn dynamic.Interface, installed map[string]string, s *crdtest.Suite, c *crdtest.Case) ([]string, []string) {
	t.Helper()
	ctx := context.Background()
	first := s.CRDs
	if len(c.OldCRDs) > 0 {
		first = c.OldCRDs
	}
	installCRDs(t, dyn, installed, first)
	obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(c.Object.Object)}
	ri := resourceOf(t, dyn, first, obj)
	defer func() {
		if err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s: deleting %s: %v", c.Source, obj.GetName(), err)
		}
	}()
	var err error
	switch {
	case c.Subresource == "status":
		old := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(c.OldObject.Object)}
		err = createThenUpdateStatus(ctx, ri, old, obj)
	case c.OldObject != nil:
		old := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(c.OldObject.Object)}
		err = createThenUpdate(ctx, ri, old, obj)
	case len(c.OldCRDs) > 0:
		return upgradeVerdict(t, dyn, installed, s, c, ri, obj), nil
	default:
		_, err = createRetrying(ctx, ri, obj)
	}
	return refusalOf(t, c, err), serverTexts(err)
}

// upgradeVerdict is the server's verdict on an object of the old CRDs once
// the suite's replace them, in verdictOf's form: created under the old
// CRDs, then, under the new ones, what a read of it loses
// ("path|UnknownField"), why a create of it again is refused, and why its
// write back as read is.
func upgradeVerdict(t *testing.T, dyn dynamic.Interface, installed map[string]string, s *crdtest.Suite, c *crdtest.Case, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) []string {
	t.Helper()
	ctx := context.Background()
	created, err := createRetrying(ctx, ri, obj.DeepCopy())
	if err != nil {
		t.Errorf("%s %s: creating the object under the old CRDs: %v", c.Source, c.Name, err)
		return nil
	}
	installCRDs(t, dyn, installed, s.CRDs)
	ri = resourceOf(t, dyn, s.CRDs, obj)
	read, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Errorf("%s %s: reading the object under the new CRDs: %v", c.Source, c.Name, err)
		return nil
	}
	out := []string{}
	for _, p := range lostPaths(created.Object["spec"], read.Object["spec"], "spec") {
		out = append(out, p+"|UnknownField")
	}
	again := obj.DeepCopy()
	again.SetName(obj.GetName() + "-again")
	if _, err := createRetrying(ctx, ri, again); err != nil {
		out = append(out, causesOf(t, c, err)...)
	} else if err := ri.Delete(ctx, again.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Errorf("%s: deleting %s: %v", c.Source, again.GetName(), err)
	}
	if _, err := ri.Update(ctx, read, metav1.UpdateOptions{}); err != nil {
		out = append(out, causesOf(t, c, err)...)
	}
	if len(out) == 0 {
		return []string{string(crdtest.Allowed)}
	}
	sort.Strings(out)
	return append([]string{string(crdtest.Refused)}, out...)
}

// causesOf are the causes of the server's refusal err, "field|type".
func causesOf(t *testing.T, c *crdtest.Case, err error) []string {
	t.Helper()
	if r := refusalOf(t, c, err); len(r) > 1 {
		return r[1:]
	}
	return nil
}

// lostPaths are the paths of old that new lacks, the outermost of each.
func lostPaths(old, new interface{}, path string) []string {
	var out []string
	switch o := old.(type) {
	case map[string]interface{}:
		n, _ := new.(map[string]interface{})
		for k, v := range o {
			if nv, ok := n[k]; ok {
				out = append(out, lostPaths(v, nv, path+"."+k)...)
			} else {
				out = append(out, path+"."+k)
			}
		}
	case []interface{}:
		n, _ := new.([]interface{})
		for i, v := range o {
			if i < len(n) {
				out = append(out, lostPaths(v, n[i], fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return out
}

// createThenUpdate creates old and updates it to obj.
func createThenUpdate(ctx context.Context, ri dynamic.ResourceInterface, old, obj *unstructured.Unstructured) error {
	if _, err := createRetrying(ctx, ri, old); err != nil {
		return fmt.Errorf("creating the old object: %w", err)
	}
	stored, err := ri.Get(ctx, old.GetName(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the old object: %w", err)
	}
	obj.SetResourceVersion(stored.GetResourceVersion())
	_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}

// createThenUpdateStatus creates old, writes its status with UpdateStatus
// (a create drops it: the status subresource), and sends obj to /status
// (UpdateStatus, dry run): the server's answer to that write.
func createThenUpdateStatus(ctx context.Context, ri dynamic.ResourceInterface, old, obj *unstructured.Unstructured) error {
	status, hasStatus := old.Object["status"]
	stored, err := createRetrying(ctx, ri, old.DeepCopy())
	if err != nil {
		return fmt.Errorf("creating the old object: %w", err)
	}
	if hasStatus {
		stored.Object["status"] = status
		if stored, err = ri.UpdateStatus(ctx, stored, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("writing the old object's status: %w", err)
		}
	}
	obj.SetResourceVersion(stored.GetResourceVersion())
	_, err = ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// refusalOf is the server's answer in verdictOf's form; a failure other
// than an Invalid refusal fails the test.
func refusalOf(t *testing.T, c *crdtest.Case, err error) []string {
	t.Helper()
	if err == nil {
		return []string{string(crdtest.Allowed)}
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Errorf("%s %s: the server fails otherwise than Invalid: %v", c.Source, c.Name, err)
		return nil
	}
	out := []string{}
	for _, cause := range status.Status().Details.Causes {
		out = append(out, cause.Field+"|"+field.ErrorType(cause.Type).String())
	}
	sort.Strings(out)
	return append([]string{string(crdtest.Refused)}, out...)
}

// resourceOf is the resource of obj's kind, among the CRDs.
func resourceOf(t *testing.T, dyn dynamic.Interface, crds []*document.Document, obj *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gv, err := runtimeschema.ParseGroupVersion(obj.GetAPIVersion())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range crds {
		group, _, _ := unstructured.NestedString(d.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(d.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(d.Object, "spec", "names", "plural")
		scope, _, _ := unstructured.NestedString(d.Object, "spec", "scope")
		if group != gv.Group || kind != obj.GetKind() {
			continue
		}
		ri := dyn.Resource(gv.WithResource(plural))
		if scope == "Cluster" {
			return ri
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace("default")
		}
		return ri.Namespace(obj.GetNamespace())
	}
	t.Fatalf("no CRD of the case defines %s, kind %s", obj.GetAPIVersion(), obj.GetKind())
	return nil
}

// installCRDs creates or replaces the CRDs on the server, their markers
// lowered to the rules the server enforces, and waits until each is
// established. installed is what this test put there, by name: the sha256
// of the lowered CRD.
func installCRDs(t *testing.T, dyn dynamic.Interface, installed map[string]string, docs []*document.Document) {
	t.Helper()
	ctx := context.Background()
	crds := dyn.Resource(crdGVR)
	for _, d := range docs {
		l := loweredCRD(t, d)
		if installed[l.name] == l.sum {
			continue
		}
		crd := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(l.object)}
		stored, err := crds.Get(ctx, crd.GetName(), metav1.GetOptions{})
		switch {
		case err == nil:
			crd.SetResourceVersion(stored.GetResourceVersion())
			_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
		case apierrors.IsNotFound(err):
			_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("%s: installing %s: %v", d.Source, crd.GetName(), err)
		}
		installed[crd.GetName()] = l.sum
		waitEstablished(t, dyn, crd.GetName())
		if stored != nil {
			// An updated CRD is established already: the server's handler
			// serves the new schema once its informer has the update, which
			// nothing reports. Without the wait, a loaded machine sent a case
			// to the schema before (an upgrade case's old CRD, right after the
			// new one). There are a few updates in the whole test.
			time.Sleep(2 * time.Second)
		}
	}
}

// lowered is a CRD document with its markers lowered, and the sha256 of
// its JSON.
type lowered struct {
	object    map[string]interface{}
	name, sum string
}

// loweredCRDs are the documents lowered so far: a suite's CRDs are
// installed before each of its cases, and the KEP suite's 32 would
// otherwise be lowered (their rules compiled) again for each of its two
// hundred cases.
var loweredCRDs sync.Map // *document.Document -> lowered

// loweredCRD is lower.CRD of d, computed once per document.
func loweredCRD(t *testing.T, d *document.Document) lowered {
	t.Helper()
	if l, ok := loweredCRDs.Load(d); ok {
		return l.(lowered)
	}
	res, err := lower.CRD(d.Object, strategy.Validators{})
	if err != nil {
		t.Fatalf("%s: lowering: %v", d.Source, err)
	}
	b, _ := json.Marshal(res.Object)
	l := lowered{object: res.Object, name: (&unstructured.Unstructured{Object: res.Object}).GetName(), sum: fmt.Sprintf("%x", sha256.Sum256(b))}
	loweredCRDs.Store(d, l)
	return l
}

func waitEstablished(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			c, _ := c.(map[string]interface{})
			if c["type"] == "Established" && c["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", name, err)
	}
}

// deleteSuiteCRDs deletes the suite's CRDs and waits until they are gone.
func deleteSuiteCRDs(t *testing.T, dyn dynamic.Interface, installed map[string]string, docs []*document.Document) {
	t.Helper()
	ctx := context.Background()
	crds := dyn.Resource(crdGVR)
	for _, d := range docs {
		name := (&unstructured.Unstructured{Object: d.Object}).GetName()
		delete(installed, name)
		if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", name, err)
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := crds.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("CRD %s not deleted: %v", name, err)
		}
	}
}
