package document

// Navigation, the fourth tier: finding a path's nodes (and line) in the
// YAML node tree.

import (
	"fmt"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// root is the document's top-level node.
func (d *Document) root() *kyaml.Node {
	n := d.tree()
	if n == nil || len(n.Content) == 0 {
		return nil
	}
	return n.Content[0]
}

// locate walks the node tree along p. It returns the node holding the value
// and, when the last segment is an object key, the key node and the mapping
// that holds it. Aliases are followed for reading only: an edit through an
// alias would change every place the anchor is used.
func (d *Document) locate(p fieldpath.Path) (value, key, parent *kyaml.Node, viaAlias bool, err error) {
	return d.walk(p, false)
}

// walk is locate; with merges, a key not in a mapping is looked for in what
// its merge keys (<<) bring in, as viaAlias: what kubectl sends has it, and
// it has a line, but an edit there would change every place it is merged.
func (d *Document) walk(p fieldpath.Path, merges bool) (value, key, parent *kyaml.Node, viaAlias bool, err error) {
	if d.item != nil {
		return d.item.list.walk(d.item.inList(p), merges)
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
		if j < 0 && merges {
			if m, mj := mergedKey(n, s.Key, 0); m != nil {
				n, j, viaAlias = m, mj, true
			}
		}
		if j < 0 {
			return nil, nil, nil, viaAlias, fmt.Errorf("%s: not found in the YAML source", p[:i+1])
		}
		parent, key, n = n, n.Content[j], n.Content[j+1]
	}
	if n == nil {
		// No node tree for the document, or an empty one.
		return nil, nil, nil, viaAlias, fmt.Errorf("%s: not found in the YAML source", p)
	}
	return n, key, parent, viaAlias, nil
}

// entry finds the block-mapping entry at p: its key, value and mapping.
func (d *Document) entry(p fieldpath.Path) (key, value, mapping *kyaml.Node, err error) {
	if len(p) == 0 || p[len(p)-1].IsIndex {
		return nil, nil, nil, fmt.Errorf("%s: not an object field", p)
	}
	value, key, mapping, viaAlias, err := d.locate(p)
	if err != nil {
		return nil, nil, nil, err
	}
	if viaAlias || mapping.Style&kyaml.FlowStyle != 0 || mapping.Kind != kyaml.MappingNode {
		return nil, nil, nil, fmt.Errorf("%s: not in a block mapping", p)
	}
	return key, value, mapping, nil
}

// maxMergeDepth bounds the merges followed: a merged mapping may merge
// another, and an alias may loop back to a mapping that holds it.
const maxMergeDepth = 100

// mergedKey finds key k among what the merge keys (<<) of mapping m bring
// in, as YAML merges them: an alias or a mapping, or a list of them, the
// first that has k winning; merges of merged mappings too. It returns the
// mapping holding k and its index there, or nil.
func mergedKey(m *kyaml.Node, k string, depth int) (*kyaml.Node, int) {
	if depth > maxMergeDepth {
		return nil, -1
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		if key := m.Content[j]; key.Kind != kyaml.ScalarNode || key.Tag != kyaml.MergeTag {
			continue
		}
		sources := []*kyaml.Node{m.Content[j+1]}
		if v := deref(m.Content[j+1]); v.Kind == kyaml.SequenceNode {
			sources = v.Content
		}
		for _, src := range sources {
			src = deref(src)
			if src.Kind != kyaml.MappingNode {
				continue
			}
			at := -1
			for i := 0; i+1 < len(src.Content); i += 2 {
				if c := src.Content[i]; c.Value == k && c.Tag != kyaml.MergeTag {
					at = i // the last, as for keyAt
				}
			}
			if at >= 0 {
				return src, at
			}
			if n, i := mergedKey(src, k, depth+1); n != nil {
				return n, i
			}
		}
	}
	return nil, -1
}

func deref(n *kyaml.Node) *kyaml.Node {
	if n.Kind == kyaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func nextKey(mapping, key *kyaml.Node) *kyaml.Node {
	for j := 0; j+3 < len(mapping.Content); j += 2 {
		if mapping.Content[j] == key {
			return mapping.Content[j+2]
		}
	}
	return nil
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
	value, key, _, _, err := d.walk(p, true)
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

// NodeLine is the line of the field at p below n, a node tree as kyaml
// reads it (a KRM function's item as the function read it), found as Line
// finds it in a document; 0 when it is not there.
func NodeLine(n *kyaml.Node, p fieldpath.Path) int {
	d := &Document{}
	d.setTree(&kyaml.Node{Kind: kyaml.DocumentNode, Content: []*kyaml.Node{n}}, nil)
	return d.Line(p)
}
