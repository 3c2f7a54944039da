// Package document reads YAML and JSON streams the way kubectl does (documents
// split on "---" lines, each converted to JSON with sigs.k8s.io/yaml), and
// keeps each document's YAML node tree too, so that edits keep comments, key
// order and formatting, and every field can be traced to its source line.
package document

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
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
}

func (e *InputError) Error() string { return e.Source.String() + ": " + e.Msg }

// Document is one document of a stream.
type Document struct {
	// Source is the file and the first line of the document.
	Source Source
	// Object is the document as kubectl sends it to the server.
	Object map[string]interface{}

	raw       []byte
	node      *kyaml.Node // the DocumentNode; nil for a JSON stream
	lineShift int         // added to node line numbers to get file lines
	seqIndent string
	isJSON    bool
	edited    bool
	out       []byte // the edited text, when edited in place
}

// Raw is the document's text as read.
func (d *Document) Raw() []byte { return d.raw }

// Edited reports whether an edit changed the document.
func (d *Document) Edited() bool { return d.edited }

// Read splits r into documents the way kubectl's YAML reader does and parses
// each. Documents that are empty or null are skipped, as kubectl skips them.
// A syntax error or a document that is not an object is an *InputError.
func Read(r io.Reader, file string) ([]*Document, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &InputError{Source: Source{File: file}, Msg: err.Error()}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		// Like kubectl's YAMLOrJSONDecoder: a stream that starts with "{" is
		// JSON, unless it does not parse as JSON; then it is read as YAML
		// (flow style), whose errors carry the right line.
		docs, err, atFirst := readJSONStream(data, file)
		if err == nil || !atFirst {
			return docs, err
		}
		if ydocs, yerr := readYAML(data, file); yerr == nil {
			return ydocs, nil
		}
		return nil, err
	}
	return readYAML(data, file)
}

func readYAML(data []byte, file string) ([]*Document, error) {
	chunks, err := split(data, file)
	if err != nil {
		return nil, err
	}
	var docs []*Document
	for _, c := range chunks {
		d, err := parseChunk(c, file)
		if err != nil {
			return nil, err
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

type chunk struct {
	data      []byte
	startLine int // 1-based file line of data's first line
}

// split follows k8s.io/apimachinery/pkg/util/yaml.YAMLReader: a line starting
// with "---" ends a document; only spaces and a comment may follow it.
func split(data []byte, file string) ([]chunk, error) {
	var (
		chunks []chunk
		buf    bytes.Buffer
		start  = 1
		line   = 0
	)
	sc := bufio.NewReader(bytes.NewReader(data))
	for {
		l, err := sc.ReadBytes('\n')
		if len(l) > 0 {
			line++
			if bytes.HasPrefix(l, []byte("---")) {
				rest := strings.TrimSpace(string(l[3:]))
				if rest != "" && rest[0] != '#' {
					return nil, &InputError{Source: Source{File: file, Line: line}, Msg: "invalid YAML document separator: " + rest}
				}
				if buf.Len() > 0 {
					chunks = append(chunks, chunk{data: append([]byte(nil), buf.Bytes()...), startLine: start})
					buf.Reset()
				}
				start = line + 1
			} else {
				buf.Write(l)
			}
		}
		if err != nil {
			break
		}
	}
	if buf.Len() > 0 {
		chunks = append(chunks, chunk{data: buf.Bytes(), startLine: start})
	}
	return chunks, nil
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
	// What kubectl sends: sigs.k8s.io/yaml's conversion (YAML 1.1 scalars).
	js, err := sigsyaml.YAMLToJSON(c.data)
	if err != nil {
		return nil, shiftYAMLError(err, file, c.startLine)
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || bytes.Equal(js, []byte("null")) {
		return nil, nil
	}
	var node kyaml.Node
	if err := kyaml.NewDecoder(bytes.NewReader(c.data)).Decode(&node); err != nil {
		return nil, shiftYAMLError(err, file, c.startLine)
	}
	firstLine := c.startLine
	if len(node.Content) > 0 {
		firstLine = c.startLine + node.Content[0].Line - 1
	}
	obj, err := decodeObject(js)
	if err != nil {
		return nil, &InputError{Source: Source{File: file, Line: firstLine}, Msg: err.Error()}
	}
	return &Document{
		Source:    Source{File: file, Line: firstLine},
		Object:    obj,
		raw:       c.data,
		node:      &node,
		lineShift: c.startLine - 1,
		seqIndent: kyaml.DeriveSeqIndentStyle(string(c.data)),
	}, nil
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

// readJSONStream reads one or more concatenated JSON objects, as kubectl does
// for input that starts with "{".
// atFirst is true when the first value is not JSON at all.
func readJSONStream(data []byte, file string) (docs []*Document, err error, atFirst bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		consumed := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil, false
		}
		if err != nil {
			at := dec.InputOffset()
			var se *json.SyntaxError
			if errors.As(err, &se) {
				at = consumed + se.Offset
			}
			if at > int64(len(data)) {
				at = int64(len(data))
			}
			line := 1 + bytes.Count(data[:at], []byte("\n"))
			return nil, &InputError{Source: Source{File: file, Line: line}, Msg: "invalid JSON: " + err.Error()}, len(docs) == 0
		}
		start := int(dec.InputOffset()) - len(raw)
		line := 1 + bytes.Count(data[:start], []byte("\n"))
		obj, err := decodeObject(raw)
		if err != nil {
			return nil, &InputError{Source: Source{File: file, Line: line}, Msg: err.Error()}, false
		}
		var node kyaml.Node
		if err := kyaml.NewDecoder(bytes.NewReader(raw)).Decode(&node); err != nil {
			return nil, &InputError{Source: Source{File: file, Line: line}, Msg: "invalid JSON: " + err.Error()}, false
		}
		docs = append(docs, &Document{
			Source:    Source{File: file, Line: line},
			Object:    obj,
			raw:       append([]byte(nil), raw...),
			node:      &node,
			lineShift: line - 1,
			seqIndent: string(kyaml.CompactSequenceStyle),
			isJSON:    true,
		})
	}
}

// JSON is the document as kubectl sends it, encoded.
func (d *Document) JSON() ([]byte, error) {
	return json.Marshal(d.Object)
}
