package document

// Text splice, the second tier: edits made on the lines of the text, so
// that every line an edit does not touch stays byte for byte as it was.

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// textEdit replaces lines [from, to) (0-based, within the chunk) by repl.
type textEdit struct {
	from, to int
	repl     []string
	order    int // tie-break: later edits at the same place go first
}

func (d *Document) splice(edits []Edit) ([]byte, error) {
	if d.isJSON || d.tree() == nil {
		return nil, fmt.Errorf("not block YAML")
	}
	// YAML ends a line at a carriage return alone too, so the node tree's
	// lines are not the text's "\n" lines: the tree edit below does it.
	if bytes.Contains(bytes.ReplaceAll(d.raw, []byte("\r\n"), nil), []byte("\r")) {
		return nil, fmt.Errorf("a carriage return without a line feed")
	}
	lines := strings.SplitAfter(string(d.raw), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	// Generated lines take the file's line ending; a last line without one
	// gets it, so that lines can be moved and added after it.
	eol := "\n"
	if len(lines) > 0 && strings.HasSuffix(lines[0], "\r\n") {
		eol = "\r\n"
	}
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += eol
	}
	var tes []textEdit
	// A block mapping whose every entry goes must read back as {}, not null:
	// its key's line gets "{}" after the colon.
	removed := map[*kyaml.Node]int{}
	for _, e := range edits {
		if e.Remove {
			if _, _, mapping, err := d.entry(e.Path); err == nil {
				removed[mapping]++
			}
		}
	}
	for _, e := range edits {
		if !e.Remove || len(e.Path) < 2 || e.Path[len(e.Path)-2].IsIndex {
			continue
		}
		_, _, mapping, err := d.entry(e.Path)
		if err != nil || removed[mapping] != len(mapping.Content)/2 {
			continue
		}
		removed[mapping] = -1 // once per mapping
		pkey, _, _, err := d.entry(e.Path[:len(e.Path)-1])
		if err != nil {
			return nil, err
		}
		k, col := pkey.Line-1, pkey.Column-1
		i := strings.Index(lines[k][col:], ":")
		if i < 0 {
			return nil, fmt.Errorf("%s: unexpected layout", e.Path)
		}
		at := col + i + 1
		tes = append(tes, textEdit{from: k, to: k + 1, repl: []string{lines[k][:at] + " {}" + lines[k][at:]}, order: -1})
	}
	for i, e := range edits {
		te, err := d.textEditFor(lines, e)
		if err != nil {
			return nil, err
		}
		te.order = i
		tes = append(tes, te)
	}
	// Apply bottom-up so earlier line numbers stay valid; edits never overlap
	// (a removed field is never descended into).
	sort.SliceStable(tes, func(i, j int) bool {
		if tes[i].from != tes[j].from {
			return tes[i].from > tes[j].from
		}
		return tes[i].order > tes[j].order
	})
	for i := 1; i < len(tes); i++ {
		if tes[i].to > tes[i-1].from {
			return nil, fmt.Errorf("overlapping edits")
		}
	}
	// One pass, top-down (tes reversed): a copy of the lines per edit was
	// quadratic in the number of edits.
	var out bytes.Buffer
	at := 0
	for i := len(tes) - 1; i >= 0; i-- {
		te := tes[i]
		for _, l := range lines[at:te.from] {
			out.WriteString(l)
		}
		for _, l := range te.repl {
			if eol != "\n" && !strings.HasSuffix(l, eol) {
				l = strings.TrimSuffix(l, "\n") + eol
			}
			out.WriteString(l)
		}
		at = te.to
	}
	for _, l := range lines[at:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}

func (d *Document) textEditFor(lines []string, e Edit) (textEdit, error) {
	if !e.Remove && !e.Path[len(e.Path)-1].IsIndex {
		if _, _, _, _, err := d.locate(e.Path); err != nil {
			return d.textInsert(lines, e)
		}
	}
	key, value, mapping, err := d.entry(e.Path)
	if err != nil {
		return textEdit{}, err
	}
	k, col := key.Line-1, key.Column-1
	if k < 0 || k >= len(lines) || indentOf(lines[k]) > col {
		return textEdit{}, fmt.Errorf("%s: unexpected layout", e.Path)
	}
	prefix := lines[k][:col]
	end := entryEnd(lines, k, col, value.Kind == kyaml.SequenceNode)
	if e.Remove {
		first := k
		if strings.TrimSpace(prefix) == "" {
			first = headComments(lines, k, col)
			return textEdit{from: first, to: end + 1}, nil
		}
		// The key follows a "- " list marker: the marker moves to the next
		// entry of the same item, or the item becomes an empty object.
		next := nextKey(mapping, key)
		if next == nil {
			return textEdit{from: k, to: end + 1, repl: []string{prefix + "{}\n"}}, nil
		}
		nl := next.Line - 1
		if next.Column-1 != col || nl <= end || indentOf(lines[nl]) != col {
			return textEdit{}, fmt.Errorf("%s: unexpected layout", e.Path)
		}
		return textEdit{from: k, to: nl + 1, repl: []string{prefix + lines[nl][col:]}}, nil
	}
	// Replace: write the entry again, keeping its list marker and line comment.
	repl, err := encodeEntry(key.Value, e.Value, col, value.LineComment)
	if err != nil {
		return textEdit{}, err
	}
	repl[0] = prefix + repl[0][col:]
	return textEdit{from: k, to: end + 1, repl: repl}, nil
}

// textInsert adds a field after the last entry of its parent mapping.
func (d *Document) textInsert(lines []string, e Edit) (textEdit, error) {
	parent, _, _, viaAlias, err := d.locate(e.Path[:len(e.Path)-1])
	if err != nil {
		return textEdit{}, err
	}
	if viaAlias || parent.Kind != kyaml.MappingNode || parent.Style&kyaml.FlowStyle != 0 || len(parent.Content) < 2 {
		return textEdit{}, fmt.Errorf("%s: parent is not a non-empty block mapping", e.Path)
	}
	first, lastKey, lastValue := parent.Content[0], parent.Content[len(parent.Content)-2], parent.Content[len(parent.Content)-1]
	col := first.Column - 1
	if lastKey.Column-1 != col {
		return textEdit{}, fmt.Errorf("%s: unexpected layout", e.Path)
	}
	end := entryEnd(lines, lastKey.Line-1, col, lastValue.Kind == kyaml.SequenceNode)
	repl, err := encodeEntry(e.Path[len(e.Path)-1].Key, e.Value, col, "")
	if err != nil {
		return textEdit{}, err
	}
	return textEdit{from: end + 1, to: end + 1, repl: repl}, nil
}

// entryEnd returns the 0-based index of the last line of the mapping entry
// whose key is on line k (0-based) at column col (0-based): the following
// lines that are more indented, and, for a sequence value written at the
// key's own indentation, its "- " items; trailing blank lines excluded.
func entryEnd(lines []string, k, col int, seqValue bool) int {
	end := k
	for i := k + 1; i < len(lines); i++ {
		l := lines[i]
		if isBlank(l) {
			continue
		}
		ind := indentOf(l)
		rest := strings.TrimSpace(l)
		switch {
		case ind > col:
		case ind == col && seqValue && (rest == "-" || strings.HasPrefix(rest, "- ")):
		default:
			return end
		}
		end = i
	}
	return end
}

// headComments returns the index of the first line of the comment block
// directly above line k at the same indentation (k when there is none).
func headComments(lines []string, k, col int) int {
	first := k
	for i := k - 1; i >= 0; i-- {
		l := lines[i]
		if indentOf(l) != col || !strings.HasPrefix(strings.TrimSpace(l), "#") {
			break
		}
		first = i
	}
	return first
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func isBlank(line string) bool { return strings.TrimSpace(line) == "" }
