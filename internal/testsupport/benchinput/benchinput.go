// Package benchinput builds a realistic input for benchmarks from the public
// corpus: the CRDs of a few real projects, and many custom resources made
// from their samples, some with an unknown field the server prunes.
package benchinput

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// Objects is how many objects the benchmarks of the corpus input check.
var Objects = flag.Int("benchinput.objects", 10000, "objects in the corpus benchmark input")

// Projects are the corpus projects whose CRDs the input holds: 127 CRDs,
// CEL rules, large and small schemas, several versions.
var Projects = []string{"argo-cd", "argo-events", "argo-rollouts", "cilium", "cluster-api", "crossplane", "external-dns", "flux", "gateway-api", "keda"}

// Input is a benchmark input.
type Input struct {
	// CRDs is one YAML stream of every CRD, as written in the corpus.
	CRDs []byte
	// CRDCount is how many CRDs it holds.
	CRDCount int
	// Objects is one YAML stream of the objects, comments kept.
	Objects []byte
	// Unknown counts the objects with an unknown field added.
	Unknown int
}

// Build reads the corpus (skipping the benchmark without one) and makes n
// objects, every tenth with an unknown root field: each sample of the
// projects the server accepts as it is (checked with the engine), renamed
// per copy.
func Build(tb testing.TB, n int) *Input {
	tb.Helper()
	dir := corpus.Dir(tb)
	want := map[string]bool{}
	for _, p := range Projects {
		want[p] = true
	}
	in := &Input{}
	reg := schema.NewRegistry()
	seen := map[string]bool{}
	var crds bytes.Buffer
	for _, f := range corpus.CRDFiles(tb, dir) {
		if !want[f.Project] {
			continue
		}
		for _, d := range read(tb, dir, f) {
			crd, ok, err := schema.FromObject(d.Object, strategy.Validators{})
			if !ok || err != nil || seen[crd.Name()] || bytes.HasPrefix(bytes.TrimSpace(d.Raw()), []byte("{")) {
				continue
			}
			seen[crd.Name()] = true
			reg.Add(crd)
			in.CRDCount++
			crds.WriteString("---\n")
			crds.Write(d.Raw())
		}
	}
	in.CRDs = crds.Bytes()

	type sample struct {
		text, name string
	}
	var samples []sample
	validators := strategy.Validators{}
	for _, f := range corpus.CRFiles(tb, dir) {
		if !want[f.Project] {
			continue
		}
		for _, d := range read(tb, dir, f) {
			if d.IsList() || bytes.HasPrefix(bytes.TrimSpace(d.Raw()), []byte("{")) {
				continue
			}
			ref := document.Ref(d.Object)
			text := string(d.Raw())
			if ref.Name == "" || !strings.Contains(text, "name: "+ref.Name+"\n") {
				continue
			}
			res, err := prune.Document(d, reg, prune.Options{Defaults: true, Validate: validators})
			if err != nil || res.Status != prune.Checked {
				continue
			}
			samples = append(samples, sample{text, ref.Name})
		}
	}
	if len(samples) == 0 {
		tb.Fatal("benchinput: no samples")
	}
	var objs bytes.Buffer
	for i := 0; i < n; i++ {
		s := samples[i%len(samples)]
		text := strings.Replace(s.text, "name: "+s.name+"\n", fmt.Sprintf("name: %s-%d\n", s.name, i), 1)
		objs.WriteString("---\n")
		objs.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			objs.WriteString("\n")
		}
		if i%10 == 9 {
			objs.WriteString("benchUnknownField: true\n")
			in.Unknown++
		}
	}
	in.Objects = objs.Bytes()
	return in
}

func read(tb testing.TB, dir string, f corpus.File) []*document.Document {
	docs, err := document.Read(bytes.NewReader(corpus.Read(tb, dir, f)), f.LocalPath)
	if err != nil {
		return nil
	}
	var out []*document.Document
	for _, d := range docs {
		out = append(out, d.Objects()...)
	}
	return out
}

// Write writes the input's files into dir: crds.yaml and objects.yaml.
func (in *Input) Write(tb testing.TB, dir string) (crds, objects string) {
	tb.Helper()
	crds, objects = filepath.Join(dir, "crds.yaml"), filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(crds, in.CRDs, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(objects, in.Objects, 0o644); err != nil {
		tb.Fatal(err)
	}
	return crds, objects
}
