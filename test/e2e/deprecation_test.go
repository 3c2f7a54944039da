package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// deprecationCRDs are CRDs whose versions make the server's default
// warning choose: a GA version newer than a later major's beta, a
// deprecated newest version (no version to name), an unserved newer
// version (not named). (An empty deprecationWarning the server refuses.)
var deprecationCRDs = []string{`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: orderings.deprecations.example.com}
spec:
  group: deprecations.example.com
  scope: Namespaced
  names: {plural: orderings, singular: ordering, kind: Ordering}
  versions:
  - {name: v1alpha1, served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1beta1, served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v2beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: newests.deprecations.example.com}
spec:
  group: deprecations.example.com
  scope: Cluster
  names: {plural: newests, singular: newest, kind: Newest}
  versions:
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: true, storage: true, deprecated: true, schema: {openAPIV3Schema: {type: object}}}
`, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: unserveds.deprecations.example.com}
spec:
  group: deprecations.example.com
  scope: Namespaced
  names: {plural: unserveds, singular: unserved, kind: Unserved}
  versions:
  - {name: v1beta1, served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v2, served: false, storage: false, schema: {openAPIV3Schema: {type: object}}}
`}

// TestDeprecationWarningsAsServer: for every version of every CRD of the
// shipped examples that deprecates one, and of deprecationCRDs, the
// warnings the test API server returns with a request for an object of
// that version are the engine's (schema.CRD.DeprecationWarning): the one
// warning of a deprecated version, none of another. And kubectl crd prune
// gives the server's warning of each such object of the examples, byte for
// byte, as the item's deprecated.
func TestDeprecationWarningsAsServer(t *testing.T) {
	x := NewTest(t)
	var docs []*document.Document
	for i, text := range deprecationCRDs {
		d, err := document.Read(strings.NewReader(text), fmt.Sprintf("deprecationCRDs[%d]", i))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d...)
	}
	examples := exampleDeprecationCRDs(t)
	if len(examples) == 0 {
		t.Fatal("no example deprecates a version: the examples do not test the warning")
	}
	docs = append(docs, examples...)
	compared := deprecationParity(t, docs, func(d *document.Document, objects []map[string]interface{}, server []string) {
		if !slices.ContainsFunc(examples, func(e *document.Document) bool { return e == d }) {
			return
		}
		checkPruneDeprecated(t, x, d, objects, server)
	})
	t.Logf("%d versions compared", compared)
}

// TestDeprecationWarningsCorpus is TestDeprecationWarningsAsServer for
// every CRD of the corpus that deprecates a version (a sweep of CI's
// matrix target).
func TestDeprecationWarningsCorpus(t *testing.T) {
	corpusSweep(t)
	var docs []*document.Document
	for _, d := range readCorpusV1CRDs(t) {
		if deprecates(t, d) {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		t.Fatal("no CRD of the corpus deprecates a version")
	}
	compared := deprecationParity(t, docs, nil)
	t.Logf("%d CRDs, %d versions compared", len(docs), compared)
}

// exampleDeprecationCRDs are the CRDs of examples/ that deprecate a version.
func exampleDeprecationCRDs(t *testing.T) []*document.Document {
	var out []*document.Document
	root := repoRoot()
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("deprecated: true")) {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		docs, err := document.Read(bytes.NewReader(b), rel)
		if err != nil {
			return nil // not YAML the tool reads: no CRD of ours
		}
		for _, d := range docs {
			if deprecates(t, d) {
				out = append(out, d)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// deprecates says whether d is a CRD with a deprecated version.
func deprecates(t *testing.T, d *document.Document) bool {
	c, ok, err := schema.DecodeObject(d.Object, strategy.Validators{})
	if !ok || err != nil {
		return false
	}
	for _, v := range c.Object.Spec.Versions {
		if v.Deprecated {
			return true
		}
	}
	return false
}

// deprecationParity creates each CRD of docs for real on the suite's
// server, sends a server-side dry-run create of an object of each served
// version, and compares the warnings of the response with the engine's;
// each is called with the objects sent and the server's warnings (one per
// object, "" for none). CRDs whose versions would warn alike (the same
// group, kind and versions: names, served, deprecated, deprecationWarning)
// are sent once; the rest go in rounds of distinct names, each round
// created at once and deleted before the next. It returns how many
// versions it compared.
func deprecationParity(t *testing.T, docs []*document.Document, each func(d *document.Document, objects []map[string]interface{}, server []string)) int {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	warnings := &warningCollector{}
	cfg.WarningHandler = warnings
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx := context.Background()
	compared := 0
	for _, round := range deprecationRounds(t, docs) {
		var created []*document.Document
		for _, d := range round {
			if _, err := dyn.Resource(crdGVR).Create(ctx, &unstructured.Unstructured{Object: d.Object}, metav1.CreateOptions{}); err != nil {
				t.Errorf("%s: creating the CRD: %v", d.Source, err)
				continue
			}
			created = append(created, d)
		}
		for _, d := range created {
			c, _, _ := schema.DecodeObject(d.Object, strategy.Validators{})
			waitEstablished(t, dyn, c.Name())
			var objects []map[string]interface{}
			var server []string
			for _, v := range c.Object.Spec.Versions {
				if !v.Served {
					continue
				}
				obj, theirs := deprecationRequest(ctx, t, dyn, warnings, c, v.Name)
				ours, ok := c.DeprecationWarning(v.Name)
				want := []string{}
				if ok {
					want = []string{ours}
				}
				if !slices.Equal(theirs, want) {
					t.Errorf("%s: %s, version %s: the server warns %q, kubectl crd %q", d.Source, c.Name(), v.Name, theirs, want)
				}
				objects, server = append(objects, obj), append(server, strings.Join(theirs, "\n"))
				compared++
			}
			if each != nil {
				each(d, objects, server)
			}
		}
		deleteSuiteCRDs(t, dyn, map[string]string{}, created)
	}
	return compared
}

// deprecationRounds are the CRDs of docs, each way of warning once, in
// rounds of distinct names.
func deprecationRounds(t *testing.T, docs []*document.Document) [][]*document.Document {
	seen := map[string]bool{}
	var rounds [][]*document.Document
	names := []map[string]bool{}
	for _, d := range docs {
		c, _, err := schema.DecodeObject(d.Object, strategy.Validators{})
		if err != nil {
			t.Fatalf("%s: %v", d.Source, err)
		}
		key := c.Name() + "/" + c.Object.Spec.Names.Kind
		for _, v := range c.Object.Spec.Versions {
			w := "-"
			if v.DeprecationWarning != nil {
				w = *v.DeprecationWarning
			}
			key += fmt.Sprintf("|%s,%v,%v,%q", v.Name, v.Served, v.Deprecated, w)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		i := 0
		for i < len(rounds) && names[i][c.Name()] {
			i++
		}
		if i == len(rounds) {
			rounds, names = append(rounds, nil), append(names, map[string]bool{})
		}
		rounds[i], names[i][c.Name()] = append(rounds[i], d), true
	}
	return rounds
}

// deprecationRequest sends a dry-run create of an object of version of the
// CRD c, and returns the object and the warnings of the response. The
// server adds the warnings of the version before it reads the object: a
// create its schema refuses warns the same.
func deprecationRequest(ctx context.Context, t *testing.T, dyn dynamic.Interface, warnings *warningCollector, c *schema.CRD, version string) (map[string]interface{}, []string) {
	spec := c.Object.Spec
	obj := map[string]interface{}{
		"apiVersion": spec.Group + "/" + version, "kind": spec.Names.Kind,
		"metadata": map[string]interface{}{"name": "deprecation-check"},
	}
	gvr := runtimeschema.GroupVersionResource{Group: spec.Group, Version: version, Resource: spec.Names.Plural}
	var r dynamic.ResourceInterface = dyn.Resource(gvr)
	if !c.ClusterScoped() {
		obj["metadata"].(map[string]interface{})["namespace"] = "default"
		r = dyn.Resource(gvr).Namespace("default")
	}
	warnings.take()
	_, err := r.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
		t.Fatalf("%s, version %s: %v", c.Name(), version, err)
	}
	return obj, slices.Compact(warnings.take())
}

// checkPruneDeprecated runs kubectl crd prune on objects under the CRD d
// and checks each item's deprecated against the server's warning.
func checkPruneDeprecated(t *testing.T, x *Test, d *document.Document, objects []map[string]interface{}, server []string) {
	t.Helper()
	dir := t.TempDir()
	var crdYAML, objs []byte
	crdYAML, _ = yaml.Marshal(d.Object)
	for _, o := range objects {
		b, _ := yaml.Marshal(o)
		objs = append(append(objs, "---\n"...), b...)
	}
	for name, b := range map[string][]byte{"crd.yaml": crdYAML, "objects.yaml": objs} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := x.Run("kubectl-crd", "prune", "--offline", "--crd-file", filepath.Join(dir, "crd.yaml"), "-f", filepath.Join(dir, "objects.yaml"), "--report", filepath.Join(dir, "report.json"))
	if r.Code != 0 {
		t.Fatalf("%s: prune exits %d\n%s", d.Source, r.Code, r.Stderr)
	}
	var rep struct {
		Items []struct {
			Deprecated string `json:"deprecated"`
		} `json:"items"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v\n%s", d.Source, err, b)
	}
	if len(rep.Items) != len(server) {
		t.Fatalf("%s: %d items for %d objects", d.Source, len(rep.Items), len(server))
	}
	for i, it := range rep.Items {
		if it.Deprecated != server[i] {
			t.Errorf("%s: object %d: prune says %q, the server warns %q", d.Source, i, it.Deprecated, server[i])
		}
		if server[i] != "" && !strings.Contains(r.Stderr, "Warning: ") {
			t.Errorf("%s: object %d: no warning on stderr:\n%s", d.Source, i, r.Stderr)
		}
	}
}
