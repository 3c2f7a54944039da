package filter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// listCases are ResourceLists as orchestrators send them, and as people
// write them: byText says that listByText reads it from its text, not
// kyaml's reader.
var listCases = map[string]struct {
	byText bool
	list   string
}{
	"comments in items": {true, `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- # the first
  apiVersion: v1 # a line comment
  kind: ConfigMap
  metadata:
    # a head comment
    name: a
    annotations: {a: b} # kept

    labels:
      x: y
    # foot of metadata
  data:
    k: |
      - not an item
      items:
    j: "a quoted
      - not an item either"
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b, annotations: {}}
`},
	"anchors of one item, a List": {true, `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMapList
  items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: &m
      name: a
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b}, data: &d {k: v}}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c, labels: &l {x: y}}
  data: {l: *l}
`},
	"indented, the config after": {true, `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
  -   apiVersion: v1
      kind: ConfigMap
      metadata:
          name: a
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: b
functionConfig:
  apiVersion: crd.kubectl.dev/v1alpha1
  kind: CRDCheck
  metadata:
    name: c
  failOn: [Invalid]
`},
	"annotations of two formats": {false, `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, annotations: {config.kubernetes.io/path: a.yaml}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, annotations: {internal.config.kubernetes.io/path: b.yaml}}}
`},
	"a comment between items":  {false, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n# whose?\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n"},
	"an item's last comment":   {false, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  # whose?\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n"},
	"items inside a scalar":    {false, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nx: \"a\nitems:\n- b\"\nitems: []\n"},
	"an alias of another item": {false, emptyAnnotations},
	"two documents":            {false, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"},
}

// orchestrated is testdata/prune's ResourceList (a CRD, its object
// pruned) as an orchestrator sends it: each item with the annotations
// named, their value its index, written by kyaml.
func orchestrated(t *testing.T, annotations ...string) []byte {
	t.Helper()
	input, err := os.ReadFile("testdata/prune/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(input), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		for _, a := range annotations {
			if err := it.PipeE(yaml.SetAnnotation(a, strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	w := kio.ByteWriter{Writer: &out, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
	if err := w.Write(items); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A ResourceList read by its text is written, byte for byte, as kyaml's
// reader and protocol make it (byKyaml, the function before issue 44),
// results and errors included: every case of the function's tests as an
// orchestrator sends it, the lists of listCases, and a large generated
// list. Each list of listCases is read by its text exactly when byText
// says so; every list kyaml writes is, but where the run fails otherwise
// than by its results.
func TestItemsReadAsKyamlReadsThem(t *testing.T) {
	type tc struct {
		dir    string
		list   []byte
		byText bool
	}
	cases := map[string]tc{}
	inputs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(inputs) < 10 {
		t.Fatalf("cases: %d, %v", len(inputs), err)
	}
	for _, in := range inputs {
		dir := filepath.Dir(in)
		input, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		config, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
		cases[filepath.Base(dir)] = tc{dir, resourceListOf(t, input, config), true}
	}
	for name, c := range listCases {
		cases[name] = tc{".", []byte(c.list), c.byText}
	}
	crd, err := os.ReadFile("../../examples/maintenance/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	many := string(crd) + "---\n"
	for i := range 40 {
		many += fmt.Sprintf("apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: job-%d # %d\n  namespace: ops\nspec:\n  shell: |\n    line one\n      indented\n  privileged: %v\n  extra: %d\n---\n", i, i, i%3 == 0, i)
	}
	cases["generated"] = tc{".", resourceListOf(t, []byte(many), nil), true}
	for name, annotations := range map[string][]string{
		"as kustomize sends it":     {"config.kubernetes.io/index", "internal.config.kubernetes.io/index", "internal.config.kubernetes.io/annotations-migration-resource-id"},
		"legacy annotations only":   {"config.kubernetes.io/index", "config.kubernetes.io/path"},
		"internal annotations only": {"internal.config.kubernetes.io/path"},
		"the protocol's id only":    {"internal.config.kubernetes.io/annotations-migration-resource-id"},
	} {
		cases[name] = tc{"testdata/prune", orchestrated(t, annotations...), true}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Chdir(c.dir)
			var viaKyaml, viaText bytes.Buffer
			errKyaml := byKyaml(c.list, &viaKyaml, Processor{})
			errText := listByText(c.list, &viaText, Processor{})
			// A run that fails otherwise than by its results is kyaml's.
			var results framework.Results
			want := c.byText && (errKyaml == nil || errors.As(errKyaml, &results))
			if byText := !errors.Is(errText, errNotByText); byText != want {
				t.Fatalf("read by its text: %v, want %v (%v)", byText, want, errText)
			}
			if errors.Is(errText, errNotByText) {
				if viaText.Len() > 0 {
					t.Errorf("not read by its text, but written:\n%s", viaText.String())
				}
				return
			}
			if fmt.Sprint(errKyaml) != fmt.Sprint(errText) {
				t.Errorf("errors differ: kyaml %v, by text %v", errKyaml, errText)
			}
			if d := cmp.Diff(viaKyaml.String(), viaText.String()); d != "" {
				t.Errorf("output (-kyaml +by text):\n%s", d)
			}
		})
	}
}

// A ResourceList read by its text allocates about half of what kyaml's
// reader and protocol allocate for it (0.55 for these 2,000 items), the
// checks included: the list is parsed once, each item written once, and
// no node tree of the whole list is built. Falling back to kyaml's reader,
// or parsing or writing each item a second time, takes it above 0.65.
// Allocation is counted, not timed.
func TestItemsReadByTextAllocateLess(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c%d\n    namespace: ns\n  data:\n    a: \"%d\"\n    b: some text\n    c: |\n      line one\n      line two\n", i, i)
	}
	list := []byte(b.String())
	allocated := func(read func([]byte, io.Writer, Processor) error) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := read(list, io.Discard, Processor{}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	viaKyaml, byText := allocated(byKyaml), allocated(listByText)
	if ratio := float64(byText) / float64(viaKyaml); ratio > 0.65 {
		t.Errorf("read by its text, %d MiB allocated: %.2f of kyaml's reader's %d MiB, want at most 0.65", byText>>20, ratio, viaKyaml>>20)
	}
}
