package document

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	textunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
)

// Reader reads the documents of one input, one at a time, the way kubectl
// reads a file given with -f (k8s.io/cli-runtime's FileVisitor and
// StreamVisitor over k8s.io/apimachinery's YAMLOrJSONDecoder):
//
//   - the bytes go through kubectl's transform first: a UTF-8 or UTF-16 byte
//     order mark selects the encoding, and invalid UTF-8 becomes U+FFFD;
//   - a stream whose first 4096 bytes start with "{" (after white space) is
//     read as concatenated JSON values; when the first or second value does
//     not parse, the rest of the stream is read as YAML;
//   - YAML is split into documents on lines that start with "---", each line
//     ending in "\n" (a final line without one gets it, "\r\n" becomes "\n");
//   - empty and null documents are skipped.
//
// Unlike kubectl's reader it knows the line of every document, and keeps
// memory bounded by the largest document, not by the input.
type Reader struct {
	file    string
	counter *lineCounter
	br      *bufio.Reader

	json     *json.Decoder
	jsonSeen int   // values the JSON decoder has read, as the upstream decoder counts them
	jsonErr  error // the JSON error to report if the first YAML document fails too
	yaml     *bufio.Reader
	line     int // YAML: lines read so far
	err      error
	// bound is what the documents are bounded by, besides MaxDocumentBytes.
	bound bound
}

// kubectl's look-ahead for a JSON stream (cli-runtime's StreamVisitor).
const jsonGuessSize = 4096

// NewReader returns a reader of the documents of r, named file in errors
// and sources.
func NewReader(r io.Reader, file string) *Reader {
	// What kubectl's FileVisitor does to every input, stdin included.
	decoded := transform.NewReader(r, textunicode.BOMOverride(textunicode.UTF8.NewDecoder()))
	counter := &lineCounter{r: &eofApart{r: decoded}}
	br := bufio.NewReaderSize(counter, jsonGuessSize)
	rd := &Reader{file: file, counter: counter, br: br}
	head, _ := br.Peek(jsonGuessSize)
	if utilyaml.IsJSONBuffer(head) {
		rd.json = json.NewDecoder(br)
	} else {
		rd.yaml = br
		counter.yaml = true
	}
	return rd
}

// NewHolderReader is NewReader of documents that hold objects and are
// themselves sent nowhere (the test suites of kubectl crd test): each is
// bounded as a document of the inputs (MaxDocumentBytes, which bounds what
// its YAML aliases add too), not as a request body; the objects it holds
// are the caller's to bound as the requests they are (CheckRequestBody).
func NewHolderReader(r io.Reader, file string) *Reader {
	rd := NewReader(r, file)
	rd.bound = holderBound
	return rd
}

// NotUTF8 says why the text a Reader gives of data is not data itself, or
// "" when it is (a UTF-8 byte order mark aside, which the reader drops): the
// file is UTF-16, transcoded, or holds bytes that are not UTF-8 (Latin-1),
// each read as U+FFFD, as kubectl reads them. A document's Raw text is then
// not in the file, and an edit of it cannot be spliced into the file.
func NotUTF8(data []byte) string {
	if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		return "it is UTF-16 (it starts with a byte order mark), which kubectl transcodes"
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	for i, line := 0, 1; i < len(data); {
		c, size := utf8.DecodeRune(data[i:])
		if c == utf8.RuneError && size == 1 {
			return fmt.Sprintf("line %d has a byte that is not UTF-8 (0x%02X, Latin-1?), which kubectl reads as U+FFFD", line, data[i])
		}
		if c == '\n' {
			line++
		}
		i += size
	}
	return ""
}

// eofApart gives the data of a read and io.EOF in two reads, as the
// bufio.Reader between the source and the line reader of kubectl's decoder
// does: a last line that fills the line reader's buffer exactly is then
// read, as kubectl reads it, without EOF, and dropped. The UTF-8 decoder
// gives its last bytes together with EOF.
type eofApart struct {
	r   io.Reader
	eof bool
}

func (e *eofApart) Read(p []byte) (int, error) {
	if e.eof {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	if n > 0 && err == io.EOF {
		e.eof, err = true, nil
	}
	return n, err
}

// Read reads every document of r (see Reader).
func Read(r io.Reader, file string) ([]*Document, error) {
	return NewReader(r, file).all()
}

// ReadHolders reads every document of r as Read does, but as documents
// that hold objects (NewHolderReader).
func ReadHolders(r io.Reader, file string) ([]*Document, error) {
	return NewHolderReader(r, file).all()
}

// all are the documents Next returns, until the end.
func (r *Reader) all() ([]*Document, error) {
	var docs []*Document
	for {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
}

// Next returns the next document that is not empty or null, or io.EOF at
// the end. An error other than io.EOF is an *InputError, and final.
func (r *Reader) Next() (*Document, error) {
	for r.err == nil {
		d, err := r.next()
		if err != nil {
			r.err = err
			break
		}
		if d != nil {
			return d, nil
		}
	}
	return nil, r.err
}

// Each calls fn with each document Next would return, in order, while the
// next documents are parsed on up to workers goroutines (splitting the
// input into documents stays on one). It returns nil at the end of the
// input, else the first error: Next's (final, as there), or fn's. At most
// a few documents per worker are read ahead of fn. After an error of fn's,
// the reader is spent.
func (r *Reader) Each(workers int, fn func(*Document) error) error {
	if r.err != nil {
		if errors.Is(r.err, io.EOF) {
			return nil
		}
		return r.err
	}
	type read struct {
		c       chunk
		parse   bool  // c is to parse
		jsonErr error // the JSON error to report if parsing c fails
		d       *Document
		err     error
	}
	err := ordered.Map(workers, func(emit func(*read) error) error {
		for {
			if r.json != nil {
				d, toYAML, err := r.nextJSON()
				if !toYAML {
					if errors.Is(err, io.EOF) {
						return nil
					}
					if stop := emit(&read{d: d, err: err}); stop != nil {
						return stop
					}
					if err != nil {
						return nil // final: fn sees it
					}
					continue
				}
			}
			c, err := r.nextChunk()
			if err != nil {
				if r.jsonErr != nil && !errors.Is(err, io.EOF) {
					err = r.jsonErr // as the upstream decoder reports it
				}
				r.jsonErr = nil
				if errors.Is(err, io.EOF) {
					return nil
				}
				return emit(&read{err: err})
			}
			if err := emit(&read{c: c, parse: true, jsonErr: r.jsonErr}); err != nil {
				return err
			}
			r.jsonErr = nil
		}
	}, func(rd *read) *read {
		if rd.parse {
			rd.d, rd.err = parseChunkBound(rd.c, r.file, r.bound)
			if rd.err != nil && rd.jsonErr != nil {
				rd.err = rd.jsonErr
			}
			rd.c = chunk{}
		}
		return rd
	}, func(_ *read, rd *read) error {
		if rd.err != nil {
			r.err = rd.err
			return rd.err
		}
		if rd.d == nil {
			return nil
		}
		return fn(rd.d)
	})
	if err == nil {
		r.err = io.EOF
	}
	return err
}

// next reads one document; nil when it is empty or null.
func (r *Reader) next() (*Document, error) {
	if r.json != nil {
		d, toYAML, err := r.nextJSON()
		if !toYAML {
			return d, err
		}
		// The JSON decoder gave up on the first or second value: YAML reads the rest.
	}
	c, err := r.nextChunk()
	if err != nil {
		if r.jsonErr != nil && !errors.Is(err, io.EOF) {
			err = r.jsonErr // as the upstream decoder reports it
		}
		r.jsonErr = nil
		return nil, err
	}
	d, err := parseChunkBound(c, r.file, r.bound)
	if err != nil && r.jsonErr != nil {
		err = r.jsonErr
	}
	r.jsonErr = nil
	return d, err
}

// nextJSON reads one JSON value. When it fails on the first or second value
// it switches the reader to YAML (r.json is then nil), as the upstream
// decoder does, and the caller reads the rest as YAML (toYAML).
func (r *Reader) nextJSON() (d *Document, toYAML bool, err error) {
	var raw json.RawMessage
	consumed := r.json.InputOffset()
	r.counter.limit = consumed + MaxDocumentBytes + jsonReadAhead
	err = r.json.Decode(&raw)
	r.counter.limit = 0
	if errors.Is(err, io.EOF) {
		return nil, false, io.EOF
	}
	if errors.Is(err, errTooLarge) {
		// The value starts after the white space that follows the last one.
		rest := bufferedOf(r.json)
		start := len(rest) - len(bytes.TrimLeft(rest, " \t\r\n"))
		return nil, false, tooLarge(r.file, r.counter.lineAt(consumed+int64(start)), r.bound)
	}
	if err == nil {
		r.jsonSeen++
		end := r.json.InputOffset()
		line := r.counter.lineAt(end - int64(len(raw)))
		r.counter.forget(end)
		d, err := parseJSON(raw, r.file, line, r.bound)
		return d, false, err
	}
	at := r.json.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		at = se.Offset
	}
	jerr := &InputError{Source: Source{File: r.file, Line: r.counter.lineAt(at)}, Msg: "invalid JSON: " + err.Error()}
	if r.jsonSeen > 1 {
		// Two values read: an unambiguous JSON stream.
		return nil, false, jerr
	}
	// Read the rest as YAML from where the last value ended, past white
	// space up to and including the first line break.
	rest := io.MultiReader(bytes.NewReader(append([]byte(nil), bufferedOf(r.json)...)), r.br)
	r.json, r.jsonErr = nil, jerr
	r.yaml = bufio.NewReader(rest)
	r.counter.yaml = true
	r.line = r.counter.lineAt(consumed) - 1
	ate, ok := consumeWhitespace(r.yaml)
	if !ok {
		return nil, false, jerr
	}
	if ate {
		r.line++
	}
	return nil, true, nil
}

func bufferedOf(d *json.Decoder) []byte {
	b, _ := io.ReadAll(d.Buffered())
	return b
}

// consumeWhitespace follows the upstream decoder's switch from JSON to
// YAML: white space is skipped up to and including the first line break.
// ok is false where the upstream decoder gives up (fewer than four bytes
// left at some point, or U+FFFD): it then reports the JSON error.
func consumeWhitespace(br *bufio.Reader) (ateNewline, ok bool) {
	for {
		b, _ := br.Peek(4)
		if len(b) < 4 {
			return false, false
		}
		c, size := utf8.DecodeRune(b)
		if c == utf8.RuneError || size == 0 {
			return false, false
		}
		if !unicode.IsSpace(c) {
			return false, true
		}
		_, _ = br.Discard(size)
		if c == '\n' {
			return true, true
		}
	}
}

// readLine appends the next line to buf as written; the upstream
// LineReader gives it without "\n" or "\r\n" (bufio's ReadLine), then
// "\n" added. Like it, it returns a last line that filled bufio's buffer
// exactly (a multiple of 4096 bytes, no line break) together with io.EOF,
// and the upstream YAMLReader then drops that line.
func (r *Reader) readLine(buf []byte, room int) ([]byte, error) {
	start := len(buf)
	full := false
	for {
		part, err := r.yaml.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf)-start > room {
			return buf[:start], errTooLarge
		}
		if err == bufio.ErrBufferFull {
			full = true
			continue
		}
		if len(part) == 0 && err != nil && (!full || !errors.Is(err, io.EOF)) {
			return buf[:start], err
		}
		if len(part) == 0 {
			return buf, err
		}
		return buf, nil
	}
}

// nextChunk returns the next YAML document's text as the upstream
// YAMLReader does, with the file line of its first line, and its text as
// written (line ends kept; a last line gets one).
func (r *Reader) nextChunk() (chunk, error) {
	var c chunk
	for {
		before := len(c.text)
		text, err := r.readLine(c.text, MaxDocumentBytes-before)
		if errors.Is(err, errTooLarge) {
			start := c.startLine
			if before == 0 {
				start = r.line + 1
			}
			return chunk{}, tooLarge(r.file, start, r.bound)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return chunk{}, &InputError{Source: Source{File: r.file, Line: r.line + 1}, Msg: err.Error()}
		}
		if err == nil {
			r.line++
		}
		written := text[before:]
		if bytes.HasPrefix(written, []byte("---")) {
			rest := strings.TrimSpace(string(written[3:]))
			if rest != "" && rest[0] != '#' {
				return chunk{}, &InputError{Source: Source{File: r.file, Line: r.line}, Msg: "invalid YAML document separator: " + rest}
			}
			if before != 0 {
				c.text = text[:before]
				return c.done(), nil
			}
			if err != nil {
				return chunk{}, io.EOF
			}
			// Upstream keeps a separator that starts a document as its first
			// line: YAML reads it as the document start ("--- # c") or as text ("---#c").
		}
		if err != nil {
			if len(written) != 0 {
				// kubectl's reader drops it: the server never gets it.
				r.line++
				c.dropped = r.line
			}
			if before != 0 {
				c.text = text[:before]
				return c.done(), nil
			}
			return chunk{}, io.EOF
		}
		if before == 0 {
			c.startLine = r.line
		}
		c.text = text
	}
}

// done ends the text as written with a line break, so that edits can add
// lines after its last one, and makes the text kubectl's reader gives: each
// line ended by "\n" alone.
func (c chunk) done() chunk {
	cr := bytes.IndexByte(c.text, '\r') >= 0
	if cr {
		c.data = make([]byte, 0, len(c.text)+1)
		for rest := c.text; len(rest) > 0; {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line, rest = rest[:i+1], rest[i+1:]
			} else {
				rest = nil
			}
			switch {
			case bytes.HasSuffix(line, []byte("\r\n")):
				line = line[:len(line)-2]
			case bytes.HasSuffix(line, []byte("\n")):
				line = line[:len(line)-1]
			}
			c.data = append(append(c.data, line...), '\n')
		}
	}
	if !bytes.HasSuffix(c.text, []byte("\n")) {
		// The document's own line break: a text of carriage returns alone
		// (old Mac line ends), which YAML breaks lines at, gets one of them.
		switch eol := lineEnd(c.text); {
		case eol == "\r" && bytes.HasSuffix(c.text, []byte("\r")):
		case eol == "\r":
			c.text = append(c.text, '\r')
		case eol == "\r\n" && bytes.HasSuffix(c.text, []byte("\r")):
			c.text = append(c.text, '\n')
		default:
			c.text = append(c.text, eol...)
		}
	}
	if !cr {
		c.data = c.text // no carriage return: the same lines
	}
	return c
}

// lineEnd is the line break text is written with: "\r\n" when it has one,
// "\r" when it breaks lines with carriage returns alone (no line feed but,
// perhaps, a last one), else "\n".
func lineEnd(text []byte) string {
	switch {
	case bytes.Contains(text, []byte("\r\n")):
		return "\r\n"
	case bytes.IndexByte(text, '\r') >= 0 && bytes.IndexByte(bytes.TrimSuffix(text, []byte("\n")), '\n') < 0:
		return "\r"
	}
	return "\n"
}

// lineCounter passes a stream through and remembers where its line breaks
// are, from the last forgotten offset on, so that JSON values, which the
// decoder reads ahead of, get their line.
type lineCounter struct {
	r        io.Reader
	offset   int64   // bytes read so far
	breaks   []int64 // offsets of the line breaks not forgotten
	forgoten int     // line breaks before breaks[0]
	// yaml stops the counting: the YAML reader counts its own lines, and
	// nothing forgets them.
	yaml bool
	// limit, when not 0, is the offset no read may pass: a JSON value the
	// decoder is reading is then larger than a document may be.
	limit int64
}

func (c *lineCounter) Read(p []byte) (int, error) {
	if c.limit > 0 && c.offset >= c.limit {
		return 0, errTooLarge
	}
	n, err := c.r.Read(p)
	if !c.yaml {
		for i, b := range p[:n] {
			if b == '\n' {
				c.breaks = append(c.breaks, c.offset+int64(i))
			}
		}
	}
	c.offset += int64(n)
	return n, err
}

// lineAt is the 1-based line of the byte at offset (not before the last forget).
func (c *lineCounter) lineAt(offset int64) int {
	n := 0
	for n < len(c.breaks) && c.breaks[n] < offset {
		n++
	}
	return 1 + c.forgoten + n
}

// forget drops the line breaks before offset.
func (c *lineCounter) forget(offset int64) {
	n := 0
	for n < len(c.breaks) && c.breaks[n] < offset {
		n++
	}
	c.forgoten += n
	c.breaks = append(c.breaks[:0], c.breaks[n:]...)
}

// firstUnprintable returns the 0-based line, within data, of the first
// character YAML does not allow (the "control characters are not allowed"
// of the YAML parser kubectl uses, which names no line), or -1.
func firstUnprintable(data []byte) int {
	line := 0
	for i := 0; i < len(data); {
		c, size := utf8.DecodeRune(data[i:])
		switch {
		case c == '\n':
			line++
		case c == '\t', c == '\r', c == 0x85,
			c >= 0x20 && c <= 0x7E,
			c >= 0xA0 && c <= 0xD7FF,
			c >= 0xE000 && c <= 0xFFFD && !(c == utf8.RuneError && size == 1),
			c >= 0x10000 && c <= 0x10FFFF:
		default:
			return line
		}
		i += size
	}
	return -1
}
