package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/kepimmutable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

const lowerGroup = "lower.e2e.example.com"

// markedSchema is one schema with mutability markers and the updates to try.
type markedSchema struct {
	name   string
	schema string // openAPIV3Schema, YAML
	pairs  [][2]string
	// family is the KEP example or the update beyond them the schema is
	// of (one of its modes, list types or map types).
	family string
}

// markedSchemas are every KEP example (every mode, list type and map type)
// and the updates beyond them (optional parents, atomic lists, ...).
func markedSchemas(t *testing.T) []markedSchema {
	cases, err := kepimmutable.Cases()
	if err != nil {
		t.Fatal(err)
	}
	var out []markedSchema
	index := map[string]int{}
	for _, c := range cases {
		i, ok := index[c.Schema]
		if !ok {
			i = len(out)
			index[c.Schema] = i
			// "Example N ..., MODE, list type \"...\"": the family is the part before MODE.
			family, _, _ := strings.Cut(c.Name, `, list type "`)
			family = family[:max(strings.LastIndex(family, ", "), 0)]
			out = append(out, markedSchema{name: c.Name, schema: c.Schema, family: family})
		}
		out[i].pairs = append(out[i].pairs, [2]string{c.Old, c.New})
	}
	beyond, err := kepimmutable.Beyond()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range beyond {
		for _, mode := range u.Modes {
			out = append(out, markedSchema{name: u.Name + " " + mode, schema: u.SchemaFor(mode), pairs: u.Pairs(), family: u.Name})
		}
	}
	return out
}

// representativeSchemas is one schema of each family: of the k-th family,
// its k-th (modulo its size), so that the modes, list types and map types
// take turns.
func representativeSchemas(all []markedSchema) []markedSchema {
	var out []markedSchema
	k, member := -1, 0
	for i, ms := range all {
		if i == 0 || ms.family != all[i-1].family {
			k++
			size := 1
			for size < len(all)-i && all[i+size].family == ms.family {
				size++
			}
			member = k % size
		}
		if member == 0 {
			out = append(out, ms)
		}
		member--
	}
	return out
}

// lowerCRD is a CRD of kind LowerN with the schema, as YAML.
func lowerCRD(t *testing.T, n int, schema string) string {
	crd, err := lowerCRDText(n, schema)
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// lowerCRDText is lowerCRD's, for any goroutine.
func lowerCRDText(n int, schema string) (string, error) {
	var s map[string]interface{}
	if err := yaml.Unmarshal([]byte(schema), &s); err != nil {
		return "", err
	}
	crd := map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]interface{}{"name": fmt.Sprintf("lower%ds.%s", n, lowerGroup)},
		"spec": map[string]interface{}{
			"group": lowerGroup,
			"names": map[string]interface{}{"kind": fmt.Sprintf("Lower%d", n), "plural": fmt.Sprintf("lower%ds", n)},
			"scope": "Namespaced",
			"versions": []interface{}{map[string]interface{}{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]interface{}{"openAPIV3Schema": s},
			}},
		},
	}
	b, err := yaml.Marshal(crd)
	return string(b), err
}

// boundSchema gives every list, map and string a size the test objects fit
// in: what lower-mutability asks for when a rule is over the cost budget.
func boundSchema(schema string) (string, error) {
	var s map[string]interface{}
	if err := yaml.Unmarshal([]byte(schema), &s); err != nil {
		return "", err
	}
	var bound func(s map[string]interface{})
	bound = func(s map[string]interface{}) {
		switch {
		case s["type"] == "array":
			s["maxItems"] = 8
		case s["type"] == "string" && s["maxLength"] == nil:
			s["maxLength"] = 16
		case s["type"] == "object" && s["additionalProperties"] != nil:
			s["maxProperties"] = 8
		}
		if props, ok := s["properties"].(map[string]interface{}); ok {
			for _, p := range props {
				bound(p.(map[string]interface{}))
			}
		}
		for _, k := range []string{"items", "additionalProperties"} {
			if c, ok := s[k].(map[string]interface{}); ok {
				bound(c)
			}
		}
	}
	bound(s)
	b, err := yaml.Marshal(s)
	return string(b), err
}

func lowerObject(n int, name, fields string) (*unstructured.Unstructured, error) {
	obj := map[string]interface{}{}
	if err := json.Unmarshal([]byte(fields), &obj); err != nil {
		return nil, err
	}
	obj["apiVersion"], obj["kind"] = lowerGroup+"/v1", fmt.Sprintf("Lower%d", n)
	obj["metadata"] = map[string]interface{}{"name": name, "namespace": "default"}
	return &unstructured.Unstructured{Object: obj}, nil
}

// For a schema of every KEP example and of every update beyond them (the
// modes, list types and map types taking turns), the CRD that
// lower-mutability prints is created on the real API server under kubectl's
// strict validation, and the real update old -> new is refused exactly
// when check-update refuses it offline from the CRD with the markers.
// TestLowerMutabilityLiveSweep tries every schema (every mode, list type
// and map type of each); the KEP suite's cases (examples/kep-immutable) go
// to the real server in TestTestSuitesAgainstServer.
func TestLowerMutabilityLive(t *testing.T) {
	requireOwnCluster(t)
	lowerMutabilityLive(t, representativeSchemas(markedSchemas(t)), 0)
}

// TestLowerMutabilityLiveSweep is TestLowerMutabilityLive's property for
// every KEP example in every mode, list type and map type, and every update
// beyond them in every mode: some 1,800 updates against 52 CRDs, run by
// .ci/run's matrix target.
func TestLowerMutabilityLiveSweep(t *testing.T) {
	matrixSweep(t)
	requireOwnCluster(t)
	lowerMutabilityLive(t, markedSchemas(t), 100)
}

// lowerMutabilityLive tries each schema (lowerN's CRD for the n-th, n from
// first on: the two tests' CRDs do not meet while being deleted).
func lowerMutabilityLive(t *testing.T, schemas []markedSchema, first int) {
	x := NewTest(t)
	kubectl := kubectls[0].Path
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// Some two thousand requests: client-go's default of 5 a second would take minutes.
	cfg.QPS, cfg.Burst = 1000, 1000
	client := dynamic.NewForConfigOrDie(cfg)
	tmp := t.TempDir()

	// The markers themselves do not install: strict validation refuses them.
	markers := filepath.Join(tmp, "markers.yaml")
	if err := os.WriteFile(markers, []byte(lowerCRD(t, first, schemas[0].schema)), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := x.Run(kubectl, "apply", "--dry-run=server", "-f", markers); r.Code == 0 || !strings.Contains(r.Stderr, `unknown field "spec.versions[0].schema.openAPIV3Schema.properties.foo.x-kubernetes-mutability"`) {
		t.Errorf("kubectl apply of the markers: exit %d\n%s", r.Code, r.Stderr)
	}

	// Each schema has a CRD of its own: several are tried at once, since
	// most of the time goes to waiting for kubectl and the server.
	results := make([]lowerResult, len(schemas))
	inTurn(lowerWorkers, len(schemas), func(_, n int) {
		results[n] = tryLowered(t, x, client, kubectl, tmp, first+n, schemas[n])
	})
	updates, refusals, bounded := 0, 0, 0
	var crdFiles []string
	for _, r := range results {
		updates += r.updates
		refusals += r.refusals
		if r.bounded {
			bounded++
		}
		if r.crdFile != "" {
			crdFiles = append(crdFiles, r.crdFile)
		}
	}
	t.Logf("%d schemas (%d bounded for the cost budget), %d updates, %d refused by the server", len(schemas), bounded, updates, refusals)
	if refusals == 0 || refusals == updates {
		t.Error("the updates do not tell refusals from allowed updates")
	}
	t.Cleanup(func() {
		for _, f := range crdFiles {
			x.Run(kubectl, "delete", "--wait=false", "-f", f)
		}
	})
}

// The hole of a hand-written self == oldSelf: it runs only where the field
// is on both sides, so unsetting a field (or its optional parent) and
// setting it again passes. The lowered rules refuse it, on the real server,
// with real updates.
func TestLowerMutabilityUnsetThenSet(t *testing.T) {
	requireOwnCluster(t)
	x := NewTest(t)
	kubectl := kubectls[0].Path
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := dynamic.NewForConfigOrDie(cfg)
	ctx := context.Background()
	tmp := t.TempDir()
	const schema = `
type: object
properties:
  spec:
    type: object
    properties:
      parent:
        type: object
        properties:
          zone: {type: string, MARK}
          size: {type: integer}`
	for i, tc := range []struct {
		name, mark string
		lowered    bool
		// The sequence of specs, and whether the server takes each.
		steps []string
		want  []bool
	}{
		{"hand-written self == oldSelf: the field unset then set", "x-kubernetes-validations: [{rule: self == oldSelf}]", false,
			[]string{`{"parent":{"zone":"a"}}`, `{"parent":{}}`, `{"parent":{"zone":"b"}}`}, []bool{true, true, true}},
		{"hand-written self == oldSelf: the parent unset then set", "x-kubernetes-validations: [{rule: self == oldSelf}]", false,
			[]string{`{"parent":{"zone":"a"}}`, `{}`, `{"parent":{"zone":"b"}}`}, []bool{true, true, true}},
		{"RemoveOnly: the field unset then set", "x-kubernetes-mutability: RemoveOnly", true,
			[]string{`{"parent":{"zone":"a"}}`, `{"parent":{}}`, `{"parent":{"zone":"b"}}`, `{"parent":{"zone":"a"}}`}, []bool{true, true, false, false}},
		{"RemoveOnly: the parent unset then set", "x-kubernetes-mutability: RemoveOnly", true,
			[]string{`{"parent":{"zone":"a","size":1}}`, `{}`, `{"parent":{"zone":"b"}}`, `{"parent":{"size":2}}`}, []bool{true, true, false, true}},
		{"Immutable: the parent cannot go", "x-kubernetes-mutability: Immutable", true,
			[]string{`{"parent":{"zone":"a"}}`, `{}`, `{"parent":{}}`, `{"parent":{"zone":"a","size":3}}`}, []bool{true, false, false, true}},
	} {
		n := 1000 + i
		crd := lowerCRD(t, n, strings.Replace(schema, "MARK", tc.mark, 1))
		file := filepath.Join(tmp, fmt.Sprintf("crd-%d.yaml", n))
		if err := os.WriteFile(file, []byte(crd), 0o600); err != nil {
			t.Fatal(err)
		}
		// check-update decides from the CRD as written: the markers, or the hand-written rule.
		asWritten := filepath.Join(tmp, fmt.Sprintf("written-%d.yaml", n))
		if err := os.WriteFile(asWritten, []byte(crd), 0o600); err != nil {
			t.Fatal(err)
		}
		if tc.lowered {
			r := x.Run("kubectl-crd", "lower-mutability", "-f", file)
			if r.Code != 0 {
				t.Fatalf("%s: lower-mutability: exit %d\n%s", tc.name, r.Code, r.Stderr)
			}
			if err := os.WriteFile(file, []byte(r.Stdout), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if r := x.Run(kubectl, "apply", "-f", file); r.Code != 0 {
			t.Fatalf("%s: kubectl apply: exit %d\n%s", tc.name, r.Code, r.Stderr)
		}
		t.Cleanup(func() { x.Run(kubectl, "delete", "--wait=false", "-f", file) })
		if r := x.Run(kubectl, "wait", "--for=condition=Established", "--timeout=60s", fmt.Sprintf("crd/lower%ds.%s", n, lowerGroup)); r.Code != 0 {
			t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
		}
		ri := client.Resource(runtimeschema.GroupVersionResource{Group: lowerGroup, Version: "v1", Resource: fmt.Sprintf("lower%ds", n)}).Namespace("default")
		current := ""
		for j, spec := range tc.steps {
			obj, err := lowerObject(n, "seq", `{"spec":`+spec+`}`)
			if err != nil {
				t.Fatal(err)
			}
			if j == 0 {
				if _, err := createRetrying(ctx, ri, obj); err != nil {
					t.Fatalf("%s: create: %v", tc.name, err)
				}
				current = spec
				continue
			}
			old, _ := lowerObject(n, "seq", `{"spec":`+current+`}`)
			oldFile, newFile := filepath.Join(tmp, "old.json"), filepath.Join(tmp, "new.json")
			writeJSON(t, oldFile, old.Object)
			writeJSON(t, newFile, obj.Object)
			offline := x.Run("kubectl-crd", "check-update", "--offline", "--crd-file", asWritten, "--old", oldFile, "-f", newFile)
			stored, err := ri.Get(ctx, "seq", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			obj.SetResourceVersion(stored.GetResourceVersion())
			_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
			if (err == nil) != (offline.Code == 0) {
				t.Errorf("%s: step %d, %s -> %s: the server accepts: %v (%v); check-update exits %d\n%s", tc.name, j, current, spec, err == nil, err, offline.Code, offline.Stdout)
			}
			if (err == nil) != tc.want[j] {
				t.Errorf("%s: step %d, %s -> %s: accepted %v, want %v (%v)", tc.name, j, current, spec, err == nil, tc.want[j], err)
			}
			if err == nil {
				current = spec
			}
		}
	}
}

// markEverything adds mutability markers under spec: with leaves, every
// field (modes in turn), every list and map (key mutability); without,
// each field right under spec only.
func markEverything(s map[string]interface{}, leaves bool) int {
	props, _ := s["properties"].(map[string]interface{})
	spec, _ := props["spec"].(map[string]interface{})
	if spec == nil {
		return 0
	}
	modes := []string{"Immutable", "AddOnly", "RemoveOnly"}
	n := 0
	var mark func(s map[string]interface{}, depth int)
	mark = func(s map[string]interface{}, depth int) {
		collection := s["type"] == "array" || s["type"] == "object" && s["additionalProperties"] != nil && s["properties"] == nil
		switch {
		case !leaves && depth == 1 && collection:
			s["x-kubernetes-mutability"] = "Immutable"
			n++
			return
		case !leaves && depth == 1:
			s["x-kubernetes-mutability"] = modes[n%3]
			n++
			return
		case leaves && collection:
			s["x-kubernetes-key-mutability"] = modes[n%3]
			n++
		case leaves && depth > 0 && s["properties"] == nil:
			s["x-kubernetes-mutability"] = modes[n%3]
			n++
		}
		if p, ok := s["properties"].(map[string]interface{}); ok {
			for _, k := range sortedKeys(p) {
				if c, ok := p[k].(map[string]interface{}); ok {
					mark(c, depth+1)
				}
			}
		}
		for _, k := range []string{"items", "additionalProperties"} {
			if c, ok := s[k].(map[string]interface{}); ok {
				mark(c, depth+1)
			}
		}
	}
	mark(spec, 0)
	return n
}

func sortedKeys(m map[string]interface{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Markers on every field under spec of the largest CRDs of the corpus: each
// lowered CRD is accepted by the real server, or refused by the lowering
// itself with a clear error; never accepted by the tool and refused by the
// server.
func TestLowerMutabilityCorpus(t *testing.T) {
	corpusSweep(t)
	dir := corpus.Dir(t)
	dyn := dynamicClient(t)
	ctx := context.Background()
	files := corpus.CRDFiles(t, dir)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Bytes > files[j].Bytes })
	accepted, refusedByTool, tried, crds := 0, 0, 0, 0
	for _, f := range files {
		// Markers on every field of a CRD of megabytes make thousands of
		// rules, which the server's validation compiles for a minute: three
		// of them; the fields right under spec of eight.
		if crds >= 8 {
			break
		}
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil || len(docs) != 1 || docs[0].Object["apiVersion"] != "apiextensions.k8s.io/v1" {
			continue
		}
		crds++
		for _, leaves := range []bool{false, true} {
			if leaves && crds > 3 {
				continue
			}
			obj := runtime.DeepCopyJSON(docs[0].Object)
			spec, _ := obj["spec"].(map[string]interface{})
			versions, _ := spec["versions"].([]interface{})
			marked := 0
			for _, v := range versions {
				v, _ := v.(map[string]interface{})
				sch, _ := v["schema"].(map[string]interface{})
				if root, ok := sch["openAPIV3Schema"].(map[string]interface{}); ok {
					marked += markEverything(root, leaves)
				}
			}
			if marked == 0 {
				continue
			}
			tried++
			start := time.Now()
			res, err := lower.CRD(obj, strategy.Validators{})
			var cost *lower.CostError
			switch {
			case errors.As(err, &cost):
				refusedByTool++
				if len(cost.Bounds) == 0 && !strings.Contains(cost.Detail, "cost") {
					t.Errorf("%s: a cost error without a bound to add: %v", f.LocalPath, err)
				}
				t.Logf("%s (%d markers, leaves %v): refused by the lowering in %v: %.300s", f.LocalPath, marked, leaves, time.Since(start).Round(time.Millisecond), err)
				continue
			case errors.As(err, new(*lower.UnreachableError)) || err != nil && strings.Contains(err.Error(), "cannot be written in CEL"):
				refusedByTool++
				t.Logf("%s: refused by the lowering: %v", f.LocalPath, err)
				continue
			case err != nil:
				t.Errorf("%s (%d markers, leaves %v): %v", f.LocalPath, marked, leaves, err)
				continue
			}
			theirs, err := serverRefusal(ctx, dyn, res.Object)
			if err != nil {
				t.Errorf("%s: dry-run create: %v", f.LocalPath, err)
				continue
			}
			if len(theirs) > 0 {
				t.Errorf("%s (%d markers, leaves %v): lowered by the tool, refused by the server: %.2000s", f.LocalPath, marked, leaves, strings.Join(theirs, "\n"))
				continue
			}
			accepted++
			t.Logf("%s (%d markers, %d rules, leaves %v): accepted by the server", f.LocalPath, marked, len(res.Rules), leaves)
		}
	}
	t.Logf("%d lowered CRDs: %d accepted by the server, %d refused by the lowering", tried, accepted, refusedByTool)
	if tried == 0 {
		t.Error("no CRD was tried")
	}
}

// lowerWorkers is how many schemas TestLowerMutabilityLive tries at once.
const lowerWorkers = 4

// lowerResult is what one schema of TestLowerMutabilityLive counted.
type lowerResult struct {
	updates, refusals int
	bounded           bool   // bounded for the CEL cost budget
	crdFile           string // the lowered CRD, applied
}

// tryLowered lowers the markers of schema n, creates the lowered CRD on the
// server and an object per old value, and compares each update's verdict
// with check-update's on the markers. Safe to call from several goroutines:
// it reports with t.Error and returns at the first failure.
func tryLowered(t *testing.T, x *Test, client dynamic.Interface, kubectl, tmp string, n int, ms markedSchema) (res lowerResult) {
	ctx := context.Background()
	marked := filepath.Join(tmp, fmt.Sprintf("marked-%d.yaml", n))
	write := func(schema string, err error) bool {
		if err == nil {
			schema, err = lowerCRDText(n, schema)
		}
		if err == nil {
			err = os.WriteFile(marked, []byte(schema), 0o600)
		}
		if err != nil {
			t.Errorf("%s: %v", ms.name, err)
		}
		return err == nil
	}
	// run is x.Run, for any goroutine: a program that does not start is
	// an error of the test, and the code -1.
	run := func(name string, args ...string) Result {
		r, err := x.run(name, args...)
		if err != nil {
			t.Errorf("%s: running %s: %v", ms.name, name, err)
			r.Code = -1
		}
		return r
	}
	if !write(ms.schema, nil) {
		return res
	}
	r := run("kubectl-crd", "lower-mutability", "-f", marked)
	if r.Code == 2 && strings.Contains(r.Stderr, "over the API server's CEL cost budget") {
		res.bounded = true
		if !write(boundSchema(ms.schema)) {
			return res
		}
		r = run("kubectl-crd", "lower-mutability", "-f", marked)
	}
	if r.Code != 0 {
		t.Errorf("%s: lower-mutability: exit %d\n%s", ms.name, r.Code, r.Stderr)
		return res
	}
	lowered := filepath.Join(tmp, fmt.Sprintf("lowered-%d.yaml", n))
	if err := os.WriteFile(lowered, []byte(r.Stdout), 0o600); err != nil {
		t.Error(err)
		return res
	}
	res.crdFile = lowered
	if r := run(kubectl, "apply", "-f", lowered); r.Code != 0 {
		t.Errorf("%s: kubectl apply of the lowered CRD: exit %d\n%s\n%s", ms.name, r.Code, r.Stderr, r.Stdout)
		return res
	}
	if r := run(kubectl, "wait", "--for=condition=Established", "--timeout=60s", fmt.Sprintf("crd/lower%ds.%s", n, lowerGroup)); r.Code != 0 {
		t.Errorf("%s: kubectl wait: exit %d\n%s", ms.name, r.Code, r.Stderr)
		return res
	}
	ri := client.Resource(runtimeschema.GroupVersionResource{Group: lowerGroup, Version: "v1", Resource: fmt.Sprintf("lower%ds", n)}).Namespace("default")

	// One stored object per old value; each update is a dry run against it.
	olds := map[string]string{}
	versions := map[string]string{} // resourceVersion by name: dry runs do not change it
	var oldDocs, newDocs []string
	for _, p := range ms.pairs {
		name, ok := olds[p[0]]
		if !ok {
			name = fmt.Sprintf("o-%d", len(olds))
			olds[p[0]] = name
			obj, err := lowerObject(n, name, p[0])
			if err != nil {
				t.Error(err)
				return res
			}
			created, err := createRetrying(ctx, ri, obj)
			if err != nil {
				t.Errorf("%s: creating %s: %v", ms.name, p[0], err)
				return res
			}
			versions[name] = created.GetResourceVersion()
			b, _ := json.Marshal(obj.Object)
			oldDocs = append(oldDocs, string(b))
		}
		obj, err := lowerObject(n, name, p[1])
		if err != nil {
			t.Error(err)
			return res
		}
		b, _ := json.Marshal(obj.Object)
		newDocs = append(newDocs, string(b))
	}
	oldFile, newFile := filepath.Join(tmp, fmt.Sprintf("old-%d.yaml", n)), filepath.Join(tmp, fmt.Sprintf("new-%d.yaml", n))
	for f, docs := range map[string][]string{oldFile: oldDocs, newFile: newDocs} {
		if err := os.WriteFile(f, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o600); err != nil {
			t.Error(err)
			return res
		}
	}
	r = run("kubectl-crd", "check-update", "--offline", "--crd-file", marked, "--old", oldFile, "-f", newFile, "-o", "json")
	var report struct {
		Items []struct {
			Violations []json.RawMessage `json:"violations"`
		} `json:"items"`
	}
	if r.Code > 1 || json.Unmarshal([]byte(r.Stdout), &report) != nil || len(report.Items) != len(ms.pairs) {
		t.Errorf("%s: check-update: exit %d\n%s\n%s", ms.name, r.Code, r.Stdout, r.Stderr)
		return res
	}
	for i, p := range ms.pairs {
		nu, _ := lowerObject(n, olds[p[0]], p[1])
		nu.SetResourceVersion(versions[olds[p[0]]])
		_, serverErr := ri.Update(ctx, nu, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		res.updates++
		offline := len(report.Items[i].Violations) > 0
		if serverErr != nil {
			res.refusals++
		}
		if offline != (serverErr != nil) {
			t.Errorf("%s: %s -> %s: check-update on the markers refuses: %v; the server with the lowered CRD says: %v", ms.name, p[0], p[1], offline, serverErr)
		} else if serverErr != nil && !strings.Contains(serverErr.Error(), "mutability") {
			t.Errorf("%s: %s -> %s: refused, but not by a lowered rule: %v", ms.name, p[0], p[1], serverErr)
		}
	}
	return res
}
