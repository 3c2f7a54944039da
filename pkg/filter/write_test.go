package filter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/exitcode"
)

// resourceListOf wraps the documents of input, with config as the function
// config, in a ResourceList, as an orchestrator sends it.
func resourceListOf(t *testing.T, input, config []byte) []byte {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(input)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var fc *yaml.RNode
	if config != nil {
		if fc, err = yaml.Parse(string(config)); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	w := kio.ByteWriter{Writer: &out, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion, FunctionConfig: fc}
	if err := w.Write(items); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// emptyAnnotations is a ResourceList of items whose empty annotations or
// metadata ByteWriter clears, beside items it writes as they are (written
// without a copy), an anchor and its alias in two items, and comments.
const emptyAnnotations = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1 # head
  kind: ConfigMap
  metadata:
    name: a
    annotations: {}
  data: &data {k: v}
- apiVersion: v1
  kind: ConfigMap
  metadata: {}
  data: *data
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
    annotations:
    labels: {x: y}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: e
    annotations: {a: b} # kept
  # foot of metadata
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: f
    annotations: ~
`

// The ResourceList written a batch at a time is, byte for byte, the one
// kyaml's framework.Execute writes whole, results included, for every case
// of the function's tests, a large generated list, and plain documents.
func TestResourceListWrittenAsKyamlWritesIt(t *testing.T) {
	saved, savedNodes := batchSize, batchNodes
	batchSize, batchNodes = 2, 40 // several batches even for small lists, a large item alone
	defer func() { batchSize, batchNodes = saved, savedNodes }()

	cases := map[string][]byte{}
	dirs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(dirs) < 10 {
		t.Fatalf("cases: %d, %v", len(dirs), err)
	}
	for _, in := range dirs {
		dir := filepath.Dir(in)
		input, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		config, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
		cases[filepath.Base(dir)] = resourceListOf(t, input, config)
	}
	stdins, _ := filepath.Glob("testdata/stdin/*.in.yaml")
	for _, in := range stdins {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		cases["stdin/"+filepath.Base(in)] = b
	}
	crd, err := os.ReadFile("../../examples/maintenance/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var many strings.Builder
	many.WriteString(string(crd) + "---\n")
	for i := range 25 {
		fmt.Fprintf(&many, "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: job-%d # %d\n  namespace: ops\nspec:\n  shell: |\n    line one\n      indented\n  privileged: %v\n---\n", i, i, i%3 == 0)
	}
	cases["generated"] = resourceListOf(t, []byte(many.String()), nil)
	cases["annotations"] = []byte(emptyAnnotations)

	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			var whole, batched bytes.Buffer
			errWhole := framework.Execute(Processor{}, &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &whole, OmitReaderAnnotations: true, KeepReaderAnnotations: true})
			errBatched := execute(Processor{}, &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &batched, OmitReaderAnnotations: true, KeepReaderAnnotations: true})
			if fmt.Sprint(errWhole) != fmt.Sprint(errBatched) {
				t.Errorf("errors differ: kyaml %v, batched %v", errWhole, errBatched)
			}
			if diff := cmp.Diff(whole.String(), batched.String()); diff != "" {
				t.Errorf("output (-kyaml +batched):\n%s", diff)
			}
			if whole.Len() == 0 && errWhole == nil {
				t.Error("nothing written")
			}
		})
	}
}

// endless is stdin that never ends (-f /dev/zero, a stuck pipe of YAML).
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// A ResourceList larger than a document may be is refused once that much
// is read, not read for ever: exit 2, nothing on stdout.
func TestEndlessStdinIsRefused(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := NewCommand()
	cmd.SetArgs([]string{})
	cmd.SetIn(endless{})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	if exitcode.Of(err) != exitcode.Input {
		t.Fatalf("got %v, want exit 2", err)
	}
	if out.Len() != 0 || !strings.Contains(errOut.String()+err.Error(), "stdin: more than 64 MiB") {
		t.Errorf("stdout %d bytes; error %v; stderr %s", out.Len(), err, errOut.String())
	}
}
