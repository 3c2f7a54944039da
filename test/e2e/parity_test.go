package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	textunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// warningCollector keeps the warnings of the client's requests.
type warningCollector struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningCollector) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningCollector) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.warnings
	w.warnings = nil
	return out
}

// parityRequests is how many requests to the server the parity test has
// in flight at once.
const parityRequests = 4

// paritySender sends requests for the parity test, one at a time.
type paritySender struct {
	dyn      dynamic.Interface
	warnings *warningCollector
}

// parityCRD is a CRD document of the corpus.
type parityCRD struct {
	where string
	obj   *apiextensionsv1.CustomResourceDefinition
	gk    runtimeschema.GroupKind
}

// paritySet is the CRDs of one module version of a project.
type paritySet struct {
	name string
	byGK map[runtimeschema.GroupKind]*parityCRD
	crs  []*parityCR
}

// parityCR is a custom resource sample of the corpus.
type parityCR struct {
	where string
	doc   *document.Document
	gvk   runtimeschema.GroupVersionKind
}

// TestServerParity creates the corpus's CRDs on the API server and sends it
// every sample object with fieldValidation=Warn and dryRun=All. For each
// object the server accepts, kubectl crd prune --defaults (schemas from the
// cluster) must output the object the server returns, and report as unknown
// exactly the fields the server warns about.
func TestServerParity(t *testing.T) {
	corpusSweep(t)
	requireOwnCluster(t) // it deletes and creates CRDs by the hundred
	dir := corpus.Dir(t)
	start := time.Now()

	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	crdClient := apiextensionsclient.NewForConfigOrDie(cfg)
	// The server's answers are waited for several at a time: most of the
	// test's time is the server's, and its requests take turns on a core.
	// Each sender has a client of its own, to tell whose warnings are whose.
	senders := make([]paritySender, parityRequests)
	for i := range senders {
		c := rest.CopyConfig(cfg)
		senders[i].warnings = &warningCollector{}
		c.WarningHandler = senders[i].warnings
		senders[i].dyn = dynamic.NewForConfigOrDie(c)
	}

	sets, setNames := loadParitySets(t, dir)
	var stats struct {
		sets, crdsCreated, crdsRefused, crs, serverRefused, compared, unknownFields int
		reasons                                                                     map[string]int
		refusals                                                                    refusalStats
	}
	stats.reasons = map[string]int{}
	ctx := context.Background()
	// The runs of the plugin for a set read its CRDs from the server while
	// the next set's are created and its samples sent, unless the two sets
	// share a CRD: compare finishes the runs of the set before.
	var (
		compare   func()
		comparing map[string]bool // the CRDs the runs read
	)
	finishRuns := func() {
		if compare != nil {
			compare()
			compare, comparing = nil, nil
		}
	}
	for _, name := range setNames {
		set := sets[name]
		if len(set.crs) == 0 {
			continue
		}
		stats.sets++
		// The set's CRDs that its samples need, created afresh.
		ready := map[runtimeschema.GroupKind]*parityCRD{}
		var gks []runtimeschema.GroupKind
		crdNames := map[string]bool{}
		for _, cr := range set.crs {
			if _, seen := ready[cr.gvk.GroupKind()]; !seen {
				ready[cr.gvk.GroupKind()] = nil
				gks = append(gks, cr.gvk.GroupKind())
				crdNames[set.byGK[cr.gvk.GroupKind()].obj.Name] = true
			}
		}
		for n := range crdNames {
			if comparing[n] {
				finishRuns()
				break
			}
		}
		replaced := make([]error, len(gks))
		inTurn(parityRequests, len(gks), func(_, i int) {
			replaced[i] = replaceCRD(ctx, crdClient, set.byGK[gks[i]].obj)
		})
		for i, gk := range gks {
			c := set.byGK[gk]
			if err := replaced[i]; err != nil {
				stats.crdsRefused++
				t.Logf("%s: the server refuses the CRD: %v", c.where, err)
				continue
			}
			stats.crdsCreated++
			ready[gk] = c
		}

		// Send the samples; keep those the server accepts.
		type accepted struct {
			cr       *parityCR
			stored   map[string]interface{}
			warnings []string
		}
		var (
			batch   []accepted
			invalid []refusedSample
		)
		type sent struct {
			got      *unstructured.Unstructured
			err      error
			warnings []string
		}
		answers := make([]sent, len(set.crs))
		inTurn(parityRequests, len(set.crs), func(sender, i int) {
			cr := set.crs[i]
			c := ready[cr.gvk.GroupKind()]
			if c == nil {
				return
			}
			obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(cr.doc.Object)}
			gvr := cr.gvk.GroupVersion().WithResource(c.obj.Spec.Names.Plural)
			s := senders[sender]
			var ri dynamic.ResourceInterface = s.dyn.Resource(gvr)
			if c.obj.Spec.Scope == apiextensionsv1.NamespaceScoped {
				ns := obj.GetNamespace()
				if ns == "" {
					ns = "default"
				}
				ri = s.dyn.Resource(gvr).Namespace(ns)
			}
			s.warnings.take()
			got, err := createDryRun(ctx, ri, obj)
			answers[i] = sent{got, err, s.warnings.take()}
		})
		for i, cr := range set.crs {
			if ready[cr.gvk.GroupKind()] == nil {
				continue
			}
			stats.crs++
			got, err, ws := answers[i].got, answers[i].err, answers[i].warnings
			if err != nil {
				stats.serverRefused++
				if v, ok := invalidVerdict(err); ok {
					invalid = append(invalid, refusedSample{cr, v})
				}
				continue
			}
			batch = append(batch, accepted{cr: cr, stored: got.Object, warnings: ws})
		}
		checkRefusedSamples(t, name, invalid, &stats.refusals)
		if len(batch) == 0 {
			continue
		}

		// Runs of the plugin for the set, schemas from the cluster: the
		// samples as a stream, as one List, and each in a file of its own
		// without a final line break (kubectl's reader adds it back).
		var docs []*parityCR
		for _, a := range batch {
			docs = append(docs, a.cr)
		}
		// The runs of a set at once: each is a client of the server as well.
		finishRuns()
		inputs := []parityInput{stream, asList, noFinalNewline}
		wait := startPrunes(t, name, docs, inputs)
		comparing = crdNames
		compare = func() {
			runItems, runReports, runOK := wait()
			for run, input := range inputs {
				if !runOK[run] {
					continue
				}
				items, reports := runItems[run], runReports[run]
				for i, a := range batch {
					stats.compared++
					if reports[i].Status == "Invalid" {
						t.Errorf("%s: the server accepts it, prune calls it Invalid: %v", a.cr.where, reports[i].Errors)
						continue
					}
					if reports[i].Status != "Checked" {
						t.Errorf("%s (%s): status %s, want Checked", a.cr.where, input, reports[i].Status)
						continue
					}
					want := normalizeServerObject(a.stored, a.cr.doc.Object)
					got := normalizeServerObject(items[i], a.cr.doc.Object)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s (%s): prune --defaults output (-server +plugin):\n%s", a.cr.where, input, diff)
					}
					var serverUnknown, ours []string
					for _, w := range a.warnings {
						if p, ok := strings.CutPrefix(w, `unknown field "`); ok {
							serverUnknown = append(serverUnknown, strings.TrimSuffix(p, `"`))
						}
					}
					for _, ch := range reports[i].Changes {
						if ch.Reason == "UnknownField" || ch.Reason == "UnknownMetadataField" {
							ours = append(ours, ch.Path)
						}
						stats.reasons[ch.Reason]++
					}
					sort.Strings(serverUnknown)
					sort.Strings(ours)
					stats.unknownFields += len(serverUnknown)
					if diff := cmp.Diff(serverUnknown, ours, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("%s (%s): unknown fields (-server warnings +plugin report):\n%s", a.cr.where, input, diff)
					}
				}
			}
		}
	}
	finishRuns()
	t.Logf("%d sets; CRDs: %d created, %d refused by the server; %d samples sent, %d refused by the server, %d compared (%d unknown-field warnings) in %v",
		stats.sets, stats.crdsCreated, stats.crdsRefused, stats.crs, stats.serverRefused, stats.compared, stats.unknownFields, time.Since(start).Round(time.Second))
	t.Logf("changes reported, by reason: %v", stats.reasons)
	t.Logf("refused by the server as invalid: %d; prune calls %d Invalid with the same errors, refuses %d as bad input",
		stats.refusals.invalid, stats.refusals.same, stats.refusals.badInput)
	if stats.compared == 0 {
		t.Error("no object was compared")
	}
}

// pruneReportItem is the part of a --report item the test reads.
type pruneReportItem struct {
	Status  string `json:"status"`
	Changes []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"changes"`
	Errors []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// parityInput is how the samples are given to kubectl crd prune.
type parityInput string

const (
	stream         parityInput = "a stream on stdin"
	asList         parityInput = "one List on stdin"
	noFinalNewline parityInput = "a file each, without a final line break"
)

// pruneRun is a run of kubectl crd prune --defaults -o json --report over
// the documents of a set, given as input says, with schemas from the cluster.
type pruneRun struct {
	set        string
	docs       []*parityCR
	input      parityInput
	x          *Test
	args       []string
	reportFile string
	result     Result
	err        error
}

// startPrunes starts kubectl crd prune over docs given in each of the
// inputs, the runs at once, and returns what waits for them and returns the
// printed objects and report items of each, in order; ok is false for a run
// that failed, which it reports. The wait is for the test's goroutine.
func startPrunes(t *testing.T, set string, docs []*parityCR, inputs []parityInput) (wait func() (items [][]map[string]interface{}, reports [][]pruneReportItem, ok []bool)) {
	t.Helper()
	runs := make([]*pruneRun, len(inputs))
	for i, input := range inputs {
		runs[i] = preparePrune(t, set, docs, input)
	}
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.result, run.err = run.x.run("kubectl-crd", run.args...)
		}()
	}
	return func() (items [][]map[string]interface{}, reports [][]pruneReportItem, ok []bool) {
		t.Helper()
		wg.Wait()
		for _, run := range runs {
			it, rep, done := run.finish(t)
			items, reports, ok = append(items, it), append(reports, rep), append(ok, done)
		}
		return items, reports, ok
	}
}

// preparePrune writes the input of a run of prune.
func preparePrune(t *testing.T, set string, docs []*parityCR, input parityInput) *pruneRun {
	t.Helper()
	var in bytes.Buffer
	args := []string{"prune", "--defaults", "-o", "json", "--report", "", "-f", "-"}
	switch input {
	case stream:
		for _, d := range docs {
			b, err := d.doc.Encode()
			if err != nil {
				t.Fatal(err)
			}
			in.WriteString("---\n")
			in.Write(b)
		}
	case asList:
		// As kubectl get -o yaml writes a List.
		list := map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": []interface{}{}}
		for _, d := range docs {
			list["items"] = append(list["items"].([]interface{}), d.doc.Object)
		}
		b, err := sigsyaml.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
	case noFinalNewline:
		dir := t.TempDir()
		for i, d := range docs {
			b, err := d.doc.Encode()
			if err != nil {
				t.Fatal(err)
			}
			stripped := bytes.TrimRight(b, "\n")
			// The server gets the same object either way, from kubectl's reader.
			if want, got := kubectlReads(t, b), kubectlReads(t, stripped); !cmp.Equal(want, got) {
				t.Fatalf("%s: kubectl's reader reads the document differently without its final line break", d.where)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%06d.yaml", i)), stripped, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args[len(args)-1] = dir
	}
	reportFile := filepath.Join(t.TempDir(), "report.json")
	args[5] = reportFile
	// The test server holds every set's CRDs: on a loaded 2-core machine listing
	// them once took longer than the default 30 s.
	return &pruneRun{set: set, docs: docs, input: input, x: NewTest(t).WithStdin(in.String()), args: append(args, "--request-timeout=5m"), reportFile: reportFile}
}

// finish reads what a run of prune printed and reported.
func (run *pruneRun) finish(t *testing.T) ([]map[string]interface{}, []pruneReportItem, bool) {
	t.Helper()
	set, input, docs, reportFile, r := run.set, run.input, run.docs, run.reportFile, run.result
	if run.err != nil {
		t.Fatalf("set %s (%s): running kubectl crd prune: %v", set, input, run.err)
	}
	// Exit 1: an object called Invalid, which the caller reports.
	if r.Code != 0 && r.Code != 1 {
		t.Errorf("set %s (%s): kubectl crd prune exit %d:\n%s", set, input, r.Code, r.Stderr)
		return nil, nil, false
	}
	var out struct {
		Items []map[string]interface{} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("set %s: %v", set, err)
	}
	var report struct {
		Items []pruneReportItem `json:"items"`
	}
	rb, err := os.ReadFile(reportFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rb, &report); err != nil {
		t.Fatalf("set %s: report: %v", set, err)
	}
	if len(out.Items) != len(docs) || len(report.Items) != len(docs) {
		t.Errorf("set %s: %d objects sent, %d printed, %d reported", set, len(docs), len(out.Items), len(report.Items))
		return nil, nil, false
	}
	return out.Items, report.Items, true
}

// loadParitySets reads the corpus: apiextensions.k8s.io/v1 CRDs grouped by
// module version, each sample assigned to the set with its CRD (its own
// module version first, then its project's others, then any), as the
// engine's corpus test does.
func loadParitySets(t *testing.T, dir string) (map[string]*paritySet, []string) {
	sets := map[string]*paritySet{}
	setOf := func(f corpus.File) string { return f.Project + "/" + f.Set() }
	for _, f := range corpus.CRDFiles(t, dir) {
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			continue
		}
		for i, d := range docs {
			if d.Object["apiVersion"] != "apiextensions.k8s.io/v1" || d.Object["kind"] != "CustomResourceDefinition" {
				continue // the server serves only v1 CRDs
			}
			js, err := d.JSON()
			if err != nil {
				t.Fatal(err)
			}
			obj, err := schema.DecodeCRD(js)
			if err != nil {
				continue
			}
			set := sets[setOf(f)]
			if set == nil {
				set = &paritySet{name: setOf(f), byGK: map[runtimeschema.GroupKind]*parityCRD{}}
				sets[set.name] = set
			}
			// What the file says, not the decoded defaults: the server defaults it itself.
			raw := &apiextensionsv1.CustomResourceDefinition{}
			if err := json.Unmarshal(js, raw); err != nil {
				continue
			}
			gk := runtimeschema.GroupKind{Group: obj.Spec.Group, Kind: obj.Spec.Names.Kind}
			set.byGK[gk] = &parityCRD{where: fmt.Sprintf("%s (document %d)", f.LocalPath, i+1), obj: raw, gk: gk}
		}
	}
	var names []string
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)

	find := func(f corpus.File, gk runtimeschema.GroupKind) *paritySet {
		if s := sets[setOf(f)]; s != nil && s.byGK[gk] != nil {
			return s
		}
		for _, sameProject := range []bool{true, false} {
			for _, n := range names {
				if strings.HasPrefix(n, f.Project+"/") == sameProject && sets[n].byGK[gk] != nil {
					return sets[n]
				}
			}
		}
		return nil
	}
	for _, f := range corpus.CRFiles(t, dir) {
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			continue // templates and broken samples: kubectl refuses them too
		}
		for i, d := range docs {
			apiVersion, _ := d.Object["apiVersion"].(string)
			kind, _ := d.Object["kind"].(string)
			gv, err := runtimeschema.ParseGroupVersion(apiVersion)
			if err != nil || kind == "" || schema.IsCRD(apiVersion, kind) {
				continue
			}
			gvk := gv.WithKind(kind)
			if s := find(f, gvk.GroupKind()); s != nil {
				s.crs = append(s.crs, &parityCR{where: fmt.Sprintf("%s (document %d)", f.LocalPath, i+1), doc: d, gvk: gvk})
			}
		}
	}
	// The test joins a set's samples into one stream. A document at the end of
	// a file may lack its final newline, and joining adds one, which changes
	// a block scalar at its end: the server gets what the plugin reads.
	for _, s := range sets {
		for _, cr := range s.crs {
			b, err := cr.doc.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 0 && b[len(b)-1] != '\n' {
				docs, err := document.Read(bytes.NewReader(append(b, '\n')), cr.doc.Source.File)
				if err != nil || len(docs) != 1 {
					t.Fatalf("%s: reading it again with a final newline: %v", cr.where, err)
				}
				cr.doc = docs[0]
			}
		}
	}
	return sets, names
}

// replaceCRD makes crd the cluster's CRD of its name: an existing one is
// deleted first (an update could be refused: stored versions, scope), then
// it waits until the new one is established.
func replaceCRD(ctx context.Context, client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	crd = crd.DeepCopy()
	crd.ResourceVersion = ""
	if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err == nil {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			return fmt.Errorf("deleting the previous CRD %s: %v", crd.Name, err)
		}
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// createDryRun posts obj with dryRun=All and fieldValidation=Warn.
func createDryRun(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return createWith(ctx, ri, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Warn"})
}

// createWith creates obj. Right after a CRD is established its endpoint may
// still answer 404 for a moment (the handler's cache of CRDs is behind), for
// up to 5 seconds; a 404 costs the server little, so it is asked again soon.
func createWith(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	var (
		got *unstructured.Unstructured
		err error
	)
	for deadline := time.Now().Add(5 * time.Second); ; {
		got, err = ri.Create(ctx, obj, opts)
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return got, err
}

// normalizeServerObject drops what the server assigns on create (identity,
// timestamps, managed fields) and the namespace the request supplied; numbers
// become json.Numbers (the server decodes integers to int64, JSON to float64).
func normalizeServerObject(obj, sent map[string]interface{}) map[string]interface{} {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	obj = nil
	if err := dec.Decode(&obj); err != nil {
		panic(err)
	}
	md, _ := obj["metadata"].(map[string]interface{})
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		delete(md, k)
	}
	if ns, _, _ := unstructured.NestedString(sent, "metadata", "namespace"); ns == "" {
		delete(md, "namespace")
	}
	if name, _, _ := unstructured.NestedString(sent, "metadata", "name"); name == "" {
		delete(md, "name") // generateName
	}
	return obj
}

var _ rest.WarningHandler = &warningCollector{}

// kubectlReads reads a file as kubectl's resource builder does (the
// UTF-8/UTF-16 transform, then YAMLOrJSONDecoder into RawExtensions) and
// returns its objects.
func kubectlReads(t *testing.T, data []byte) []map[string]interface{} {
	t.Helper()
	r := transform.NewReader(bytes.NewReader(data), textunicode.BOMOverride(textunicode.UTF8.NewDecoder()))
	d := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []map[string]interface{}
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("kubectl's reader: %v", err)
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		var obj map[string]interface{}
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("kubectl's reader: %v", err)
		}
		out = append(out, obj)
	}
}
