// Package document reads YAML and JSON streams the way kubectl does (documents
// split on "---" lines, each converted with sigs.k8s.io/yaml), and parses a
// document's YAML node tree too where it is needed, so that edits keep
// comments, key order and formatting, and a field can be traced to its
// source line.
package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Source locates a document or a field: a file (or "-" for standard input) and a 1-based line.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
}

func (s Source) String() string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return s.File
}

// InputError is a problem with the input itself, located in the source.
type InputError struct {
	Source Source
	Msg    string
	// Err is ErrBeyondLimits for input kubectl reads but this tool refuses
	// to expand: what the server would refuse, or could not be bounded.
	Err error
}

func (e *InputError) Error() string { return e.Source.String() + ": " + e.Msg }

func (e *InputError) Unwrap() error { return e.Err }

// ErrBeyondLimits marks input refused for its size: kubectl would read it,
// but the server refuses a request that large, or its expansion cannot be
// bounded before it happens.
var ErrBeyondLimits = errors.New("beyond the limits of a request")

// ErrNotDetermined is the Err of an InputError for a document kubectl
// reads, but sends otherwise from one run to the next: no verdict holds.
var ErrNotDetermined = errors.New("what kubectl sends changes from run to run")

// Document is one document of a stream, or one item of a List document:
// an object as kubectl sends it to the server.
type Document struct {
	// Source is the file and the first line of the document (of the item).
	Source Source
	// Object is the document as kubectl sends it to the server.
	Object map[string]interface{}
	// Warnings are what kubectl passes in silence, such as duplicate keys:
	// a List's items have theirs.
	Warnings []Warning

	raw []byte
	// node is the DocumentNode, parsed from raw on first need (see tree);
	// nil when the YAML 1.2 parser refuses it, treeErr says why.
	node      *kyaml.Node
	treeErr   error
	treeOnce  sync.Once
	treeDone  bool
	lineShift int // added to node line numbers to get file lines
	seqIndent string
	isJSON    bool
	edited    bool
	out       []byte                         // the edited text, when edited in place
	keys      map[*kyaml.Node]map[string]int // of large mappings: key -> index in Content

	list *listState // of a List document: its items and their pending edits
	item *itemOf    // of an item of a List document
}

// Warning is something kubectl accepts in silence that changes what the
// server gets, located in the source.
type Warning struct {
	Source Source
	Msg    string
}

func (w Warning) String() string { return w.Source.String() + ": " + w.Msg }

// Raw is the document's text as read.
func (d *Document) Raw() []byte { return d.raw }

// Edited reports whether an edit changed the document.
func (d *Document) Edited() bool {
	if d.item != nil {
		return d.item.list.edited
	}
	return d.edited
}

// chunk is a YAML document of a stream.
type chunk struct {
	data      []byte // as kubectl's reader gives it: what is converted
	text      []byte // as written: what is edited and printed
	startLine int    // 1-based file line of the first line
	dropped   int    // the line after it that kubectl's reader drops, if any
}

// yamlLine is the line of a YAML error, compiled on the first error.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:yaml: )?line (\d+): `) })

// shiftYAMLError turns "yaml: line 3: msg" relative to a chunk into a file location.
func shiftYAMLError(err error, file string, startLine int) *InputError {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &InputError{Source: Source{File: file, Line: startLine + n - 1}, Msg: "invalid YAML: " + msg[len(m[0]):]}
	}
	return &InputError{Source: Source{File: file, Line: startLine}, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// parseChunk is the document of c, an object or a List of them: a request.
func parseChunk(c chunk, file string) (*Document, error) {
	return parseChunkBound(c, file, requestBound)
}

// parseChunkBound is parseChunk of a document bounded by b.
func parseChunkBound(c chunk, file string, b bound) (*Document, error) {
	d := &Document{
		Source:    Source{File: file, Line: c.startLine},
		raw:       c.text,
		lineShift: c.startLine - 1,
	}
	// Aliases are pointers in the node tree, so their expansion is bounded
	// there before the conversion below makes it: with aliases, the tree
	// comes first. Without, it waits until an edit or a line needs it.
	if mayHoldAliases(c.text) {
		node, nodeErr := parseTree(c.text)
		if nodeErr == nil {
			src := Source{File: file, Line: c.startLine}
			if len(node.Content) > 0 {
				src.Line += node.Content[0].Line - 1
			}
			if err := checkAliases(node, src, b); err != nil {
				return nil, err
			}
		}
		if nodeErr != nil && bytes.IndexByte(c.text, '&') >= 0 {
			// Without the node tree the expansion of aliases cannot be bounded
			// before the conversion below makes it: refuse rather than risk it.
			ie := shiftYAMLError(nodeErr, file, c.startLine)
			return nil, &InputError{Source: ie.Source, Err: ErrBeyondLimits, Msg: "this document may hold YAML aliases, and only kubectl's YAML 1.1 parser reads it (" + ie.Msg +
				"): what its aliases expand to cannot be bounded before they expand; write it without aliases"}
		}
		d.setTree(node, nodeErr)
	}
	// What kubectl sends: sigs.k8s.io/yaml's conversion (YAML 1.1 scalars).
	obj, js, dupes, err := toObject(c.data)
	if err != nil {
		return nil, conversionError(err, c, file)
	}
	if obj == nil && (len(js) == 0 || bytes.Equal(js, []byte("null"))) {
		return nil, nil
	}
	// The document's line is that of its first node, after comments and
	// separators: found in the text where its start is plain.
	if l, ok := firstContentLine(c.text); ok && !d.treeDone {
		d.Source.Line = c.startLine + l
	} else if node := d.tree(); node != nil && len(node.Content) > 0 {
		d.Source.Line = c.startLine + node.Content[0].Line - 1
	}
	// Keys written twice are found in the node tree, and a List's items
	// are located there.
	if _, items := obj["items"]; dupes || items {
		d.tree()
	}
	if err := d.treeErr; err != nil {
		// kubectl's YAML 1.1 parser reads what the YAML 1.2 one of the
		// node tree refuses: the object is checked all the same.
		ie := shiftYAMLError(err, file, c.startLine)
		d.Warnings = append(d.Warnings, Warning{Source: ie.Source, Msg: "kubectl reads this document, but not every YAML parser does (" + ie.Msg +
			"): lines are not known, and an edit writes the document again without its comments"})
	}
	if c.dropped > 0 {
		d.Warnings = append(d.Warnings, Warning{Source: Source{File: file, Line: c.dropped},
			Msg: "kubectl's reader drops this last line (a multiple of 4096 bytes without a line break): the server never gets it"})
	}
	if err := d.decode(obj, js, dupes); err != nil {
		return d, err
	}
	// The JSON of a document without aliases is at most 6 times its text
	// (a "<" is written \u003c), and some braces.
	upTo := len(js)
	if js == nil {
		upTo = 6*len(c.data) + 16
	}
	return d, d.checkSize(upTo, b)
}

// conversionError is err of the conversion of c as an input error, at the
// line of what it names.
func conversionError(err error, c chunk, file string) *InputError {
	var alike *keysAlikeError
	if errors.As(err, &alike) {
		ie := &InputError{Source: Source{File: file, Line: c.startLine}, Err: ErrNotDetermined, Msg: alike.Error()}
		if node, terr := parseTree(c.text); terr == nil {
			d := &Document{lineShift: c.startLine - 1}
			d.setTree(node, nil)
			if l := d.Line(alike.path); l > 0 {
				ie.Source.Line = l
			}
		}
		return ie
	}
	ie := shiftYAMLError(err, file, c.startLine)
	if l := firstUnprintable(c.data); l >= 0 && strings.Contains(err.Error(), "control characters are not allowed") {
		ie.Source.Line = c.startLine + l // the parser names no line
	}
	if msg := err.Error(); strings.Contains(msg, "invalid map key") || strings.Contains(msg, "unsupported map key") {
		if l := badKeyLine(c.text); l > 0 {
			ie.Source.Line = c.startLine + l - 1 // the converter names no line
		}
	}
	return ie
}

// badKeyLine is the 1-based line, within text, of the first key kubectl's
// conversion refuses ("invalid map key", "unsupported map key"): a mapping
// or a list, or null. 0 when the node tree does not say.
func badKeyLine(text []byte) int {
	node, err := parseTree(text)
	if err != nil {
		return 0
	}
	var find func(n *kyaml.Node, depth int) int
	find = func(n *kyaml.Node, depth int) int {
		if n == nil || n.Kind == kyaml.AliasNode || depth > maxConvertDepth {
			return 0 // an anchor's own keys are found where it is written
		}
		for i, c := range n.Content {
			if n.Kind == kyaml.MappingNode && i%2 == 0 && c.Tag != kyaml.MergeTag {
				k := deref(c)
				if k.Kind == kyaml.MappingNode || k.Kind == kyaml.SequenceNode || k.Kind == kyaml.ScalarNode && k.Tag == kyaml.NodeTagNull {
					return c.Line
				}
			}
			if l := find(c, depth+1); l > 0 {
				return l
			}
		}
		return 0
	}
	return find(node, 0)
}

// parseTree parses a document's text into its YAML node tree.
func parseTree(text []byte) (*kyaml.Node, error) {
	var node kyaml.Node
	if err := kyaml.NewDecoder(bytes.NewReader(text)).Decode(&node); err != nil {
		return nil, err
	}
	return &node, nil
}

// tree is the document's node tree (its DocumentNode), parsed from its text
// on first need: most documents are never edited, and their lines are never
// asked for. nil when there is none.
func (d *Document) tree() *kyaml.Node {
	d.treeOnce.Do(func() {
		if d.raw != nil {
			d.node, d.treeErr = parseTree(d.raw)
		}
		d.treeDone = true
	})
	return d.node
}

// setTree gives the document the node tree its reader parsed already.
func (d *Document) setTree(node *kyaml.Node, err error) {
	d.treeOnce.Do(func() {
		d.node, d.treeErr, d.treeDone = node, err, true
	})
}

// firstContentLine is the 0-based line of text on which its first node
// starts, after blank lines, comments and document separators, when these
// and that line's start are plain enough to tell without parsing: no tabs,
// directives, tags, anchors or line breaks other than "\n" and "\r\n".
func firstContentLine(text []byte) (int, bool) {
	for n := 0; len(text) > 0; n++ {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		// YAML breaks lines at these too.
		if bytes.IndexByte(line, '\r') >= 0 || bytes.Contains(line, []byte("\u0085")) ||
			bytes.Contains(line, []byte("\u2028")) || bytes.Contains(line, []byte("\u2029")) {
			return 0, false
		}
		rest := bytes.TrimLeft(line, " ")
		if bytes.HasPrefix(rest, []byte("---")) && len(rest) == len(line) {
			rest = bytes.TrimLeft(rest[3:], " ")
			if len(rest) > 0 && rest[0] != '#' {
				return 0, false
			}
		}
		switch {
		case len(rest) == 0 || rest[0] == '#':
			continue
		case rest[0] >= 'a' && rest[0] <= 'z', rest[0] >= 'A' && rest[0] <= 'Z', rest[0] >= '0' && rest[0] <= '9',
			rest[0] == '"', rest[0] == '\'', rest[0] == '{', rest[0] == '[', rest[0] == '_':
			return n, true
		case rest[0] == '-' && (len(rest) == 1 || rest[1] == ' '):
			return n, true
		}
		return 0, false
	}
	return 0, false
}

// parseJSON reads a JSON document of a JSON stream, at line of the file.
func parseJSON(raw []byte, file string, line int, b bound) (*Document, error) {
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	// The JSON decoder read it: what kubectl sends. The node tree's YAML
	// parser refuses some JSON (a DEL or C1 control character in a
	// string): the object is checked all the same.
	node, treeErr := parseTree(raw)
	d := &Document{
		Source:    Source{File: file, Line: line},
		raw:       append([]byte(nil), raw...),
		lineShift: line - 1,
		seqIndent: string(kyaml.CompactSequenceStyle),
		isJSON:    true,
	}
	if treeErr != nil {
		ie := shiftYAMLError(treeErr, file, line)
		d.Warnings = append(d.Warnings, Warning{Source: ie.Source, Msg: "kubectl reads this document, but not every YAML parser does (" + ie.Msg +
			"): lines are not known, and an edit writes the document again without its comments"})
	}
	d.setTree(node, treeErr)
	if err := d.decode(nil, raw, true); err != nil {
		return d, err
	}
	// Encoding again may escape more than raw did (<, >, & as \u003c).
	return d, d.checkSize(6*len(raw), b)
}

// decode sets the document's object (obj, or else decoded from its JSON),
// the items of a list, and the warnings about what kubectl passes in
// silence; dupes: a key may be written twice.
func (d *Document) decode(obj map[string]interface{}, js []byte, dupes bool) error {
	if obj == nil {
		var err error
		if obj, err = decodeObject(js); err != nil {
			return &InputError{Source: d.Source, Msg: err.Error()}
		}
	}
	d.Object = obj
	if err := d.expandList(js); err != nil {
		return err
	}
	if !dupes {
		return nil
	}
	for _, dup := range duplicateKeys(d) {
		// A List's items hold the warnings about them, with their paths.
		if p := dup.path; d.list != nil && len(p) > 2 && p[0] == fieldpath.Key("items") && p[1].IsIndex {
			it := d.list.items[p[1].Index]
			it.Warnings = append(it.Warnings, dup.warning(d.Source.File, p[2:]))
			continue
		}
		d.Warnings = append(d.Warnings, dup.warning(d.Source.File, dup.path))
	}
	return nil
}

func decodeObject(js []byte) (map[string]interface{}, error) {
	var v interface{}
	// k8s.io/apimachinery's json keeps integers as int64, as the server's decoder does.
	if err := utiljson.Unmarshal(js, &v); err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("expected an object (a Kubernetes resource), got %s", describe(v))
	}
	return obj, nil
}

func describe(v interface{}) string {
	switch v.(type) {
	case []interface{}:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}

// JSON is the document as kubectl sends it, encoded.
func (d *Document) JSON() ([]byte, error) {
	return json.Marshal(d.Object)
}
