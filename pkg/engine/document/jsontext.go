package document

// JSON text: a JSON document, once edited, is written as JSON again, in its
// key order and in the layout it was written in (one line, or indented by
// its own unit), not as YAML.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// jsonStyle is how a JSON document was written.
type jsonStyle struct {
	indent string // one level; "" for one line
	eol    string
	colon  string // ":" or ": "
	comma  string // between the items of a collection written on one line
}

// styleOf reads the layout of JSON text: indented when it spans lines, by
// the white space that starts its second line (its first key's).
func styleOf(raw []byte) jsonStyle {
	s := jsonStyle{eol: "\n", colon: ":", comma: ","}
	if bytes.Contains(raw, []byte(`": `)) {
		s.colon = ": "
	}
	if bytes.Contains(raw, []byte(", ")) {
		s.comma = ", "
	}
	if i := bytes.IndexByte(raw, '\n'); i >= 0 {
		if i > 0 && raw[i-1] == '\r' {
			s.eol = "\r\n"
		}
		rest := raw[i+1:]
		s.indent = string(rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))])
		if s.indent == "" {
			s.indent = "  "
		}
	}
	return s
}

// jsonText writes the document's node tree as JSON, in the style of its
// text as read.
func (d *Document) jsonText() ([]byte, error) {
	root := d.root()
	if root == nil {
		return nil, fmt.Errorf("%s: no JSON to write", d.Source)
	}
	var buf bytes.Buffer
	w := jsonWriter{buf: &buf, style: styleOf(d.raw)}
	if err := w.value(root, 0, false); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type jsonWriter struct {
	buf   *bytes.Buffer
	style jsonStyle
}

// value writes n at depth; inline: on one line, as it was written.
func (w *jsonWriter) value(n *kyaml.Node, depth int, inline bool) error {
	if depth > maxConvertDepth*10 {
		return fmt.Errorf("nested too deep")
	}
	switch n.Kind {
	case kyaml.AliasNode:
		return w.value(n.Alias, depth, inline)
	case kyaml.ScalarNode:
		return w.scalar(n)
	case kyaml.MappingNode, kyaml.SequenceNode:
	default:
		return fmt.Errorf("a YAML node of kind %v in a JSON document", n.Kind)
	}
	open, close, step := "[", "]", 1
	if n.Kind == kyaml.MappingNode {
		open, close, step = "{", "}", 2
	}
	w.buf.WriteString(open)
	if len(n.Content) == 0 {
		w.buf.WriteString(close)
		return nil
	}
	inline = inline || w.style.indent == "" || oneLine(n, n.Line)
	for i := 0; i < len(n.Content); i += step {
		if i > 0 {
			if inline {
				w.buf.WriteString(w.style.comma)
			} else {
				w.buf.WriteString(",")
			}
		}
		if !inline {
			w.buf.WriteString(w.style.eol + strings.Repeat(w.style.indent, depth+1))
		}
		if step == 2 {
			w.str(n.Content[i].Value)
			w.buf.WriteString(w.style.colon)
		}
		if err := w.value(n.Content[i+step-1], depth+1, inline); err != nil {
			return err
		}
	}
	if !inline {
		w.buf.WriteString(w.style.eol + strings.Repeat(w.style.indent, depth))
	}
	w.buf.WriteString(close)
	return nil
}

// oneLine: a collection of the text as read, on one line (line) whole.
func oneLine(n *kyaml.Node, line int) bool {
	if n.Line != line || line == 0 {
		return false
	}
	for _, c := range n.Content {
		if !oneLine(c, line) {
			return false
		}
	}
	return true
}

func (w *jsonWriter) scalar(n *kyaml.Node) error {
	switch n.ShortTag() {
	case kyaml.NodeTagString:
		w.str(n.Value)
	case kyaml.NodeTagNull:
		w.buf.WriteString("null")
	case kyaml.NodeTagBool:
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return err
		}
		w.buf.WriteString(strconv.FormatBool(b))
	case kyaml.NodeTagInt, kyaml.NodeTagFloat:
		if json.Valid([]byte(n.Value)) {
			w.buf.WriteString(n.Value) // as written
			return nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q: not a JSON number", n.Value)
		}
		b, _ := json.Marshal(f)
		w.buf.Write(b)
	default:
		return fmt.Errorf("%s %q: not a JSON value", n.ShortTag(), n.Value)
	}
	return nil
}

// str writes s as a JSON string, <, > and & as they are.
func (w *jsonWriter) str(s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	w.buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
