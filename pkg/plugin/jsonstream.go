package plugin

import (
	"bytes"
	"encoding/json"
	"io"
)

// jsonArray writes a JSON array one element at a time, byte for byte as
// marshalJSON with indent "  " writes it whole when the array is at depth
// levels of the document, so that a report or a List of any length is
// written without holding it.
type jsonArray struct {
	w      io.Writer
	prefix string // of the array's own lines
	n      int
	err    error
}

func newJSONArray(w io.Writer, depth int) *jsonArray {
	return &jsonArray{w: w, prefix: string(bytes.Repeat([]byte("  "), depth))}
}

// Add writes the next element.
func (a *jsonArray) Add(v interface{}) {
	if a.err != nil {
		return
	}
	var b []byte
	if b, a.err = indentedJSON(v, a.prefix+"  "); a.err != nil {
		return
	}
	a.next()
	a.write(string(b))
}

// addEncoded writes the next element, b, as indentedJSON encodes it at
// the indent of the array's elements.
func (a *jsonArray) addEncoded(b []byte) {
	a.next()
	a.write(string(b))
}

// addFunc writes the next element with fn, given the indent of the
// element's members.
func (a *jsonArray) addFunc(fn func(w io.Writer, prefix string) error) {
	a.next()
	if a.err == nil {
		a.err = fn(a.w, a.prefix+"    ")
	}
}

// next starts the next element.
func (a *jsonArray) next() {
	sep := ",\n"
	if a.n == 0 {
		sep = "[\n"
	}
	a.n++
	a.write(sep + a.prefix + "  ")
}

// Close ends the array; the error is the first of any write or encoding.
func (a *jsonArray) Close() error {
	if a.n == 0 {
		a.write("[]")
	} else {
		a.write("\n" + a.prefix + "]")
	}
	return a.err
}

func (a *jsonArray) write(s string) {
	if a.err == nil {
		_, a.err = io.WriteString(a.w, s)
	}
}

// jsonObjectWriter writes a JSON object whose members are written in key
// order (as encoding/json orders a map's keys) by the caller, each value
// either whole or as a jsonArray.
type jsonObjectWriter struct {
	w   io.Writer
	n   int
	err error
}

// Key starts the member key; its value follows.
func (o *jsonObjectWriter) Key(k string) {
	sep := ",\n  "
	if o.n == 0 {
		sep = "{\n  "
	}
	o.n++
	kb, _ := json.Marshal(k)
	o.write(sep + string(kb) + ": ")
}

// Value writes a whole value after Key.
func (o *jsonObjectWriter) Value(v interface{}) {
	if o.err != nil {
		return
	}
	var b []byte
	if b, o.err = indentedJSON(v, "  "); o.err == nil {
		o.write(string(b))
	}
}

// Array writes an array value after Key, an element at a time.
func (o *jsonObjectWriter) Array() *jsonArray { return newJSONArray(o.w, 1) }

// Close ends the object and the document.
func (o *jsonObjectWriter) Close() error {
	if o.n == 0 {
		o.write("{")
	} else {
		o.write("\n")
	}
	o.write("}\n")
	return o.err
}

func (o *jsonObjectWriter) write(s string) {
	if o.err == nil {
		_, o.err = io.WriteString(o.w, s)
	}
}

// indentedJSON is v as marshalJSON writes it with indent "  ", at the
// depth of prefix, without its final newline.
func indentedJSON(v interface{}, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
