package document_test

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// FuzzEdit: on any input kubectl reads, removing fields and adding one in
// every object (List items included) never panics, and every document then
// reads back, as kubectl reads it, exactly as the edited objects: in place,
// in the node tree, or written again.
func FuzzEdit(f *testing.F) {
	for _, in := range readerCases {
		f.Add(in)
	}
	f.Add([]byte(jobList))
	f.Add([]byte("{\n  \"kind\": \"A\",\n  \"spec\": {\"a\": [1, 2], \"b\": {\n    \"c\": \"<d>\"\n  }}\n}\n"))
	f.Add([]byte("# c\nkind: A\nspec: # s\n  a: 1 # one\n  b: [1, 2]\n  c: {d: e}\n  d: &x {y: 1}\n  e: *x\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<14 {
			return
		}
		docs, err := document.Read(bytes.NewReader(in), "in")
		if err != nil {
			return
		}
		for _, d := range docs {
			var want []map[string]interface{}
			for _, o := range d.Objects() {
				w := runtime.DeepCopyJSON(o.Object)
				var edits []document.Edit
				keys := make([]string, 0, len(w))
				for k := range w {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				// Remove the nested fields of the first object field, then the last key.
				for _, k := range keys {
					if m, ok := w[k].(map[string]interface{}); ok && k != "metadata" {
						for kk := range m {
							edits = append(edits, document.Edit{Path: fieldpath.Path{fieldpath.Key(k), fieldpath.Key(kk)}, Remove: true})
							delete(m, kk)
						}
						break
					}
				}
				if n := len(keys); n > 0 && keys[n-1] != "apiVersion" && keys[n-1] != "kind" {
					edits = append(edits, document.Edit{Path: fieldpath.Path{fieldpath.Key(keys[n-1])}, Remove: true})
					delete(w, keys[n-1])
				}
				edits = append(edits, document.Edit{Path: fieldpath.Path{fieldpath.Key("zz-added")}, Value: map[string]interface{}{"a": "yes", "b": int64(1)}})
				w["zz-added"] = map[string]interface{}{"a": "yes", "b": int64(1)}
				if _, err := o.Apply(edits, w); err != nil {
					t.Fatalf("Apply: %v\ninput:\n%s", err, in)
				}
				want = append(want, w)
			}
			var got []map[string]interface{}
			for _, o := range d.Objects() {
				obj, err := o.Reparse()
				if err != nil {
					t.Fatalf("Reparse: %v\ninput:\n%s", err, in)
				}
				got = append(got, obj)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				out, _ := d.Encode()
				t.Fatalf("edited document reads back differently (-want +got):\n%s\ninput:\n%s\noutput:\n%s", diff, in, out)
			}
			// JSON stays JSON, written as it was: on one line, or indented.
			if out, _ := d.Encode(); document.IsJSON(d) && (!json.Valid(out) || bytes.Contains(d.Raw(), []byte("\n")) != bytes.Contains(out, []byte("\n"))) {
				t.Fatalf("a JSON document written as:\n%s\ninput:\n%s", out, in)
			}
		}
	})
}
