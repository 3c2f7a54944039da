package crdindex

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// twoCRDs holds a CRD, an object that is none, a key written twice (a
// warning) and a List with a CRD.
const twoCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer, maximum: 10.0, minimum: 1.5}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {a: "1", a: "2"}
---
apiVersion: v1
kind: List
items:
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: gizmos.example.com}
  spec: {group: example.com, names: {kind: Gizmo, plural: gizmos}, scope: Cluster, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}
`

// want is what the reader makes of data: the CRDs' objects and sources,
// and the warnings.
func want(t *testing.T, name string, data []byte) ([]*document.Document, []Warning) {
	t.Helper()
	docs, err := document.Read(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	var crds []*document.Document
	var warnings []Warning
	for _, d := range docs {
		holders := d.Objects()
		if d.IsList() {
			holders = append([]*document.Document{d}, holders...)
		}
		for _, o := range holders {
			for _, w := range o.Warnings {
				warnings = append(warnings, Warning{Object: document.Ref(o.Object), Source: w.Source, Message: w.Msg})
			}
		}
		for _, o := range d.Objects() {
			if ref := document.Ref(o.Object); schema.IsCRD(ref.APIVersion, ref.Kind) {
				crds = append(crds, o)
			}
		}
	}
	return crds, warnings
}

// keepAll decides the verdicts not known, as a run does, and keeps the
// index (File.Keep).
func keepAll(idx *File) {
	for i, e := range idx.Entries {
		if !idx.Checked(i) {
			refusal, warnings, _ := e.Verdict(strategy.Validators{})
			idx.SetVerdict(i, refusal, warnings)
		}
	}
	idx.Keep()
}

// check compares an index with the reader's reading of data; cached says
// whether its objects must come from the cache. It then keeps the index,
// as a run does.
func check(t *testing.T, idx *File, name string, data []byte, cached bool) {
	t.Helper()
	defer keepAll(idx)
	crds, warnings := want(t, name, data)
	if !reflect.DeepEqual(idx.Warnings, warnings) {
		t.Errorf("%s: warnings %v, want %v", name, idx.Warnings, warnings)
	}
	if len(idx.Entries) != len(crds) {
		t.Fatalf("%s: %d entries, want %d", name, len(idx.Entries), len(crds))
	}
	for i, e := range idx.Entries {
		if cached != (e.object == nil) {
			t.Errorf("%s: entry %d read from the cache: %v, want %v", name, i, e.object == nil, cached)
		}
		d, err := e.Document()
		if err != nil {
			t.Fatal(err)
		}
		if e.GroupKind != Key(crds[i].Object) || d.Source != crds[i].Source || !reflect.DeepEqual(d.Object, crds[i].Object) {
			t.Errorf("%s: entry %d: %v %v, want the reader's %v %v (objects equal: %v)", name, i, e.GroupKind, d.Source,
				Key(crds[i].Object), crds[i].Source, reflect.DeepEqual(d.Object, crds[i].Object))
		}
	}
}

func TestCacheReadsAsTheReader(t *testing.T) {
	c := Cache{Dir: t.TempDir(), Build: "test"}
	data := []byte(twoCRDs)
	// Not kept while the server's verdict on a CRD is unknown.
	idx, err := c.read("crds.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	idx.SetVerdict(0, "", nil)
	idx.Keep()
	if idx, err = c.read("crds.yaml", data); err != nil {
		t.Fatal(err)
	}
	check(t, idx, "crds.yaml", data, false)
	if idx.Entries[0].GroupKind.Kind != "Widget" || idx.Entries[1].GroupKind.Kind != "Gizmo" || len(idx.Warnings) != 1 {
		t.Fatalf("entries %v, warnings %v", idx.Entries, idx.Warnings)
	}
	idx, err = c.read("crds.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	check(t, idx, "crds.yaml", data, true)
	// Another name or content, another build: not the same index.
	for _, other := range []struct {
		c    Cache
		name string
		data []byte
	}{{c, "other.yaml", data}, {c, "crds.yaml", append([]byte("# changed\n"), data...)}, {Cache{Dir: c.Dir, Build: "other"}, "crds.yaml", data}} {
		idx, err := other.c.read(other.name, other.data)
		if err != nil {
			t.Fatal(err)
		}
		check(t, idx, other.name, other.data, false)
	}
}

// Every CRD file of the corpus reads from the cache as the reader reads it
// (a sample, every set read, unless KUBECTL_CRD_CORPUS_ALL=1).
func TestCacheCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("every corpus CRD checked by the server's validation: skipped with -short")
	}
	dir := corpus.Dir(t)
	c := Cache{Dir: t.TempDir(), Build: "test"}
	for _, f := range corpus.Sample(t, corpus.CRDFiles(t, dir)) {
		name := filepath.Join(dir, f.LocalPath)
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		first, err := c.read(name, data)
		if err != nil {
			continue // what the reader refuses is not kept: nothing to compare
		}
		keepAll(first)
		idx, err := c.read(name, data)
		if err != nil {
			t.Fatal(err)
		}
		check(t, idx, name, data, true)
		// The server's verdict on each CRD is kept as decided.
		for i, e := range idx.Entries {
			if e.refusal != first.Entries[i].refusal || !e.checked {
				t.Errorf("%s: entry %d: refusal %q kept as %q", name, i, first.Entries[i].refusal, e.refusal)
			}
		}
	}
}

// A cache that is damaged, or emptied during the run, is as none: the
// file is parsed again.
func TestCacheDamaged(t *testing.T) {
	c := Cache{Dir: t.TempDir(), Build: "test"}
	data := []byte(twoCRDs)
	first, err := c.read("crds.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	keepAll(first)
	dir := c.path(c.key("crds.yaml", data))
	idx, err := c.read("crds.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	check(t, idx, "crds.yaml", data, true) // read again from the file
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"format": "crdindex/0"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if idx, err = c.read("crds.yaml", data); err != nil {
		t.Fatal(err)
	}
	check(t, idx, "crds.yaml", data, false)
	// A bad file is the reader's error, and nothing is kept of it.
	bad := Cache{Dir: t.TempDir(), Build: "test"}
	if _, err := bad.read("bad.yaml", []byte("a: [\n")); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("bad YAML: %v", err)
	}
	if entries, _ := os.ReadDir(bad.Dir); len(entries) != 0 {
		t.Errorf("bad YAML kept: %v", entries)
	}
}

// Without a build (or a directory), nothing is written.
func TestCacheOff(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	idx, err := c.read("crds.yaml", []byte(twoCRDs))
	if err != nil {
		t.Fatal(err)
	}
	check(t, idx, "crds.yaml", []byte(twoCRDs), false)
	if entries, _ := os.ReadDir(c.Dir); len(entries) != 0 {
		t.Errorf("written without a build: %v", entries)
	}
	t.Setenv(CacheDirEnv, "off")
	if DefaultDir() != "" {
		t.Errorf("%s=off: %q", CacheDirEnv, DefaultDir())
	}
}

// Runs that store the same index at once each get it whole; one copy is
// kept, and no temporary directory is left.
func TestCacheConcurrent(t *testing.T) {
	c := Cache{Dir: t.TempDir(), Build: "test"}
	data := []byte(twoCRDs)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx, err := c.read("crds.yaml", data)
			if err != nil {
				t.Error(err)
				return
			}
			keepAll(idx)
			for _, e := range idx.Entries {
				if _, err := e.Document(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	key := c.key("crds.yaml", data)
	entries, err := os.ReadDir(filepath.Dir(c.path(key)))
	if err != nil || len(entries) != 1 || entries[0].Name() != key {
		t.Errorf("the cache holds %v (%v), want %s alone", entries, err, key)
	}
}

// ReadFile reads a file as Read reads its content.
func TestCacheReadFile(t *testing.T) {
	c := Cache{Dir: t.TempDir(), Build: "test"}
	name := filepath.Join(t.TempDir(), "crds.yaml")
	if err := os.WriteFile(name, []byte(twoCRDs), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cached := range []bool{false, true} {
		idx, err := c.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		check(t, idx, name, []byte(twoCRDs), cached)
	}
	idx, err := c.read(name, []byte(twoCRDs))
	if err != nil {
		t.Fatal(err)
	}
	check(t, idx, name, []byte(twoCRDs), true) // the same key
	if _, err := c.ReadFile(filepath.Join(t.TempDir(), "none.yaml")); err == nil {
		t.Error("a file that does not exist: no error")
	}
}
