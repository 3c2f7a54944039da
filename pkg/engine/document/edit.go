package document

import (
	"bytes"
	"fmt"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// root is the document's top-level node.
func (d *Document) root() *kyaml.Node {
	if d.node == nil || len(d.node.Content) == 0 {
		return nil
	}
	return d.node.Content[0]
}

// locate walks the node tree along p. It returns the node holding the value
// and, when the last segment is an object key, the key node and the mapping
// that holds it. Aliases are followed for reading only: an edit through an
// alias would change every place the anchor is used.
func (d *Document) locate(p fieldpath.Path) (value, key, parent *kyaml.Node, viaAlias bool, err error) {
	if d.item != nil {
		return d.item.list.locate(d.item.inList(p))
	}
	n := d.root()
	for i, s := range p {
		if n == nil {
			return nil, nil, nil, viaAlias, fmt.Errorf("%s: not found in the YAML source", p[:i+1])
		}
		if n.Kind == kyaml.AliasNode {
			n, viaAlias = n.Alias, true
		}
		if s.IsIndex {
			if n.Kind != kyaml.SequenceNode || s.Index >= len(n.Content) {
				return nil, nil, nil, viaAlias, fmt.Errorf("%s: not found in the YAML source", p[:i+1])
			}
			parent, key, n = n, nil, n.Content[s.Index]
			continue
		}
		if n.Kind != kyaml.MappingNode {
			return nil, nil, nil, viaAlias, fmt.Errorf("%s: not found in the YAML source", p[:i+1])
		}
		j := d.keyAt(n, s.Key)
		if j < 0 {
			return nil, nil, nil, viaAlias, fmt.Errorf("%s: not found in the YAML source", p[:i+1])
		}
		parent, key, n = n, n.Content[j], n.Content[j+1]
	}
	return n, key, parent, viaAlias, nil
}

// indexFrom is the size of a mapping's content from which its keys are
// indexed: a scan per lookup made thousands of edits of one mapping quadratic.
const indexFrom = 32

// keyAt returns the index in m.Content of the last key k of mapping m (the
// value kubectl keeps), or -1.
func (d *Document) keyAt(m *kyaml.Node, k string) int {
	if len(m.Content) < indexFrom {
		at := -1
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == k {
				at = j
			}
		}
		return at
	}
	idx, ok := d.keys[m]
	if !ok {
		idx = make(map[string]int, len(m.Content)/2)
		for j := 0; j+1 < len(m.Content); j += 2 {
			idx[m.Content[j].Value] = j
		}
		if d.keys == nil {
			d.keys = map[*kyaml.Node]map[string]int{}
		}
		d.keys[m] = idx
	}
	if j, ok := idx[k]; ok {
		return j
	}
	return -1
}

// Line returns the file line of the field at p (its key's line for an object
// field), or 0 when it cannot be found in the source.
func (d *Document) Line(p fieldpath.Path) int {
	if d.item != nil {
		return d.item.list.Line(d.item.inList(p))
	}
	value, key, _, _, err := d.locate(p)
	if err != nil {
		return 0
	}
	if key != nil {
		return key.Line + d.lineShift
	}
	if value != nil {
		return value.Line + d.lineShift
	}
	return 0
}

// Remove deletes the object field at p, with the comments attached to it.
func (d *Document) Remove(p fieldpath.Path) error {
	if len(p) == 0 || p[len(p)-1].IsIndex {
		return fmt.Errorf("%s: only object fields can be removed", p)
	}
	_, key, parent, viaAlias, err := d.locate(p)
	if err != nil {
		return err
	}
	if viaAlias {
		return fmt.Errorf("%s: the field is reached through a YAML alias; edit the anchor instead", p)
	}
	for j := 0; j+1 < len(parent.Content); j += 2 {
		if parent.Content[j] == key {
			// Keep a head comment that introduces the next field.
			parent.Content = append(parent.Content[:j], parent.Content[j+2:]...)
			delete(d.keys, parent)
			d.edited = true
			return nil
		}
	}
	return fmt.Errorf("%s: not found in the YAML source", p)
}

// Set sets the value at p to v (a JSON value), adding the object field when
// it is missing. The parent must exist.
func (d *Document) Set(p fieldpath.Path, v interface{}) error {
	if len(p) == 0 {
		return fmt.Errorf("cannot replace the whole document")
	}
	newNode, err := toNode(v)
	if err != nil {
		return err
	}
	value, _, _, viaAlias, err := d.locate(p)
	if err == nil {
		if viaAlias {
			return fmt.Errorf("%s: the field is reached through a YAML alias; edit the anchor instead", p)
		}
		// Replace in place: keep the comments around the old value.
		newNode.HeadComment, newNode.LineComment, newNode.FootComment = value.HeadComment, value.LineComment, value.FootComment
		*value = *newNode
		delete(d.keys, value)
		d.edited = true
		return nil
	}
	last := p[len(p)-1]
	if last.IsIndex {
		return err
	}
	parentValue, _, _, viaAlias, perr := d.locate(p[:len(p)-1])
	if perr != nil {
		return perr
	}
	if viaAlias {
		return fmt.Errorf("%s: the field is reached through a YAML alias; edit the anchor instead", p)
	}
	if parentValue.Kind != kyaml.MappingNode {
		if parentValue.Tag == kyaml.NodeTagNull || parentValue.Value == "null" || parentValue.Value == "~" || parentValue.Value == "" {
			*parentValue = kyaml.Node{Kind: kyaml.MappingNode, Tag: kyaml.NodeTagMap, HeadComment: parentValue.HeadComment, LineComment: parentValue.LineComment}
			delete(d.keys, parentValue)
		} else {
			return fmt.Errorf("%s: parent is not an object in the YAML source", p)
		}
	}
	if parentValue.Style&kyaml.FlowStyle != 0 {
		newNode.Style |= kyaml.FlowStyle
	}
	parentValue.Content = append(parentValue.Content,
		&kyaml.Node{Kind: kyaml.ScalarNode, Tag: kyaml.NodeTagString, Value: last.Key}, newNode)
	if idx, ok := d.keys[parentValue]; ok {
		idx[last.Key] = len(parentValue.Content) - 2
	}
	d.edited = true
	return nil
}

// toNode encodes a JSON value as a YAML node in block style.
func toNode(v interface{}) (*kyaml.Node, error) {
	var n kyaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return &n, nil
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
	if !d.edited {
		return d.raw, nil
	}
	if d.out != nil {
		return d.out, nil
	}
	var buf bytes.Buffer
	enc := kyaml.NewEncoderWithOptions(&buf, &kyaml.EncoderOptions{SeqIndent: kyaml.SequenceIndentStyle(d.seqIndent)})
	if err := enc.Encode(d.node); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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

// ReplaceWith replaces the whole document by obj, written as plain YAML. It
// is the fallback when an edit cannot be made in place.
func (d *Document) ReplaceWith(obj map[string]interface{}) error {
	n, err := toNode(obj)
	if err != nil {
		return err
	}
	d.node = &kyaml.Node{Kind: kyaml.DocumentNode, Content: []*kyaml.Node{n}}
	d.keys = nil
	d.out, d.edited = nil, true
	return nil
}
