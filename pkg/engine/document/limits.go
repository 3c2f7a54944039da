package document

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxRequestBodyBytes is the largest request body the API server reads by
// default (k8s.io/apiserver's server.NewConfig: MaxRequestBodyBytes, 3 MiB,
// twice etcd's recommended request size); over it, a create or update is
// answered 413 and the object is never stored.
const maxRequestBodyBytes = 3 * 1024 * 1024

// serverRefusal is the server's answer to a body over the limit, in its words.
func serverRefusal() string {
	err := apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", maxRequestBodyBytes))
	return fmt.Sprintf("%d %q", http.StatusRequestEntityTooLarge, err.Error())
}

// MaxDocumentBytes bounds the text of one document of a stream, a List
// document included. kubectl reads any size, but the server takes at most 3
// MiB per object, and a larger document is a List of thousands of them, or
// no YAML at all (-f /dev/zero): reading it whole would hold the input in
// memory, many times over once parsed, where the tool otherwise holds one
// document at a time.
const MaxDocumentBytes = 64 << 20

// jsonReadAhead is how far past a JSON value the decoder may have read
// before it knows the value's end: its reads come from a 4 KiB buffer.
const jsonReadAhead = 64 << 10

// errTooLarge stops the reading of a document over MaxDocumentBytes.
var errTooLarge = errors.New("document too large")

// bound is what a Reader bounds its documents by, besides MaxDocumentBytes.
type bound int

const (
	// requestBound: a document is an object kubectl sends, or a List of
	// them: each object is a request body (maxRequestBodyBytes), and so
	// bounds what the document's YAML aliases add.
	requestBound bound = iota
	// holderBound: a document holds objects and is itself sent nowhere (a
	// test suite of kubectl crd test): it is bounded as a document of the
	// inputs, its aliases' expansion included; the objects it holds are
	// its reader's to bound (CheckRequestBody).
	holderBound
)

// aliases is what YAML aliases may add to a document under b.
func (b bound) aliases() int64 {
	if b == holderBound {
		return MaxDocumentBytes
	}
	return maxRequestBodyBytes
}

// tooLarge is the error for a document over MaxDocumentBytes from line on.
func tooLarge(file string, line int, b bound) *InputError {
	advice := "the server takes at most 3 MiB per object, so split a List this large into smaller ones"
	if b == holderBound {
		advice = "split it into several documents or files"
	}
	return &InputError{Source: Source{File: file, Line: line}, Err: ErrBeyondLimits, Msg: fmt.Sprintf(
		"a document of more than %d MiB: kubectl-crd reads one document at a time and refuses larger ones; %s",
		MaxDocumentBytes>>20, advice)}
}

func kib(n int64) string { return fmt.Sprintf("%d KiB", (n+1023)/1024) }

// checkAliases refuses, before anything expands it, a document whose YAML
// aliases add more than the API server accepts in a request body: a few
// kilobytes of anchors and aliases can expand to gigabytes (issue 14). The
// sizes are those of the JSON the document converts to, estimated from the
// node tree (where an alias is a pointer), memoized per anchor: linear in the
// tree.
func checkAliases(n *kyaml.Node, src Source, b bound) error {
	s := aliasSizer{expanded: map[*kyaml.Node]int64{}, plain: map[*kyaml.Node]int64{}}
	total := s.size(n, true)
	extra := total - s.size(n, false)
	if extra <= b.aliases() {
		return nil
	}
	if b == holderBound {
		return &InputError{Source: src, Err: ErrBeyondLimits, Msg: fmt.Sprintf(
			"YAML aliases expand this document by more than %d MiB (to about %s, from %d aliases): kubectl-crd refuses documents over %d MiB",
			MaxDocumentBytes>>20, kib(total), s.aliases, MaxDocumentBytes>>20)}
	}
	return &InputError{Source: src, Err: ErrBeyondLimits, Msg: fmt.Sprintf(
		"YAML aliases expand this document to more than 3 MiB (about %s from %d aliases): the API server refuses request bodies over 3 MiB (%s)",
		kib(total), s.aliases, serverRefusal())}
}

type aliasSizer struct {
	expanded, plain map[*kyaml.Node]int64 // memo, per node
	aliases         int                   // alias nodes in the text
}

// sizeCap keeps sums of sizes far from overflow; anything near it is refused.
const sizeCap = 1 << 50

// size is about the length of n as JSON, with its aliases expanded or not
// (an alias counts nothing then): a string its text and quotes (escapes
// not counted), a key the same, any other scalar a byte.
func (s *aliasSizer) size(n *kyaml.Node, expand bool) int64 {
	memo := s.plain
	if expand {
		memo = s.expanded
	}
	// Only an anchor is reached twice: the others are not memoized.
	if n.Anchor != "" {
		if v, ok := memo[n]; ok {
			return v
		}
		memo[n] = 0 // a cycle (which the parser refuses anyway) adds nothing
	}
	var v int64
	switch n.Kind {
	case kyaml.AliasNode:
		if expand {
			s.aliases++
			if n.Alias != nil {
				v = s.size(n.Alias, true)
			}
		}
	case kyaml.ScalarNode:
		v = 1
		if n.ShortTag() == kyaml.NodeTagString {
			v = int64(len(n.Value)) + 2
		}
	case kyaml.MappingNode:
		v = 1 // {}, commas: a byte before each entry and after the last
		for j := 0; j+1 < len(n.Content); j += 2 {
			v += int64(len(n.Content[j].Value)) + 4 // quotes, colon, comma
			v = min(v+s.size(n.Content[j+1], expand), sizeCap)
		}
		v = max(v, 2)
	case kyaml.SequenceNode:
		v = 1
		for _, c := range n.Content {
			v = min(v+s.size(c, expand)+1, sizeCap)
		}
		v = max(v, 2)
	case kyaml.DocumentNode:
		for _, c := range n.Content {
			v = min(v+s.size(c, expand), sizeCap)
		}
	}
	if n.Anchor != "" {
		memo[n] = v
	}
	return v
}

// checkSize refuses an object (each item of a List: kubectl sends them one by
// one) that makes a larger request body than the API server reads: its JSON
// and a newline, as kubectl's encoder writes it. upTo bounds the document's
// JSON size from above: only when it is near the limit is anything encoded
// again. A document that only holds objects (holderBound) is not sent.
func (d *Document) checkSize(upTo int, b bound) error {
	if upTo < maxRequestBodyBytes || b == holderBound {
		return nil
	}
	objs := []*Document{d}
	if d.list != nil {
		objs = d.list.items
	}
	for _, o := range objs {
		if err := CheckRequestBody(o.Object, o.Source); err != nil {
			return err
		}
	}
	return nil
}

// CheckRequestBody refuses obj, of src, when kubectl would send it in a
// larger request body than the API server reads (3 MiB by default): its
// JSON and a newline, as kubectl's encoder writes it. The error is an
// *InputError of ErrBeyondLimits, in the server's words: it answers 413.
func CheckRequestBody(obj map[string]interface{}, src Source) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return &InputError{Source: src, Msg: err.Error()}
	}
	if body := len(b) + 1; body > maxRequestBodyBytes {
		return &InputError{Source: src, Err: ErrBeyondLimits, Msg: fmt.Sprintf(
			"kubectl sends this object in a request body of %d bytes, more than the API server reads (3 MiB by default): it answers %s",
			body, serverRefusal())}
	}
	return nil
}
