package document_test

import (
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// A field that comes through a YAML merge key (<<) is at the line where its
// mapping writes it, as YAML merges: the mapping's own keys first, then what
// it merges, the first of a list that has the key winning, merges of merges
// too. It used to have no line. An edit there would change every place the
// mapping is merged: it says so.
func TestMergedFieldLines(t *testing.T) {
	const in = `apiVersion: v1
kind: ConfigMap
base: &base
  a: from-base
  b: from-base
other: &other
  <<: *base
  c: from-other
data:
  <<: [*other, {d: inline}]
  b: own
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: &m
    name: x
  data:
    <<: *m
`
	docs, err := document.Read(strings.NewReader(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc  *document.Document
		path string
		line int
	}{
		{docs[0], "data.a", 4},
		{docs[0], "data.b", 11}, // its own, not base's
		{docs[0], "data.c", 8},
		{docs[0], "data.d", 10},
		{docs[0], "data.e", 0},
		{docs[1].Objects()[0], "data.name", 19},
	} {
		if got := tc.doc.Line(fieldpath.Parse(tc.path)); got != tc.line {
			t.Errorf("Line(%s) = %d, want %d", tc.path, got, tc.line)
		}
	}
	want := docs[0].Object
	data := want["data"].(map[string]interface{})
	delete(data, "a")
	note, err := docs[0].Apply([]document.Edit{{Path: fieldpath.Parse("data.a"), Remove: true}}, want)
	if err != nil || !strings.Contains(note, "data.a: the field comes through a YAML merge key (<<); edit what it merges instead") {
		t.Errorf("removing a merged field: %q, %v", note, err)
	}
}
