package document_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// A document keeps its line ends, edited or not: carriage returns alone
// (old Mac files, which YAML breaks lines at) used to come out with a line
// feed added, or, edited, with line feeds and a stray carriage return; an
// edit of the node tree wrote a CRLF document with line feeds alone.
func TestLineEndsKept(t *testing.T) {
	for _, tc := range []struct{ name, in, eol string }{
		{"CR", "kind: A\rspec: # s\r  a: 1\r  b: {c: 2, d: 3}\r", "\r"},
		{"CR, no last", "kind: A\rspec: # s\r  a: 1\r  b: {c: 2, d: 3}", "\r"},
		{"CRLF", "kind: A\r\nspec: # s\r\n  a: 1\r\n  b: {c: 2, d: 3}\r\n", "\r\n"},
		{"LF", "kind: A\nspec: # s\n  a: 1\n  b: {c: 2, d: 3}\n", "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func() *document.Document {
				docs, err := document.Read(strings.NewReader(tc.in), "in.yaml")
				if err != nil || len(docs) != 1 {
					t.Fatal(docs, err)
				}
				return docs[0]
			}
			d := read()
			wantRaw := strings.TrimSuffix(tc.in, tc.eol) + tc.eol
			if out, err := d.Encode(); err != nil || string(out) != wantRaw {
				t.Errorf("unedited: %q, %v; want %q", out, err, wantRaw)
			}
			// In flow style: an edit of the node tree, which encodes it again.
			d = read()
			want := d.Object
			delete(want["spec"].(map[string]interface{})["b"].(map[string]interface{}), "c")
			if _, err := d.Apply([]document.Edit{{Path: fieldpath.Parse("spec.b.c"), Remove: true}}, want); err != nil {
				t.Fatal(err)
			}
			out, err := d.Encode()
			if err != nil {
				t.Fatal(err)
			}
			other := bytes.ReplaceAll(out, []byte(tc.eol), nil)
			if !bytes.HasSuffix(out, []byte(tc.eol)) || bytes.ContainsAny(other, "\r\n") || !bytes.Contains(out, []byte("# s")) {
				t.Errorf("edited: %q; want every line ended by %q, the comment kept", out, tc.eol)
			}
		})
	}
}
