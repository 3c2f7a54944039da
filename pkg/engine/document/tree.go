package document

// Tree edit, the third tier: edits of the YAML node tree, which keep
// comments and key order but not the layout; and the last resort of writing
// the document again.

import (
	"fmt"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// remove deletes the object field at p, with the comments attached to it.
func (d *Document) remove(p fieldpath.Path) error {
	if len(p) == 0 || p[len(p)-1].IsIndex {
		return fmt.Errorf("%s: only object fields can be removed", p)
	}
	_, key, parent, viaAlias, err := d.locate(p)
	if _, _, _, _, merr := d.walk(p, true); err != nil && merr == nil {
		return fmt.Errorf("%s: the field comes through a YAML merge key (<<); edit what it merges instead", p)
	}
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

// set sets the value at p to v (a JSON value), adding the object field when
// it is missing. The parent must exist.
func (d *Document) set(p fieldpath.Path, v interface{}) error {
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

// replaceWith replaces the whole document by obj, written as plain YAML. It
// is the fallback when an edit cannot be made in place.
func (d *Document) replaceWith(obj map[string]interface{}) error {
	n, err := toNode(obj)
	if err != nil {
		return err
	}
	d.tree() // parsed first: the tree is replaced, not parsed later
	d.node = &kyaml.Node{Kind: kyaml.DocumentNode, Content: []*kyaml.Node{n}}
	d.keys = nil
	d.out, d.edited = nil, true
	return nil
}
