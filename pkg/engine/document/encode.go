package document

// Encoding, the last tier of an edit: values as YAML nodes and entries, and
// the document's text as it stands.

import (
	"bytes"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// toNode encodes a JSON value as a YAML node in block style.
func toNode(v interface{}) (*kyaml.Node, error) {
	var n kyaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return &n, nil
}

// encodeEntry renders "key: value" in block style, indented by col spaces.
func encodeEntry(key string, v interface{}, col int, lineComment string) ([]string, error) {
	valueNode, err := toNode(v)
	if err != nil {
		return nil, err
	}
	if lineComment != "" && valueNode.Kind == kyaml.ScalarNode {
		valueNode.LineComment = lineComment
	}
	m := &kyaml.Node{Kind: kyaml.MappingNode, Content: []*kyaml.Node{
		{Kind: kyaml.ScalarNode, Tag: kyaml.NodeTagString, Value: key}, valueNode,
	}}
	var buf bytes.Buffer
	enc := kyaml.NewEncoder(&buf)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	pad := strings.Repeat(" ", col)
	out := strings.SplitAfter(buf.String(), "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	for i := range out {
		out[i] = pad + out[i]
	}
	return out, nil
}

// text is the document's text as it stands: as read when nothing was
// edited, as spliced, or its node tree encoded, which keeps comments and
// key order.
func (d *Document) text() ([]byte, error) {
	if !d.edited {
		return d.raw, nil
	}
	if d.out != nil {
		return d.out, nil
	}
	if d.isJSON {
		return d.jsonText()
	}
	if d.seqIndent == "" {
		d.seqIndent = kyaml.DeriveSeqIndentStyle(string(d.raw))
	}
	var buf bytes.Buffer
	enc := kyaml.NewEncoderWithOptions(&buf, &kyaml.EncoderOptions{SeqIndent: kyaml.SequenceIndentStyle(d.seqIndent)})
	if err := enc.Encode(d.tree()); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	// The encoder breaks lines with "\n": the document's own line break
	// instead, as the text splice writes it, so that a file keeps one kind.
	if eol := lineEnd(d.raw); eol != "\n" {
		return bytes.ReplaceAll(buf.Bytes(), []byte("\n"), []byte(eol)), nil
	}
	return buf.Bytes(), nil
}
