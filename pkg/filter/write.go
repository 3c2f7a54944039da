package filter

import (
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
)

// execute runs p over the ResourceList read by rw, as kyaml's
// framework.Execute does, and writes the ResourceList back with
// writeResourceList: the same bytes, in bounded memory.
func execute(p framework.ResourceListProcessor, rw *kio.ByteReadWriter) error {
	rl := framework.ResourceList{}
	var err error
	if rl.Items, err = rw.Read(); err != nil {
		return fmt.Errorf("failed to read ResourceList input: %w", err)
	}
	rw.Reader = nil // the input's text, read: it can go
	rl.FunctionConfig = rw.FunctionConfig
	// The path, index and id annotations, internal and legacy, kept in step.
	annotations, err := kio.PreprocessResourcesForInternalAnnotationMigration(rl.Items)
	if err != nil {
		return err
	}
	processErr := p.Process(&rl)
	if err := kio.ReconcileInternalAnnotations(rl.Items, annotations); err != nil {
		return err
	}
	if err := writeResourceList(rw, rl.Items, rl.Results); err != nil {
		return err
	}
	return processErr
}

// writeResourceList writes a ResourceList as kyaml's ByteReadWriter does,
// byte for byte, but its items and results a batch at a time. The YAML
// encoder keeps a record of every event of the document it encodes until
// the document ends: a ResourceList written whole costs hundreds of bytes
// per node of every item and result (gigabytes for 10 MB of items). A block
// sequence under a key of the root mapping, in kyaml's compact style, is
// written at column 0, exactly as the same sequence written as a document
// of its own: so the wrapper is written with both lists empty, and the
// lists, batch by batch, in their place.
func writeResourceList(rw *kio.ByteReadWriter, items []*yaml.RNode, results framework.Results) error {
	if rw.NoWrap || rw.WrappingKind == "" || !rw.KeepReaderAnnotations {
		return writePlain(rw, items, results)
	}
	text, err := emptyWrapper(rw, len(results) > 0)
	if err != nil {
		return err
	}
	for _, list := range []wrappedList{
		{"items", itemBatches(items), func(w io.Writer, from, to int) error { return writeItems(w, items[from:to], rw.Style) }},
		{"results", countBatches(len(results)), func(w io.Writer, from, to int) error { return writeResults(w, results[from:to]) }},
	} {
		if len(list.batches) == 0 {
			continue // kyaml writes "items: []"; no results, no key
		}
		if text, err = writeInPlace(rw.Writer, text, list); err != nil {
			return err
		}
	}
	_, err = rw.Writer.Write(text)
	return err
}

// writePlain writes the items as kyaml does when it does not keep the
// wrapper's annotations, or there is no wrapper: plain documents, one at a
// time. Unwrapped, they carry no results: kyaml's framework.Execute
// marshals them anyway, tens of kilobytes per result in the YAML encoder
// (gigabytes for an object with 100,000 pruned fields), for nothing.
func writePlain(rw *kio.ByteReadWriter, items []*yaml.RNode, results framework.Results) error {
	if len(results) > 0 && !rw.NoWrap && rw.WrappingKind != "" {
		b, err := yaml.Marshal(results)
		if err != nil {
			return err
		}
		if rw.Results, err = yaml.Parse(string(b)); err != nil {
			return err
		}
	}
	return rw.Write(items)
}

// emptyWrapper is the ResourceList of rw as kyaml's ByteWriter writes it
// with no items, and with an empty list of results if hasResults: the
// text around the lists, which writeInPlace writes in its place.
func emptyWrapper(rw *kio.ByteReadWriter, hasResults bool) ([]byte, error) {
	var wrapper bytes.Buffer
	w := kio.ByteWriter{
		Writer:                &wrapper,
		KeepReaderAnnotations: true,
		Style:                 rw.Style,
		FunctionConfig:        rw.FunctionConfig,
		WrappingAPIVersion:    rw.WrappingAPIVersion,
		WrappingKind:          rw.WrappingKind,
	}
	if hasResults {
		w.Results = yaml.NewListRNode()
	}
	if err := w.Write(nil); err != nil {
		return nil, err
	}
	return wrapper.Bytes(), nil
}

// wrappedList is a list of the ResourceList, items or results: its key,
// its batches (where each begins, and the list's length last), and how to
// write its elements from to to as a block sequence.
type wrappedList struct {
	key     string
	batches []int
	write   func(w io.Writer, from, to int) error
}

// writeInPlace writes text up to the line of the list's empty key, then
// the list, batch by batch, in its place, and returns the rest of text.
func writeInPlace(out io.Writer, text []byte, list wrappedList) ([]byte, error) {
	empty := list.key + ": []\n"
	at := lineAt(text, empty)
	if at < 0 {
		return nil, fmt.Errorf("writing the ResourceList: no %s in its wrapper", list.key)
	}
	if _, err := out.Write(append(text[:at:at], list.key+":\n"...)); err != nil {
		return nil, err
	}
	if err := writeBatches(out, list); err != nil {
		return nil, err
	}
	return text[at+len(empty):], nil
}

// writeBatches writes the elements of list a batch at a time: the batches
// are encoded on every core and written in order.
func writeBatches(out io.Writer, list wrappedList) error {
	type encoded struct {
		text []byte
		err  error
	}
	return ordered.Map(ordered.Workers(), func(emit func(int) error) error {
		for b := 0; b+1 < len(list.batches); b++ {
			if err := emit(b); err != nil {
				return err
			}
		}
		return nil
	}, func(b int) encoded {
		var buf bytes.Buffer
		err := list.write(&buf, list.batches[b], list.batches[b+1])
		return encoded{buf.Bytes(), err}
	}, func(_ int, e encoded) error {
		if e.err != nil {
			return e.err
		}
		_, err := out.Write(e.text)
		return err
	})
}

// countBatches are the batches of a list of n elements, batchSize each:
// where each begins, then n; none for an empty list.
func countBatches(n int) []int {
	var batches []int
	for from := 0; from < n; from += batchSize {
		batches = append(batches, from)
	}
	if n > 0 {
		batches = append(batches, n)
	}
	return batches
}

// itemBatches are the batches of items (as countBatches), of at most
// batchSize items and, but for an item larger on its own, batchNodes YAML
// nodes: the encoder's record of a batch takes some 300 bytes a node, in
// one array grown as it goes, and a batch of 127 CRDs (16 MB of YAML) took
// 400 MB.
func itemBatches(items []*yaml.RNode) []int {
	var batches []int
	nodes := 0
	for i, it := range items {
		n := countNodes(it.YNode())
		if len(batches) == 0 || i-batches[len(batches)-1] >= batchSize || nodes+n > batchNodes {
			batches = append(batches, i)
			nodes = 0
		}
		nodes += n
	}
	if len(items) > 0 {
		batches = append(batches, len(items))
	}
	return batches
}

// countNodes is the number of YAML nodes of the tree at n, aliases not
// followed.
func countNodes(n *yaml.Node) int {
	count := 1
	for _, c := range n.Content {
		count += countNodes(c)
	}
	return count
}

// lineAt is the offset of the first line of text that is line, or -1.
func lineAt(text []byte, line string) int {
	for at := 0; at < len(text); {
		if bytes.HasPrefix(text[at:], []byte(line)) {
			return at
		}
		next := bytes.IndexByte(text[at:], '\n')
		if next < 0 {
			break
		}
		at += next + 1
	}
	return -1
}

// batchSize is how many items or results are encoded at once, at most;
// batchNodes how many YAML nodes of items.
var (
	batchSize  = 256
	batchNodes = 1 << 14
)

// writeItems writes items as ByteWriter does: copies, with their empty
// annotations cleared, as a block sequence. Written, an item is dropped
// from items (nothing reads it after), so that its nodes can go while the
// others are written.
func writeItems(w io.Writer, items []*yaml.RNode, style yaml.Style) error {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, it := range items {
		c, err := writable(it, style)
		if err != nil {
			return err
		}
		seq.Content = append(seq.Content, c)
	}
	if err := encodeDocument(w, seq); err != nil {
		return err
	}
	clear(items)
	return nil
}

// writable is item as ByteWriter writes it: a copy with its empty
// annotations cleared (yaml.ClearEmptyAnnotations) and the style set. Only
// the root node is copied when clearing would change nothing, as for
// nearly every item: a deep copy of each item cost as much memory as the
// ResourceList's nodes.
func writable(item *yaml.RNode, style yaml.Style) (*yaml.Node, error) {
	var c *yaml.Node
	if clearsAnnotations(item.YNode()) {
		copied := item.Copy()
		if err := yaml.ClearEmptyAnnotations(copied); err != nil {
			return nil, err
		}
		c = copied.YNode()
	} else {
		root := *item.YNode()
		c = &root
	}
	if style != 0 {
		c.Style = style
	}
	return c, nil
}

// clearsAnnotations reports whether yaml.ClearEmptyAnnotations may change
// (or refuse) the item at n: it removes a key metadata or
// metadata.annotations whose value has no content (a scalar, an alias, an
// empty map). Any such key, or a metadata that is no map, says yes.
func clearsAnnotations(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != yaml.MetadataField {
			continue
		}
		meta := n.Content[i+1]
		if len(meta.Content) == 0 || meta.Kind != yaml.MappingNode {
			return true
		}
		for j := 0; j+1 < len(meta.Content); j += 2 {
			if meta.Content[j].Value == yaml.AnnotationsField && len(meta.Content[j+1].Content) == 0 {
				return true
			}
		}
	}
	return false
}

// writeResults writes results as framework.Execute and ByteWriter do:
// marshalled, parsed, encoded.
func writeResults(w io.Writer, results framework.Results) error {
	b, err := yaml.Marshal(results)
	if err != nil {
		return err
	}
	node, err := yaml.Parse(string(b))
	if err != nil {
		return err
	}
	return encodeDocument(w, node.YNode())
}

// encodeDocument writes n as a YAML document of its own, as kyaml's
// ByteWriter encodes one.
func encodeDocument(w io.Writer, n *yaml.Node) error {
	enc := yaml.NewEncoder(w)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}); err != nil {
		return err
	}
	return enc.Close()
}
