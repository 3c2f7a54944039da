package generate

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/serverpath"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
)

// CRD is one of the largest CRDs of the corpus, with objects made from its
// schema.
type CRD struct {
	// Name is the CRD's metadata.name; File its corpus path.
	Name, File string
	// Data is the file as written.
	Data []byte
	// APIVersion, Kind of its objects, in Version: the storage version.
	APIVersion, Kind, Version string
	crd                       *serverpath.CRD
}

// Largest returns the n largest files of the corpus that hold one CRD the
// server serves, largest first. Without a corpus the benchmark is skipped.
func Largest(tb testing.TB, n int) []CRD {
	tb.Helper()
	dir := corpus.Dir(tb)
	files := corpus.CRDFiles(tb, dir)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Bytes > files[j].Bytes })
	var out []CRD
	for _, f := range files {
		if len(out) == n {
			break
		}
		if !strings.HasSuffix(f.LocalPath, ".yaml") || strings.Count(f.Objects, "apiextensions.k8s.io/v1:") != 1 {
			continue // several documents, v1beta1, or JSON as a cluster serves it
		}
		data := corpus.Read(tb, dir, f)
		js, err := sigsyaml.YAMLToJSON(data)
		if err != nil {
			continue
		}
		crd, err := serverpath.DecodeCRD(js)
		if err != nil {
			continue
		}
		c := CRD{Name: crd.Object.Name, File: f.LocalPath, Data: data, Kind: crd.Object.Spec.Names.Kind, crd: crd}
		for _, v := range crd.Object.Spec.Versions {
			if v.Storage {
				c.Version = v.Name
			}
		}
		c.APIVersion = crd.Object.Spec.Group + "/" + c.Version
		out = append(out, c)
	}
	if len(out) < n {
		tb.Fatalf("the corpus has %d files with one CRD the server serves, want %d", len(out), n)
	}
	return out
}

// Objects returns n objects of the CRD made by Object, one in ten with the
// unknown field.
func (c CRD) Objects(n int) []map[string]interface{} {
	out := make([]map[string]interface{}, n)
	for i := range out {
		out[i] = Object(c.crd.Schema(c.Version), c.APIVersion, c.Kind, i, i%10 == 3, Options{})
	}
	return out
}

// Stream returns the objects as one YAML stream, each after a comment, as
// files are written.
func Stream(objs []map[string]interface{}) ([]byte, error) {
	var b strings.Builder
	for i, o := range objs {
		y, err := sigsyaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "---\n# object %d\n%s", i, y)
	}
	return []byte(b.String()), nil
}
