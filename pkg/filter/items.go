package filter

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// checkItemMetadata refuses an item whose metadata, annotations or labels
// are not maps, before kyaml sees it: kyaml's annotation handling drops
// such annotations without a word (the item then passed, exit 0) or fails
// with "wrong node kind" and no line, and the API server refuses the
// object whatever its kind, ObjectMeta failing to decode. The message is
// the server's (prune.CheckMetadata), at the item's line. Only an item
// whose node tree shows the problem is decoded.
func checkItemMetadata(item *yaml.Node, where document.Source) error {
	meta := fieldOf(item, "metadata")
	if meta == nil || meta.Tag == yaml.NodeTagNull {
		return nil
	}
	bad := meta.Kind != yaml.MappingNode
	for _, k := range []string{"annotations", "labels"} {
		if v := fieldOf(meta, k); !bad && v != nil && v.Tag != yaml.NodeTagNull && v.Kind != yaml.MappingNode {
			bad = true
		}
	}
	if !bad {
		return nil
	}
	var obj map[string]interface{}
	if err := item.Decode(&obj); err != nil {
		return &document.InputError{Source: where, Msg: err.Error(), Err: err}
	}
	return prune.CheckMetadata(&document.Document{Object: obj, Source: where})
}

// fieldOf is the value of key in the mapping n (aliases followed), nil
// when n is no mapping or has no such key.
func fieldOf(n *yaml.Node, key string) *yaml.Node {
	n = resolved(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolved(n.Content[i+1])
		}
	}
	return nil
}

func resolved(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// maxInlinedNodes bounds what inlining aliases of other items copies: some
// kilobytes of anchors and aliases expand to gigabytes. The document
// reader then bounds what is left as it bounds any document's aliases.
const maxInlinedNodes = 1 << 20

// withForeignAliasesInlined is item, or a copy of it in which every alias
// of an anchor defined outside it (in an earlier item of the ResourceList:
// valid YAML, one document) is replaced by a copy of what it names, so
// that the item reads on its own as it reads in the list. Aliases of the
// item's own anchors are kept.
func withForeignAliasesInlined(item *yaml.Node, label string) (*yaml.Node, error) {
	// Most items have no alias: one walk, nothing allocated.
	var aliases []*yaml.Node
	var findAliases func(n *yaml.Node)
	findAliases = func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode {
			aliases = append(aliases, n)
		}
		for _, c := range n.Content {
			findAliases(c)
		}
	}
	findAliases(item)
	if len(aliases) == 0 {
		return item, nil
	}
	own := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		own[n] = true
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(item)
	if !slices.ContainsFunc(aliases, func(a *yaml.Node) bool { return !own[a.Alias] }) {
		return item, nil
	}
	copied := 0
	var cp func(n *yaml.Node, inForeign bool) (*yaml.Node, error)
	cp = func(n *yaml.Node, inForeign bool) (*yaml.Node, error) {
		if copied++; copied > maxInlinedNodes {
			return nil, fmt.Errorf("%s: aliases of anchors in other items expand to more than %d YAML nodes: refused, as the document reader refuses aliases that expand beyond what the API server accepts", label, maxInlinedNodes)
		}
		if n.Kind == yaml.AliasNode && (inForeign || !own[n.Alias]) {
			// What it names, as a plain copy: its anchor is not in this item.
			return cp(n.Alias, true)
		}
		out := *n
		if inForeign {
			out.Anchor = "" // a copy defines no anchor: another copy may follow
		}
		out.Content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			var err error
			if out.Content[i], err = cp(c, inForeign); err != nil {
				return nil, err
			}
		}
		return &out, nil
	}
	return cp(item, false)
}
