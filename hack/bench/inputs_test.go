package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	corpusfiles "github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus" // corpus is this package's type
)

// TestInputs builds a small input set from the corpus and checks what the
// benchmark relies on: every kind used, distinct names, one object in ten
// with an unknown field the server prunes, the old objects the same but for
// their revision label, a ResourceList of the CRDs and the objects, and a
// JSON schema per CRD version.
func TestInputs(t *testing.T) {
	dir := corpusfiles.Dir(t)
	// Three projects keep it short; hack/bench reads them all.
	c, err := loadCorpus(dir, []string{"gateway-api", "kueue", "argo-rollouts"}, 12)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d CRDs, %d kinds with samples the server accepts", len(c.crds), len(c.kinds))
	if len(c.crds) != 12 || len(c.kinds) != len(c.crds) {
		t.Fatalf("%d CRDs for %d kinds; want 12, a CRD per kind", len(c.crds), len(c.kinds))
	}
	n := 2 * len(c.kinds)
	// The small run's kind: a kind of the set by name (the default,
	// ServiceMonitor, is of a project not read here).
	smallKind := c.kinds[1]
	in, err := writeInputs(c, t.TempDir(), n, smallKind.String())
	if err != nil {
		t.Fatal(err)
	}
	objs := readObjects(t, in.Objects)
	olds := readObjects(t, in.Old)
	if len(objs) != n || len(olds) != n {
		t.Fatalf("%d objects, %d old ones; want %d", len(objs), len(olds), n)
	}
	byGK := map[runtimeschema.GroupKind]bool{}
	for _, cc := range c.crds {
		byGK[cc.crd.GroupKind()] = true
	}
	names := map[string]bool{}
	kinds := map[runtimeschema.GroupKind]bool{}
	var unknown, pruned int
	for i, obj := range objs {
		gv, _ := runtimeschema.ParseGroupVersion(obj["apiVersion"].(string))
		gk := runtimeschema.GroupKind{Group: gv.Group, Kind: obj["kind"].(string)}
		kinds[gk] = true
		md := obj["metadata"].(map[string]interface{})
		key := gk.String() + "/" + str(md["namespace"]) + "/" + str(md["name"])
		if names[key] {
			t.Errorf("object %d: %s twice", i, key)
		}
		names[key] = true
		if hasUnknown(obj) {
			unknown++
		}
		var crd *corpusCRD
		for _, cc := range c.crds {
			if cc.crd.GroupKind() == gk {
				crd = cc
			}
		}
		paths, err := crd.crd.Coerce(obj, false)
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		pruned += len(paths)

		old := olds[i]
		oldMD := old["metadata"].(map[string]interface{})
		if oldMD["labels"].(map[string]interface{})[revisionLabel] != "1" || md["labels"].(map[string]interface{})[revisionLabel] != "2" {
			t.Errorf("object %d: revision labels %v, %v", i, oldMD["labels"], md["labels"])
		}
		if str(oldMD["name"]) != str(md["name"]) {
			t.Errorf("object %d: old name %v, new %v", i, oldMD["name"], md["name"])
		}
	}
	if len(kinds) != len(c.kinds) {
		t.Errorf("%d kinds in the objects, want %d", len(kinds), len(c.kinds))
	}
	if want := (n + 6) / 10; unknown != want || in.Unknown != want {
		t.Errorf("%d objects with the unknown field (counted %d), want %d", unknown, in.Unknown, want)
	}
	// Samples are taken only when the server prunes nothing of them: what
	// is pruned is the unknown fields, bar those under preserved fields.
	if pruned == 0 || pruned > unknown {
		t.Errorf("the server prunes %d fields of %d objects with an unknown field", pruned, unknown)
	}

	rl := readObjects(t, in.ResourceList)
	if len(rl) != 1 || rl[0]["kind"] != "ResourceList" {
		t.Fatalf("resourcelist.yaml: %d documents", len(rl))
	}
	if items := rl[0]["items"].([]interface{}); len(items) != len(c.crds)+n {
		t.Errorf("ResourceList: %d items, want %d", len(items), len(c.crds)+n)
	}
	crdFiles, _ := filepath.Glob(filepath.Join(in.CRDDir, "*.yaml"))
	if len(crdFiles) != len(c.crds) {
		t.Errorf("%d CRD files, want %d", len(crdFiles), len(c.crds))
	}
	schemas, _ := filepath.Glob(filepath.Join(in.SchemaDir, "*", "*.json"))
	if len(schemas) < len(c.crds) {
		t.Errorf("%d JSON schemas for %d CRDs", len(schemas), len(c.crds))
	}

	// The CRD load: the first object of each kind, as the set has them
	// (read again: the check above pruned objs).
	objs = readObjects(t, in.Objects)
	perKind := readObjects(t, in.PerKind)
	if len(perKind) != len(c.kinds) {
		t.Fatalf("per-kind.yaml: %d objects, want %d", len(perKind), len(c.kinds))
	}
	for i, obj := range perKind {
		if !sameJSON(t, obj, objs[i]) {
			t.Errorf("per-kind.yaml: object %d is not the set's", i)
		}
	}
	checkSmall(t, c, in, objs, smallKind)
}

// checkSmall checks the small run's files: the set's first object of the
// kind, that kind's CRD file, and function configs whose crdPaths are
// the CRD directory and that file, relative to the set's directory.
func checkSmall(t *testing.T, c *corpus, in *inputSet, objs []map[string]interface{}, want runtimeschema.GroupKind) {
	t.Helper()
	sm := in.Small
	if sm.Kind != want.String() {
		t.Errorf("small run of %s, want %s", sm.Kind, want)
	}
	small := readObjects(t, sm.Object)
	if len(small) != 1 {
		t.Fatalf("%s: %d objects, want 1", sm.Object, len(small))
	}
	first := -1
	for i, obj := range objs {
		gv, _ := runtimeschema.ParseGroupVersion(obj["apiVersion"].(string))
		if first < 0 && (runtimeschema.GroupKind{Group: gv.Group, Kind: obj["kind"].(string)}) == want {
			first = i
		}
	}
	if first < 0 || !sameJSON(t, small[0], objs[first]) {
		t.Errorf("%s is not the set's first %s (object %d)", sm.Object, want, first)
	}
	own := readObjects(t, sm.OwnCRD)
	if len(own) != 1 || filepath.Dir(sm.OwnCRD) != in.CRDDir {
		t.Fatalf("%s: %d documents, want its CRD in %s", sm.OwnCRD, len(own), in.CRDDir)
	}
	spec := own[0]["spec"].(map[string]interface{})
	if g, k := spec["group"], spec["names"].(map[string]interface{})["kind"]; g != want.Group || k != want.Kind {
		t.Errorf("%s defines %v.%v, want %s", sm.OwnCRD, k, g, want)
	}
	for config, path := range map[string]string{sm.KRMAll: in.CRDDir, sm.KRMOwn: sm.OwnCRD} {
		if filepath.IsAbs(config) {
			t.Errorf("%s: absolute; the KRM function runs in %s", config, in.Dir)
		}
		fc := readObjects(t, filepath.Join(in.Dir, config))
		paths, _ := fc[0]["crdPaths"].([]interface{})
		if len(fc) != 1 || fc[0]["kind"] != "CRDCheck" || len(paths) != 1 {
			t.Fatalf("%s: %v", config, fc)
		}
		p, _ := paths[0].(string)
		if filepath.IsAbs(p) || filepath.Clean(filepath.Join(in.Dir, p)) != path {
			t.Errorf("%s: crdPaths %q, want %s relative to %s", config, p, path, in.Dir)
		}
	}
}

func sameJSON(t *testing.T, a, b map[string]interface{}) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

func str(v interface{}) string { s, _ := v.(string); return s }

func hasUnknown(obj map[string]interface{}) bool {
	if spec, ok := obj["spec"].(map[string]interface{}); ok {
		_, has := spec[unknownField]
		return has
	}
	_, has := obj[unknownField]
	return has
}

func readObjects(t *testing.T, name string) []map[string]interface{} {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := documents(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]interface{}
	for _, js := range docs {
		var obj map[string]interface{}
		if err := utiljson.Unmarshal(js, &obj); err != nil {
			t.Fatal(err)
		}
		out = append(out, obj)
	}
	return out
}

// TestJSONSchema: the conversion kubeconform's schemas get.
func TestJSONSchema(t *testing.T) {
	in := `{"type":"object","properties":{
	  "spec":{"type":"object","properties":{
	    "port":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
	    "note":{"type":"string","nullable":true},
	    "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string"}}},
	    "list":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string"}}}}}}}}`
	want := `{"properties":{"spec":{"additionalProperties":false,"properties":{` +
		`"free":{"properties":{"a":{"type":"string"}},"type":"object","x-kubernetes-preserve-unknown-fields":true},` +
		`"list":{"items":{"additionalProperties":false,"properties":{"b":{"type":"string"}},"type":"object"},"type":"array"},` +
		`"note":{"nullable":true,"type":["string","null"]},` +
		`"port":{"oneOf":[{"type":"string"},{"type":"integer"}],"x-kubernetes-int-or-string":true}},"type":"object"}},"type":"object"}`
	var s map[string]interface{}
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(toJSONSchema(s, true))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("got  %s\nwant %s", got, strings.TrimSpace(want))
	}
}
