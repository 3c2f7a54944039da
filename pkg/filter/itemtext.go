package filter

// The function's ResourceList read from its text: each item located in the
// input, parsed alone, written as kyaml writes it in the list and read by
// the engine from that text, its node tree dropped; the list's nodes are
// never held whole (some 160 bytes a node: 150 MB for 22 MB of YAML), and
// the list is parsed once, not twice, and each item written once, not
// twice. kyaml's reader reads what this does not take (readList): what
// comes out is the same, byte for byte (TestItemsReadAsKyamlReadsThem).

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// errNotByText says that a ResourceList is not one whose items readList
// takes from its text: kyaml's reader reads it (execute).
var errNotByText = errors.New("the ResourceList is read by kyaml's reader")

// itemsList is a ResourceList whose items are located in its text.
type itemsList struct {
	wrapper []byte   // the list with "items: []" in place of its items
	items   [][]byte // the text of each item, "- " and all, as in the list
}

// splitList locates the items of a ResourceList in data: a block sequence
// under the key "items:" (a line of its own, at column 0), each item from
// a line "- " at the sequence's indentation to the next. Anything else
// (another document, a comment between two items or after one, a line
// break "\r", tabs) is not located: ok false. A line "- " inside a quoted
// or flow scalar leaves an item that does not parse alone, and a key
// "items:" that is not the list's leaves a wrapper without it (readList).
func splitList(data []byte) (l itemsList, ok bool) {
	if bytes.IndexByte(data, '\r') >= 0 || bytes.IndexByte(data, '\t') >= 0 || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return l, false
	}
	start, end, indent := -1, -1, -1
	var starts []int
	lastComment := false
	for at := 0; at < len(data); {
		next := at + bytes.IndexByte(data[at:], '\n') + 1
		if next == at {
			next = len(data)
		}
		text := data[at:next]
		if bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("...")) || bytes.HasPrefix(text, []byte("%")) {
			return l, false // another document, a directive
		}
		content := bytes.TrimLeft(bytes.TrimRight(text, "\n"), " ")
		col := len(text) - len(bytes.TrimLeft(text, " "))
		switch {
		case start < 0:
			if string(text) == "items:\n" {
				start = next
			}
		case end >= 0 || len(content) == 0:
		case content[0] == '#':
			if indent < 0 || col <= indent+1 {
				return l, false // a comment of the list, not of an item's fields
			}
			lastComment = true
		case (indent < 0 || col == indent) && isEntry(content):
			if lastComment {
				return l, false // an item's last line a comment: whose it is depends on what follows
			}
			indent = col
			starts = append(starts, at)
		case indent < 0:
			return l, false
		case col <= indent:
			end = at
		default:
			lastComment = false
		}
		at = next
	}
	if start < 0 || len(starts) == 0 || lastComment {
		return l, false
	}
	if end < 0 {
		end = len(data)
	}
	for k, from := range starts {
		to := end
		if k+1 < len(starts) {
			to = starts[k+1]
		}
		l.items = append(l.items, data[from:to])
	}
	l.wrapper = slices.Concat(data[:start-len("items:\n")], []byte("items: []\n"), data[end:])
	return l, true
}

// isEntry reports whether a line's content begins an entry of a block
// sequence.
func isEntry(content []byte) bool {
	return string(content) == "-" || bytes.HasPrefix(content, []byte("- "))
}

// readList reads a ResourceList by its text: the wrapper (functionConfig
// and the rest) with kyaml's reader, as execute does, each item alone
// (readItem), on every core. errNotByText when splitList does not locate
// its items, or kyaml would read them otherwise.
func readList(data []byte) (*kio.ByteReadWriter, []*listItem, *protocolAnnotations, error) {
	l, ok := splitList(data)
	if !ok || !wrapsNoItems(l.wrapper) {
		return nil, nil, nil, errNotByText
	}
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(l.wrapper), OmitReaderAnnotations: true, KeepReaderAnnotations: true}
	if nodes, err := rw.Read(); err != nil || len(nodes) != 0 || rw.WrappingKind != kio.ResourceListKind {
		return nil, nil, nil, errNotByText
	}
	rw.Reader = nil
	items := make([]*listItem, len(l.items))
	type read struct {
		it  *listItem
		err error
	}
	err := ordered.Map(ordered.Workers(), func(emit func(int) error) error {
		for i := range l.items {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}, func(i int) read {
		it, err := readItem(l.items[i], i)
		return read{it, err}
	}, func(i int, r read) error {
		items[i] = r.it
		return r.err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	pa, err := protocolOf(items)
	return rw, items, pa, err
}

// wrapsNoItems reports whether wrapper, the ResourceList with "items: []"
// in place of its items (splitList), is a mapping whose one key items is
// that empty list: a key "items:" inside a scalar is not the list's.
func wrapsNoItems(wrapper []byte) bool {
	node, err := yaml.Parse(string(wrapper))
	if err != nil || node.YNode().Kind != yaml.MappingNode {
		return false
	}
	line := bytes.Count(wrapper[:bytes.Index(wrapper, []byte("\nitems: []\n"))+1], []byte("\n")) + 1
	if bytes.HasPrefix(wrapper, []byte("items: []\n")) {
		line = 1
	}
	found := 0
	content := node.YNode().Content
	for i := 0; i+1 < len(content); i += 2 {
		if content[i].Value != "items" {
			continue
		}
		found++
		v := content[i+1]
		if content[i].Line != line || content[i].Column != 1 || v.Kind != yaml.SequenceNode || len(v.Content) != 0 {
			return false
		}
	}
	return found == 1
}

// migrationID is the annotation kyaml's protocol sets on each item while
// the function runs, and clears once it ran (an orchestrator sends it).
const migrationID = kioutil.InternalAnnotationsMigrationResourceIDAnnotation

// readItem reads item i of a ResourceList from its text, as execute reads
// it from kyaml's node of the list: its legacy and internal annotations
// copied (kio.PreprocessResourcesForInternalAnnotationMigration), those of
// the protocol recorded, written as kyaml writes it in the list (listItem's
// seq), the node dropped. errNotByText for anything kyaml's reader and
// protocol read otherwise, or refuse (execute then says so).
func readItem(text []byte, i int) (*listItem, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(&doc); err != nil || len(doc.Content) != 1 {
		return nil, errNotByText
	}
	if next := (yaml.Node{}); dec.Decode(&next) != io.EOF {
		return nil, errNotByText
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 || seq.Content[0].Kind != yaml.MappingNode {
		return nil, errNotByText
	}
	node := yaml.NewRNode(seq.Content[0])
	if checkItemMetadata(node.YNode(), document.Source{}) != nil {
		return nil, errNotByText
	}
	it := &listItem{annotations: kioutil.GetInternalAnnotations(node)}
	if err := kioutil.CopyLegacyAnnotations(node); err != nil {
		return nil, errNotByText
	}
	annotations := node.GetAnnotations()
	for _, k := range fileAnnotations {
		if a, b := annotations[k[0]], annotations[k[1]]; a != "" && b != "" && a != b {
			return nil, errNotByText // kyaml refuses it
		}
		_, a := annotations[k[0]]
		_, b := annotations[k[1]]
		it.reconciled = it.reconciled || a || b
	}
	it.apiVersion, it.kind, it.path, it.fnConfig = node.GetApiVersion(), node.GetKind(), itemPath(node, i), isFunctionConfig(node)
	_, it.index, _ = kioutil.GetFileAnnotations(node)
	if !withoutIDAlike(node.YNode(), annotations) {
		return it, it.writeWithID(node, i)
	}
	if _, ok := annotations[migrationID]; ok {
		if err := node.PipeE(yaml.ClearAnnotation(migrationID)); err != nil {
			return nil, errNotByText
		}
	}
	return it, it.write(node)
}

// withoutIDAlike reports whether the engine reads item n alike with and
// without the protocol's annotation migrationID, which kyaml's protocol
// sets on every item while the function runs: its metadata a mapping of
// some field, its annotations none or some besides it, far within the
// server's bound of their size. The item is then read without it, written
// once: else as the protocol has it, and written again without it.
func withoutIDAlike(n *yaml.Node, annotations map[string]string) bool {
	meta := fieldOf(n, yaml.MetadataField)
	if meta == nil || meta.Kind != yaml.MappingNode || len(meta.Content) == 0 {
		return false
	}
	size := 0
	for k, v := range annotations {
		size += len(k) + len(v)
	}
	if size > 64<<10 {
		return false
	}
	a := fieldOf(meta, yaml.AnnotationsField)
	if a == nil {
		return !hasKey(meta, yaml.AnnotationsField)
	}
	others := len(annotations)
	if _, ok := annotations[migrationID]; ok {
		others--
	}
	return a.Kind == yaml.MappingNode && others > 0
}

// hasKey reports whether the mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// writeWithID sets the item's text as the protocol has it while the
// function runs, the annotation migrationID of item i set, and as kyaml
// writes it in the list once the function ran, the annotation cleared.
func (it *listItem) writeWithID(node *yaml.RNode, i int) error {
	if err := node.PipeE(yaml.SetAnnotation(migrationID, strconv.Itoa(i))); err != nil {
		return errNotByText
	}
	text, err := node.String()
	if err != nil {
		return err
	}
	if err := node.PipeE(yaml.ClearAnnotation(migrationID)); err != nil {
		return errNotByText
	}
	w, err := writable(node, 0)
	if err != nil {
		return err
	}
	it.text = text
	it.seq, err = encodeItem(w)
	return err
}

// fileAnnotations are the path, index and id annotations of kyaml's
// protocol, internal and legacy.
var fileAnnotations = [][2]string{
	{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation},
	{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation},
	{kioutil.IdAnnotation, kioutil.LegacyIdAnnotation},
}

// write sets the item's text: as kyaml writes it in the list (seq), and
// the text the engine reads where that is not seq unindented.
func (it *listItem) write(node *yaml.RNode) error {
	if clearsAnnotations(node.YNode()) {
		text, err := node.String()
		if err != nil {
			return err
		}
		it.text = text
		w, err := writable(node, 0)
		if err != nil {
			return err
		}
		it.seq, err = encodeItem(w)
		return err
	}
	var err error
	if it.seq, err = encodeItem(node.YNode()); err != nil {
		return err
	}
	if _, err := unindented(it.seq); err != nil {
		it.text, err = node.String()
		return err
	}
	return nil
}

// encodeItem writes n as an item of a list, as writeItems does: held until
// the list is written, at its length (a buffer grown is up to twice that).
func encodeItem(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	err := encodeDocument(&buf, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{n}})
	return bytes.Clone(buf.Bytes()), err
}

// errNotAnEntry: a text that is not one entry of a block sequence.
var errNotAnEntry = errors.New("not an entry of a list")

// unindented is seq, one entry of a block sequence at column 0 ("- ..."),
// as a document of its own: the entry's indicator and indentation taken
// off each line.
func unindented(seq []byte) (string, error) {
	if !bytes.HasPrefix(seq, []byte("- ")) {
		return "", errNotAnEntry
	}
	var b strings.Builder
	b.Grow(len(seq))
	for at := 0; at < len(seq); {
		next := at + bytes.IndexByte(seq[at:], '\n') + 1
		if next == at {
			next = len(seq)
		}
		line := seq[at:next]
		switch {
		case at == 0 || bytes.HasPrefix(line, []byte("  ")):
			b.Write(line[2:])
		case string(line) == "\n":
			b.WriteByte('\n')
		default:
			return "", errNotAnEntry
		}
		at = next
	}
	return b.String(), nil
}

// protocolAnnotations is what kyaml's protocol makes of the items'
// annotations once the function ran (kio.ReconcileInternalAnnotations):
// the format every item is written in, which the first item that has one
// of them says.
type protocolAnnotations struct {
	format      map[string]string // the first item's that has one, nil when none has
	bothFormats bool              // internal and legacy: an item as read keeps both
}

// protocolOf is the protocol's format of items, or errNotByText when
// kyaml refuses them (execute then says why).
func protocolOf(items []*listItem) (*protocolAnnotations, error) {
	all := make(map[string]map[string]string, len(items))
	pa := &protocolAnnotations{}
	for i, it := range items {
		all[strconv.Itoa(i)] = it.annotations
		if pa.format == nil && it.reconciled {
			pa.format = it.annotations
		}
	}
	if err := kio.ReconcileInternalAnnotations(nil, all); err != nil {
		return nil, errNotByText
	}
	internal, legacy := false, false
	for _, k := range fileAnnotations {
		_, a := pa.format[k[0]]
		_, b := pa.format[k[1]]
		internal, legacy = internal || a, legacy || b
	}
	pa.bothFormats = internal && legacy
	return pa, nil
}

// final is item i's text in the list once pruned or lowered (node) or as
// read (node nil), its annotations of the protocol reconciled as execute
// reconciles them: nil for the item's text as read.
func (pa *protocolAnnotations) final(it *listItem, i int, node *yaml.RNode) ([]byte, error) {
	if node == nil {
		if !it.reconciled || pa.bothFormats {
			return nil, nil // nothing of the protocol changes it
		}
		text, err := it.docText(i)
		if err != nil {
			return nil, err
		}
		if node, err = yaml.Parse(text); err != nil {
			return nil, err
		}
	}
	id := strconv.Itoa(i)
	if err := node.PipeE(yaml.SetAnnotation(migrationID, id)); err != nil {
		return nil, err
	}
	annotations := map[string]map[string]string{id: it.annotations}
	if pa.format != nil {
		annotations["format"] = pa.format
	}
	if err := kio.ReconcileInternalAnnotations([]*yaml.RNode{node}, annotations); err != nil {
		return nil, errNotByText
	}
	w, err := writable(node, 0)
	if err != nil {
		return nil, err
	}
	return encodeItem(w)
}

// listByText runs the function p on a ResourceList read by its text
// (readList) and writes it as execute does, in bounded memory: each item
// is written as it is checked, as read or pruned. errNotByText, nothing
// written, when the list is not one readList reads, or a run would fail
// otherwise than by its results: execute then runs it as kyaml reads it,
// for its error word for word.
func listByText(data []byte, out io.Writer, p Processor) error {
	rw, items, pa, err := readList(data)
	if err != nil {
		return errNotByText
	}
	warnings := p.Warnings
	var held bytes.Buffer
	p.Warnings = &held // written only if the run is this one
	check, err := p.check(rw.FunctionConfig)
	if err != nil {
		return errNotByText
	}
	check.written = func(it *listItem, i int, node *yaml.RNode) error {
		var err error
		it.seq, err = pa.final(it, i, node)
		it.text = ""
		return err
	}
	if err := check.filter(items); err != nil {
		if p.Context != nil && p.Context.Err() != nil {
			return err
		}
		return errNotByText
	}
	for i, it := range items {
		if it.changed {
			continue
		}
		if seq, err := pa.final(it, i, nil); err != nil {
			return errNotByText
		} else if seq != nil {
			it.seq = seq
		}
	}
	if warnings != nil {
		if _, err := held.WriteTo(warnings); err != nil {
			return err
		}
	}
	rl := framework.ResourceList{}
	processErr := check.finish(&rl)
	if err := writeItemTexts(rw, out, items, rl.Results); err != nil {
		return err
	}
	return processErr
}

// writeItemTexts writes the ResourceList of rw, its items written already
// (listItem's seq), as writeResourceList writes it.
func writeItemTexts(rw *kio.ByteReadWriter, out io.Writer, items []*listItem, results framework.Results) error {
	text, err := emptyWrapper(rw, len(results) > 0)
	if err != nil {
		return err
	}
	for _, list := range []wrappedList{
		{"items", countBatches(len(items)), func(w io.Writer, from, to int) error {
			for _, it := range items[from:to] {
				if _, err := w.Write(it.seq); err != nil {
					return err
				}
				it.seq = nil
			}
			return nil
		}},
		{"results", countBatches(len(results)), func(w io.Writer, from, to int) error { return writeResults(w, results[from:to]) }},
	} {
		if len(list.batches) == 0 {
			continue
		}
		if text, err = writeInPlace(out, text, list); err != nil {
			return err
		}
	}
	_, err = out.Write(text)
	return err
}
