package document

import (
	"fmt"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// duplicate is a key that a mapping has twice, at two lines of the file.
type duplicate struct {
	path        fieldpath.Path
	first, last int
}

// warning words it for the object that holds the key, at inObject of it.
func (dup duplicate) warning(file string, inObject fieldpath.Path) Warning {
	return Warning{
		Source: Source{File: file, Line: dup.last},
		Msg: fmt.Sprintf("duplicate key %q (also at line %d): kubectl sends only the last value, of line %d",
			inObject.String(), dup.first, dup.last),
	}
}

// duplicateKeys finds the keys a mapping of the document has twice.
// kubectl's YAML and JSON readers keep the last value without a word (so the
// server never sees the others); kustomize refuses such a file.
func duplicateKeys(d *Document) []duplicate {
	var out []duplicate
	// One path, grown and truncated in place as the walk descends: a copy per
	// level is quadratic in depth. A duplicate's path is a copy (Child).
	var walk func(n *kyaml.Node, p fieldpath.Path)
	walk = func(n *kyaml.Node, p fieldpath.Path) {
		switch n.Kind {
		case kyaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, p)
			}
		case kyaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, append(p, fieldpath.Index(i)))
			}
		case kyaml.MappingNode:
			seen := map[string]*kyaml.Node{}
			for j := 0; j+1 < len(n.Content); j += 2 {
				k := n.Content[j]
				if k.Kind != kyaml.ScalarNode || k.Value == "<<" {
					continue
				}
				if first, ok := seen[k.Value]; ok {
					out = append(out, duplicate{path: p.Child(fieldpath.Key(k.Value)), first: first.Line + d.lineShift, last: k.Line + d.lineShift})
				}
				seen[k.Value] = k
			}
			for j := 0; j+1 < len(n.Content); j += 2 {
				walk(n.Content[j+1], append(p, fieldpath.Key(n.Content[j].Value)))
			}
		}
	}
	if n := d.tree(); n != nil {
		walk(n, nil)
	}
	return out
}
