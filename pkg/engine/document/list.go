package document

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// listState is what a List document holds: its items, as kubectl sends
// them, and the edits made to them, applied to the List's text when it is
// written (once, however many items change).
type listState struct {
	items   []*Document
	pending []Edit
	want    map[string]interface{} // the List as it must read back: edited items replaced
	note    string
}

// itemOf places an item in its List document.
type itemOf struct {
	list  *Document
	index int
	// inferred: the item has neither apiVersion nor kind, and kubectl gives
	// it the List's (FooList → Foo); the text has neither.
	inferred bool
}

// expandList makes the items of a List document documents of their own, as
// kubectl's resource builder does: any object with "items" decodes as a list
// (k8s.io/apimachinery's unstructured scheme), and each item is sent on its
// own. An object without a kind is left to the checks, which refuse it.
func (d *Document) expandList(js []byte) error {
	if _, ok := d.Object["items"]; !ok {
		return nil
	}
	if kind, _ := d.Object["kind"].(string); kind == "" {
		return nil
	}
	if js == nil {
		// Byte for byte the JSON sigs.k8s.io/yaml makes (see toObject).
		var err error
		if js, err = json.Marshal(d.Object); err != nil {
			return &InputError{Source: d.Source, Msg: err.Error()}
		}
	}
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
	if err != nil {
		return &InputError{Source: d.Source, Msg: fmt.Sprintf("kubectl reads an object with \"items\" as a list, and cannot read this one: %v", err)}
	}
	list, ok := obj.(*unstructured.UnstructuredList)
	if !ok {
		return nil
	}
	raw, _ := d.Object["items"].([]interface{})
	st := &listState{items: make([]*Document, len(list.Items))}
	for i := range list.Items {
		it := &list.Items[i]
		p := fieldpath.Path{fieldpath.Key("items"), fieldpath.Index(i)}
		src := Source{File: d.Source.File, Line: d.Line(p)}
		if it.IsList() {
			// kubectl's FlattenListVisitor fails on a list in a list.
			return &InputError{Source: src, Msg: fmt.Sprintf("items[%d] has \"items\" too: kubectl reads it as a list in a list, which it cannot expand", i)}
		}
		orig, _ := raw[i].(map[string]interface{})
		_, hasKind := orig["kind"]
		_, hasAPIVersion := orig["apiVersion"]
		st.items[i] = &Document{
			Source: src,
			Object: it.Object,
			item:   &itemOf{list: d, index: i, inferred: !hasKind && !hasAPIVersion && it.GetKind() != ""},
		}
	}
	d.list = st
	return nil
}

// IsList reports whether the document is a List whose items kubectl sends
// one by one.
func (d *Document) IsList() bool { return d.list != nil }

// Objects are the objects kubectl sends for the document: the items of a
// List, else the document itself.
func (d *Document) Objects() []*Document {
	if d.list != nil {
		return d.list.items
	}
	return []*Document{d}
}

// inList is p of an item as a path of its List document.
func (it *itemOf) inList(p fieldpath.Path) fieldpath.Path {
	out := make(fieldpath.Path, 0, len(p)+2)
	out = append(out, fieldpath.Key("items"), fieldpath.Index(it.index))
	return append(out, p...)
}
