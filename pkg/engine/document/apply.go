package document

// The apply entry, the first tier of an edit. An edit goes down the tiers,
// never up: Apply tries a text splice (splice.go), then an edit of the node
// tree (tree.go), then writes the document again; those find their way with
// navigate.go and write YAML with encode.go. Encode, Reparse and Reformatted
// give the result; the edits of a List's items wait here until it is written.

import (
	"fmt"
	"reflect"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// Edit is one change to apply to a document: remove the object field at
// Path, or set it to Value (a JSON value).
type Edit struct {
	Path   fieldpath.Path
	Remove bool
	Value  interface{}
}

// Apply makes the edits and checks that the document then reads back
// (as kubectl reads it) exactly as want. It first edits the text itself, so
// that every line not touched by an edit stays byte for byte as it was
// (comments, blank lines, quoting, block scalars); where a text edit is not
// possible (flow-style collections, list items) it edits the YAML node tree,
// which keeps comments and key order; and as a last resort it writes the
// document again from want. The returned note says why it had to fall back.
//
// The edits of an item of a List are made when the List is written, all at
// once: the note is then the List's (see Reformatted).
func (d *Document) Apply(edits []Edit, want map[string]interface{}) (note string, err error) {
	if d.item != nil {
		d.item.apply(edits, want)
		return "", nil
	}
	return d.applyEdits(edits, want)
}

func (d *Document) applyEdits(edits []Edit, want map[string]interface{}) (note string, err error) {
	if len(edits) == 0 {
		return "", nil
	}
	text, serr := d.splice(edits)
	if serr == nil {
		if serr = readsBackAs(text, want); serr == nil {
			d.out, d.edited = text, true
			return "", nil
		}
	}
	var nerr error
	for _, e := range edits {
		if e.Remove {
			nerr = d.remove(e.Path)
		} else {
			nerr = d.set(e.Path, e.Value)
		}
		if nerr != nil {
			break
		}
	}
	if nerr == nil {
		var b []byte
		if b, nerr = d.text(); nerr == nil {
			if nerr = readsBackAs(b, want); nerr == nil {
				return "", nil
			}
		}
	}
	if err := d.replaceWith(want); err != nil {
		return "", err
	}
	return fmt.Sprintf("written again without comments: %v", nerr), nil
}

func readsBackAs(b []byte, want map[string]interface{}) error {
	// What the reader makes of the text, without a JSON round trip where
	// the walk gives the same object (toObject); keys written twice take
	// the round trip, as before (issue 44).
	if got, dupes, ok := walkObject(b); ok && !dupes {
		return sameObject(got, want)
	}
	js, err := sigsyaml.YAMLToJSON(b)
	if err != nil {
		return err
	}
	got, err := decodeObject(js)
	if err != nil {
		return err
	}
	return sameObject(got, want)
}

func sameObject(got, want map[string]interface{}) error {
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("the edited YAML does not read back as the stored object")
	}
	return nil
}

// apply records the edits of an item; they are made on the List's text
// when it is written, all at once, and checked against the whole List.
func (it *itemOf) apply(edits []Edit, want map[string]interface{}) {
	st := it.list.list
	for _, e := range edits {
		e.Path = it.inList(e.Path)
		st.pending = append(st.pending, e)
	}
	if st.want == nil {
		st.want = make(map[string]interface{}, len(it.list.Object))
		for k, v := range it.list.Object {
			st.want[k] = v
		}
		items, _ := it.list.Object["items"].([]interface{})
		st.want["items"] = append([]interface{}(nil), items...)
	}
	if it.inferred {
		w := make(map[string]interface{}, len(want))
		for k, v := range want {
			if k != "apiVersion" && k != "kind" {
				w[k] = v
			}
		}
		want = w
	}
	st.want["items"].([]interface{})[it.index] = want
	it.list.edited = true
}

// flush makes the pending edits of a List's items on its text.
func (d *Document) flush() error {
	if d.list == nil || len(d.list.pending) == 0 {
		return nil
	}
	// Taken first: the edits end in an Encode of the List.
	pending := d.list.pending
	d.list.pending = nil
	note, err := d.applyEdits(pending, d.list.want)
	d.list.note = note
	return err
}

// Reformatted is set when the edits of a List's items could not be made in
// place and the List was written again without its comments: why.
func (d *Document) Reformatted() (string, error) {
	if err := d.flush(); err != nil {
		return "", err
	}
	if d.list == nil {
		return "", nil
	}
	return d.list.note, nil
}

// Encode writes the document: its original text when nothing was edited,
// otherwise the edited node tree, which keeps comments and key order.
func (d *Document) Encode() ([]byte, error) {
	if d.item != nil {
		return nil, fmt.Errorf("%s: an item of a List is written with its List", d.Source)
	}
	if err := d.flush(); err != nil {
		return nil, err
	}
	return d.text()
}

// Reparse reads the edited document back the way kubectl would send it.
func (d *Document) Reparse() (map[string]interface{}, error) {
	if d.item != nil {
		list, err := d.item.list.Reparse()
		if err != nil {
			return nil, err
		}
		items, _ := list["items"].([]interface{})
		obj, _ := items[d.item.index].(map[string]interface{})
		if d.item.inferred {
			obj["apiVersion"], obj["kind"] = d.Object["apiVersion"], d.Object["kind"]
		}
		return obj, nil
	}
	b, err := d.Encode()
	if err != nil {
		return nil, err
	}
	js, err := sigsyaml.YAMLToJSON(b)
	if err != nil {
		return nil, err
	}
	return decodeObject(js)
}
