package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/holes"
)

// holesOutput is kubectl crd holes -o json.
type holesOutput struct {
	CRDs []struct {
		Source document.Source `json:"source"`
		holes.Report
	} `json:"crds"`
}

// holesTally counts what a replay did on the server.
type holesTally struct {
	crds, fields, leaky, holes, steps, fixRefused int
}

// TestHolesReplayExample: every hole kubectl crd holes prints for
// examples/holes/crd.yaml is accepted by the real test API server, step by
// step with real updates, and ends with another value; the CRD with the
// rules that close the holes (the markers the output names, lowered by
// kubectl crd lower-mutability) makes the server refuse every step the tool
// says it refuses.
func TestHolesReplayExample(t *testing.T) {
	requireOwnCluster(t)
	var tally holesTally
	replayHolesFile(t, dynamicClient(t), filepath.Join(repoRoot(), "examples", "holes", "crd.yaml"), &tally)
	t.Logf("%+v", tally)
	if tally.holes == 0 || tally.fixRefused == 0 {
		t.Errorf("the example has no hole replayed: %+v", tally)
	}
}

// TestHolesReplayCorpus is TestHolesReplayExample on every CRD of the
// corpus with a transition rule.
func TestHolesReplayCorpus(t *testing.T) {
	corpusSweep(t)
	dir := corpus.Dir(t)
	dyn := dynamicClient(t)
	var tally holesTally
	for _, f := range corpus.CRDFiles(t, dir) {
		if !bytes.Contains(corpus.Read(t, dir, f), []byte("oldSelf")) {
			continue
		}
		replayHolesFile(t, dyn, filepath.Join(dir, f.LocalPath), &tally)
	}
	t.Logf("CRDs %d, fields %d (leaky %d), holes %d replayed in %d real updates, %d steps refused once fixed", tally.crds, tally.fields, tally.leaky, tally.holes, tally.steps, tally.fixRefused)
	if tally.holes == 0 {
		t.Errorf("no hole replayed")
	}
}

// replayHolesFile runs kubectl crd holes on file, and replays each CRD's
// holes on the server.
func replayHolesFile(t *testing.T, dyn dynamic.Interface, file string, tally *holesTally) {
	t.Helper()
	x := NewTest(t)
	r := x.Run("kubectl-crd", "holes", "-f", file, "-o", "json")
	if r.Code == 2 {
		t.Logf("%s: not analysed (exit 2): %.300s", file, r.Stderr)
		return
	}
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("%s: kubectl crd holes: exit %d\n%s", file, r.Code, r.Stderr)
	}
	var out holesOutput
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, r.Stdout)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := document.Read(bytes.NewReader(data), file)
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range out.CRDs {
		tally.crds++
		tally.fields += len(rep.Fields)
		if (r.Code == 1) != (rep.Leaky() > 0) && len(out.CRDs) == 1 {
			t.Errorf("%s: exit %d with %d leaky fields", file, r.Code, rep.Leaky())
		}
		if rep.Leaky() == 0 {
			continue
		}
		var raw map[string]interface{}
		for _, d := range docs {
			if (&unstructured.Unstructured{Object: d.Object}).GetName() == rep.CRD && d.Object["kind"] == "CustomResourceDefinition" {
				raw = runtime.DeepCopyJSON(d.Object)
			}
		}
		if raw == nil {
			t.Fatalf("%s: no CRD %s", file, rep.CRD)
		}
		replayHoles(t, dyn, raw, rep.Report, tally)
	}
}

// replayHoles creates the CRD, replays every hole with real updates, then
// updates the CRD with each leaky field's fix and sends the steps it
// refuses; the CRD is deleted at the end.
func replayHoles(t *testing.T, dyn dynamic.Interface, raw map[string]interface{}, rep holes.Report, tally *holesTally) {
	t.Helper()
	ctx := context.Background()
	// No conversion webhook runs here: the tool reads versions as None does.
	spec, _ := raw["spec"].(map[string]interface{})
	delete(spec, "conversion")
	crds := dyn.Resource(crdGVR)
	if _, err := crds.Create(ctx, &unstructured.Unstructured{Object: raw}, metav1.CreateOptions{}); err != nil {
		t.Errorf("%s: creating the CRD: %v", rep.CRD, err)
		return
	}
	defer deleteCRDAndWait(t, dyn, rep.CRD)
	waitEstablished(t, dyn, rep.CRD)
	n := 0
	for _, f := range rep.Fields {
		if f.Verdict != holes.Leaks {
			continue
		}
		tally.leaky++
		for _, h := range f.Holes {
			n++
			tally.holes++
			tally.steps += replayHole(t, holeResource(dyn, raw, h.Steps[0].Old), fmt.Sprintf("hole-%d", n), rep.CRD, f, h)
		}
	}
	for _, f := range rep.Fields {
		if f.Verdict == holes.Leaks {
			tally.fixRefused += replayFix(t, dyn, raw, rep.CRD, f)
		}
	}
}

func holeResource(dyn dynamic.Interface, crd, obj map[string]interface{}) dynamic.ResourceInterface {
	spec, _ := crd["spec"].(map[string]interface{})
	names, _ := spec["names"].(map[string]interface{})
	gv, _ := runtimeschema.ParseGroupVersion(obj["apiVersion"].(string))
	ri := dyn.Resource(gv.WithResource(names["plural"].(string)))
	if spec["scope"] == "Cluster" {
		return ri
	}
	return ri.Namespace("default")
}

// replayHole creates the hole's first object and applies each step as a
// real update: every one must be accepted, and the stored object must end
// other than it began. It returns the updates made.
func replayHole(t *testing.T, ri dynamic.ResourceInterface, name, crd string, f holes.Field, h holes.Hole) int {
	t.Helper()
	ctx := context.Background()
	first := withName(h.Steps[0].Old, name)
	created, err := createRetrying(ctx, ri, first)
	if err != nil {
		t.Errorf("%s %s %s: the server refuses the first object: %v", crd, f.Field, h.Kind, err)
		return 0
	}
	defer func() { _ = ri.Delete(ctx, name, metav1.DeleteOptions{}) }()
	stored := created
	for i, s := range h.Steps {
		obj := withName(s.New, name)
		obj.SetResourceVersion(stored.GetResourceVersion())
		if stored, err = ri.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
			t.Errorf("false counterexample: %s %s %s via %s: the server refuses step %d: %v", crd, f.Field, h.Kind, h.Via, i+1, err)
			return i
		}
	}
	if reflect.DeepEqual(content(created.Object), content(stored.Object)) {
		t.Errorf("false counterexample: %s %s %s: the stored object ends as it began", crd, f.Field, h.Kind)
	}
	return len(h.Steps)
}

// content is an object without its metadata.
func content(obj map[string]interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

func withName(obj map[string]interface{}, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	u.SetName(name)
	return u
}

// replayFix updates the CRD with the field's fix: its markers set on the
// CRD as written, lowered by kubectl crd lower-mutability. Then each step
// the tool says the fix refuses is sent from an object created as the
// step's old one: the server must refuse it. It returns the steps refused.
func replayFix(t *testing.T, dyn dynamic.Interface, raw map[string]interface{}, crd string, f holes.Field) int {
	t.Helper()
	var markers []string
	for _, h := range f.Holes {
		if h.Fix != nil && h.Fix.Err == "" {
			markers = h.Fix.Markers
		}
	}
	if markers == nil {
		t.Logf("%s %s: no checked fix: %s", crd, f.Field, f.Holes[0].Fix.Err)
		return 0
	}
	if !updateCRDWithMarkers(t, dyn, raw, crd, f.Version, markers) {
		return 0
	}
	ctx := context.Background()
	refused, probed := 0, false
	for i, h := range f.Holes {
		if h.Fix == nil || h.Fix.Err != "" {
			continue
		}
		for j, s := range h.Steps {
			if !s.FixRefuses {
				continue
			}
			ri := holeResource(dyn, raw, s.Old)
			name := fmt.Sprintf("fix-%d-%d", i, j)
			if _, err := createRetrying(ctx, ri, withName(s.Old, name)); err != nil {
				t.Errorf("%s %s: the fixed CRD refuses the old object of step %d of %s: %v", crd, f.Field, j+1, h.Kind, err)
				continue
			}
			// The server serves the updated CRD a moment after the update:
			// the first step is retried until it is refused (it was accepted
			// before).
			timeout := time.Duration(0)
			if !probed {
				timeout = 30 * time.Second
			}
			err := updateUntilRefused(ctx, ri, withName(s.New, name), timeout)
			_ = ri.Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil {
				t.Errorf("%s %s: with %s the server still accepts step %d of %s: %v", crd, f.Field, strings.Join(markers, ", "), j+1, h.Kind, err)
				continue
			}
			probed = true
			refused++
		}
	}
	return refused
}

// updateUntilRefused sends the update (from the stored version) until the
// server refuses it as invalid, or timeout passes: nil when refused.
func updateUntilRefused(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		stored, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.SetResourceVersion(stored.GetResourceVersion())
		_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
		if apierrors.IsInvalid(err) {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				return fmt.Errorf("accepted")
			}
			return err
		}
		if err == nil {
			// Put the old object back before trying again.
			stored.SetResourceVersion("")
			_ = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
			if _, err := createRetrying(ctx, ri, stored); err != nil {
				return err
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// updateCRDWithMarkers sets the markers ("x-kubernetes-mutability:
// Immutable on spec.x[*].y") on a copy of raw, lowers it with the built
// binary, and updates the CRD on the server with the result.
func updateCRDWithMarkers(t *testing.T, dyn dynamic.Interface, raw map[string]interface{}, crd, version string, markers []string) bool {
	t.Helper()
	marked := runtime.DeepCopyJSON(raw)
	for _, m := range markers {
		ext, rest, _ := strings.Cut(m, ": ")
		mode, field, _ := strings.Cut(rest, " on ")
		node := schemaNodeOf(marked, version, field)
		if node == nil {
			t.Errorf("%s: no schema node for %q", crd, m)
			return false
		}
		node[ext] = mode
	}
	file := filepath.Join(t.TempDir(), "crd.yaml")
	b, err := yaml.Marshal(marked)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := NewTest(t).Run("kubectl-crd", "lower-mutability", "-f", file)
	if r.Code != 0 {
		t.Errorf("%s: lower-mutability of %s: exit %d\n%s", crd, strings.Join(markers, ", "), r.Code, r.Stderr)
		return false
	}
	var lowered map[string]interface{}
	if err := yaml.Unmarshal([]byte(r.Stdout), &lowered); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crds := dyn.Resource(crdGVR)
	current, err := crds.Get(ctx, crd, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.Object["spec"] = lowered["spec"]
	if _, err := crds.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
		t.Errorf("%s: the server refuses the CRD with %s: %v", crd, strings.Join(markers, ", "), err)
		return false
	}
	return true
}

// schemaNodeOf is the schema node as written of a field (spec.x[*].y) in a
// version.
func schemaNodeOf(crd map[string]interface{}, version, field string) map[string]interface{} {
	spec, _ := crd["spec"].(map[string]interface{})
	versions, _ := spec["versions"].([]interface{})
	var n map[string]interface{}
	for _, v := range versions {
		v, _ := v.(map[string]interface{})
		if v["name"] == version {
			sch, _ := v["schema"].(map[string]interface{})
			n, _ = sch["openAPIV3Schema"].(map[string]interface{})
		}
	}
	for _, part := range strings.Split(strings.ReplaceAll(field, "[*]", ".[*]"), ".") {
		if n == nil {
			return nil
		}
		switch {
		case part == "[*]" && n["items"] != nil:
			n, _ = n["items"].(map[string]interface{})
		case part == "[*]":
			n, _ = n["additionalProperties"].(map[string]interface{})
		default:
			props, _ := n["properties"].(map[string]interface{})
			n, _ = props[part].(map[string]interface{})
		}
	}
	return n
}

// deleteCRDAndWait deletes a CRD and waits until it is gone, so that the
// next release's CRD of the same name can be created.
func deleteCRDAndWait(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	crds := dyn.Resource(crdGVR)
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting %s: %v", name, err)
		return
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("%s not deleted: %v", name, err)
	}
}
