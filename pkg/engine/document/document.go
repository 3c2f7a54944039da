// Package document reads YAML and JSON streams the way kubectl does (documents
// split on "---" lines, each converted to JSON with sigs.k8s.io/yaml), and
// keeps each document's YAML node tree too, so that edits keep comments, key
// order and formatting, and every field can be traced to its source line.
package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
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

	raw       []byte
	node      *kyaml.Node // the DocumentNode
	lineShift int         // added to node line numbers to get file lines
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

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// shiftYAMLError turns "yaml: line 3: msg" relative to a chunk into a file location.
func shiftYAMLError(err error, file string, startLine int) *InputError {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &InputError{Source: Source{File: file, Line: startLine + n - 1}, Msg: "invalid YAML: " + msg[len(m[0]):]}
	}
	return &InputError{Source: Source{File: file, Line: startLine}, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

func parseChunk(c chunk, file string) (*Document, error) {
	// The node tree first: aliases are pointers in it, so their expansion is
	// bounded before the conversion below makes it.
	var node kyaml.Node
	nodeErr := kyaml.NewDecoder(bytes.NewReader(c.text)).Decode(&node)
	if nodeErr == nil && bytes.IndexByte(c.text, '*') >= 0 {
		src := Source{File: file, Line: c.startLine}
		if len(node.Content) > 0 {
			src.Line += node.Content[0].Line - 1
		}
		if err := checkAliases(&node, src); err != nil {
			return nil, err
		}
	}
	if nodeErr != nil && bytes.IndexByte(c.text, '&') >= 0 && bytes.IndexByte(c.text, '*') >= 0 {
		// Without the node tree the expansion of aliases cannot be bounded
		// before the conversion below makes it: refuse rather than risk it.
		ie := shiftYAMLError(nodeErr, file, c.startLine)
		return nil, &InputError{Source: ie.Source, Err: ErrBeyondLimits, Msg: "this document may hold YAML aliases, and only kubectl's YAML 1.1 parser reads it (" + ie.Msg +
			"): what its aliases expand to cannot be bounded before they expand; write it without aliases"}
	}
	// What kubectl sends: sigs.k8s.io/yaml's conversion (YAML 1.1 scalars).
	js, err := sigsyaml.YAMLToJSON(c.data)
	if err != nil {
		ie := shiftYAMLError(err, file, c.startLine)
		if l := firstUnprintable(c.data); l >= 0 && strings.Contains(err.Error(), "control characters are not allowed") {
			ie.Source.Line = c.startLine + l // the parser names no line
		}
		return nil, ie
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || bytes.Equal(js, []byte("null")) {
		return nil, nil
	}
	d := &Document{
		Source:    Source{File: file, Line: c.startLine},
		raw:       c.text,
		lineShift: c.startLine - 1,
		seqIndent: kyaml.DeriveSeqIndentStyle(string(c.text)),
	}
	if err := nodeErr; err != nil {
		// kubectl's YAML 1.1 parser reads what the YAML 1.2 one of the
		// node tree refuses: the object is checked all the same.
		ie := shiftYAMLError(err, file, c.startLine)
		d.Warnings = append(d.Warnings, Warning{Source: ie.Source, Msg: "kubectl reads this document, but not every YAML parser does (" + ie.Msg +
			"): lines are not known, and an edit writes the document again without its comments"})
	} else {
		d.node = &node
		if len(node.Content) > 0 {
			d.Source.Line = c.startLine + node.Content[0].Line - 1
		}
	}
	if c.dropped > 0 {
		d.Warnings = append(d.Warnings, Warning{Source: Source{File: file, Line: c.dropped},
			Msg: "kubectl's reader drops this last line (a multiple of 4096 bytes without a line break): the server never gets it"})
	}
	if err := d.decode(js); err != nil {
		return d, err
	}
	return d, d.checkSize(len(js))
}

// parseJSON reads a JSON document of a JSON stream, at line of the file.
func parseJSON(raw []byte, file string, line int) (*Document, error) {
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var node kyaml.Node
	if err := kyaml.NewDecoder(bytes.NewReader(raw)).Decode(&node); err != nil {
		return nil, &InputError{Source: Source{File: file, Line: line}, Msg: "invalid JSON: " + err.Error()}
	}
	d := &Document{
		Source:    Source{File: file, Line: line},
		raw:       append([]byte(nil), raw...),
		node:      &node,
		lineShift: line - 1,
		seqIndent: string(kyaml.CompactSequenceStyle),
		isJSON:    true,
	}
	if err := d.decode(raw); err != nil {
		return d, err
	}
	// Encoding again may escape more than raw did (<, >, & as \u003c).
	return d, d.checkSize(6 * len(raw))
}

// decode sets the document's object from its JSON, the items of a list,
// and the warnings about what kubectl passes in silence.
func (d *Document) decode(js []byte) error {
	obj, err := decodeObject(js)
	if err != nil {
		return &InputError{Source: d.Source, Msg: err.Error()}
	}
	d.Object = obj
	if err := d.expandList(js); err != nil {
		return err
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
