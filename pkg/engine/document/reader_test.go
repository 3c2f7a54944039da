package document_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	textunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// kubectlObjects reads in exactly as kubectl's -f does (cli-runtime's
// FileVisitor: the UTF-8/UTF-16 transform, then StreamVisitor: the
// YAMLOrJSONDecoder into RawExtensions, empty and null documents skipped)
// and returns each document as canonical JSON. refused is true when kubectl
// refuses the input: a reader error, or a document that is not an object.
func kubectlObjects(in []byte) (docs []string, refused bool) {
	r := transform.NewReader(bytes.NewReader(in), textunicode.BOMOverride(textunicode.UTF8.NewDecoder()))
	d := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, false
			}
			return nil, true
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		var obj map[string]interface{}
		if err := utiljson.Unmarshal(raw, &obj); err != nil {
			return nil, true
		}
		docs = append(docs, canonical(obj))
	}
}

func canonical(obj map[string]interface{}) string {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ourObjects reads in with document.Read: the documents (not the items of
// Lists, which kubectl's reader does not expand either) as canonical JSON.
func ourObjects(in []byte) ([]string, error) {
	ds, err := document.Read(bytes.NewReader(in), "in")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range ds {
		out = append(out, canonical(d.Object))
	}
	return out, nil
}

// checkLikeKubectl fails when document.Read and kubectl's reader disagree
// on in: on the objects, or on refusing it.
func checkLikeKubectl(t *testing.T, in []byte) {
	t.Helper()
	want, refused := kubectlObjects(in)
	got, err := ourObjects(in)
	if errors.Is(err, document.ErrBeyondLimits) || errors.Is(err, document.ErrNotDetermined) {
		return // refused on purpose: the server would refuse it, it cannot be bounded, or kubectl's answer is random
	}
	if refused != (err != nil) {
		t.Fatalf("input %q: kubectl refuses: %v; we: %v", in, refused, err)
	}
	if err != nil {
		var ie *document.InputError
		if !errors.As(err, &ie) || ie.Source.Line < 1 {
			t.Errorf("input %q: error %v (%T) has no line", in, err, err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("input %q: objects differ from kubectl's (-kubectl +ours):\n%s", in, diff)
	}
}

func utf16le(s string) []byte {
	b, err := textunicode.UTF16(textunicode.LittleEndian, textunicode.UseBOM).NewEncoder().Bytes([]byte(s))
	if err != nil {
		panic(err)
	}
	return b
}

// readerCases are inputs where a reader could go wrong; the fuzz test
// starts from them too.
var readerCases = map[string][]byte{
	"block scalar at the end, no final newline":          []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  script: |\n    echo hi"),
	"folded scalar at the end, no final newline":         []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  script: >\n    echo\n    hi"),
	"keep chomping at the end":                           []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  script: |+\n    echo hi"),
	"strip chomping at the end":                          []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  script: |-\n    echo hi"),
	"block scalar before a separator":                    []byte("kind: A\ndata: |\n  x\n---\nkind: B\ndata: |\n  y"),
	"CRLF line ends":                                     []byte("apiVersion: v1\r\nkind: ConfigMap\r\ndata:\r\n  script: |\r\n    echo hi\r\n    exit 1\r\n---\r\nkind: B\r\n"),
	"CR at the end of the input":                         []byte("kind: A\ndata: |\n  x\r"),
	"UTF-8 byte order mark":                              []byte("\xef\xbb\xbfapiVersion: v1\nkind: ConfigMap\n"),
	"UTF-16 with byte order mark":                        utf16le("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: é\n"),
	"invalid UTF-8":                                      []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"\xff\xfe\"\n  b: x\xc3\n"),
	"invalid UTF-8 in a key":                             []byte("kind: A\ndata:\n  \xffa: b\n"),
	"NUL byte":                                           []byte("kind: A\ndata:\n  a: \x00b\n"),
	"separator with a comment":                           []byte("--- # first\nkind: A\n---   \nkind: B\n--- #\n"),
	"separator with text":                                []byte("kind: A\n--- kind: B\n"),
	"four dashes":                                        []byte("kind: A\n----\nkind: B\n"),
	"document end marker":                                []byte("kind: A\n...\n---\nkind: B\n"),
	"empty and null documents":                           []byte("---\n# c\n---\n\n---\nnull\n---\n~\n---\nkind: A\n"),
	"a line longer than the buffer":                      []byte("kind: A\ndata:\n  a: " + strings.Repeat("x", 10000) + "\n  b: |\n    " + strings.Repeat("y", 5000) + "\r\n"),
	"a last line of 4096 bytes, no line break":           []byte("kind: A\ndata:\n  a: x\n  b: " + strings.Repeat("y", 4096-5)),
	"a last line of 8192 bytes, no line break":           []byte("kind: A\ndata:\n  b: " + strings.Repeat("y", 8192-5)),
	"a last line of 4097 bytes, no line break":           []byte("kind: A\ndata:\n  b: " + strings.Repeat("y", 4097-5)),
	"invalid UTF-8 decoded to a last line of 4096 bytes": []byte("k" + strings.Repeat("\xf3", 1365)),
	"JSON stream":                                        []byte("{\"kind\": \"A\"}\n{\"kind\": \"B\",\n \"data\": {\"a\": 1}}\n"),
	"JSON then YAML":                                     []byte("{\"kind\": \"A\"}\nkind: B\n---\nkind: C\n"),
	"JSON, JSON, then YAML":                              []byte("{\"kind\": \"A\"}\n{\"kind\": \"B\"}\nkind: C\n"),
	"YAML flow mapping, not JSON":                        []byte("{kind: A, data: {a: 1,}}\n"),
	"JSON with a syntax error in the third value":        []byte("{\"kind\": \"A\"}\n{\"kind\": \"B\"}\n{\"kind\": \"C\",\n \"a\": 1\n \"b\": 2}\n"),
	"JSON after 5000 spaces":                             []byte(strings.Repeat(" ", 5000) + "{\"kind\": \"A\"}\n"),
	"JSON null values":                                   []byte("{\"kind\": \"A\"}\nnull\n{\"kind\": \"B\"}\n"),
	"JSON number":                                        []byte("{\"kind\": \"A\"}\n5\n"),
	"a list document":                                    []byte("- a\n- b\n"),
	"a scalar document":                                  []byte("hello\n"),
	"YAML 1.1 scalars":                                   []byte("kind: A\ndata:\n  a: yes\n  b: 0777\n  c: 1_000\n  d: 1e3\n  e: .inf\n  f: 0x1F\n"),
	"duplicate keys":                                     []byte("kind: A\nmetadata:\n  name: a\n  name: b\n"),
	"anchors and aliases":                                []byte("kind: A\ndata:\n  a: &x 1\n  b: *x\n"),
	"keys of two types written alike":                    []byte("kind: A\ndata:\n  2: a\n  \"2\": b\n"),
}

func TestReaderReadsLikeKubectl(t *testing.T) {
	for name, in := range readerCases {
		t.Run(name, func(t *testing.T) { checkLikeKubectl(t, in) })
	}
}

// FuzzReader: on any input, document.Read finds the objects kubectl's
// reader finds, and refuses what it refuses, with a line.
func FuzzReader(f *testing.F) {
	for _, in := range readerCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<16 {
			return
		}
		checkLikeKubectl(t, in)
		checkEachLikeNext(t, in)
		checkRawInInput(t, in)
	})
}

// checkRawInInput: unless NotUTF8 says why not, the text of each document
// as read is in the input, in order (its last line break aside, which the
// reader adds): prune --in-place finds it there to replace it.
func checkRawInInput(t *testing.T, in []byte) {
	t.Helper()
	docs, err := document.Read(bytes.NewReader(in), "in")
	if err != nil || document.NotUTF8(in) != "" {
		return
	}
	rest := in
	for i, d := range docs {
		raw := d.Raw()
		at := bytes.Index(rest, raw)
		if at < 0 {
			raw = bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
			at = bytes.Index(rest, raw)
		}
		if at < 0 {
			t.Fatalf("input %q: document %d (%q) is not in the input, and NotUTF8 says nothing", in, i, d.Raw())
		}
		rest = rest[at+len(raw):]
	}
}

// NotUTF8 says why a file's documents are not its bytes: UTF-16 (a byte
// order mark), bytes that are not UTF-8, at their line.
func TestNotUTF8(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"kind: A\n", ""},
		{"\xef\xbb\xbfkind: A\n", ""},
		{"kind: \u00e9\n", ""},
		{"\xff\xfek\x00", "it is UTF-16 (it starts with a byte order mark), which kubectl transcodes"},
		{"\xfe\xff\x00k", "it is UTF-16 (it starts with a byte order mark), which kubectl transcodes"},
		{"kind: A\n# caf\xe9\n", "line 2 has a byte that is not UTF-8 (0xE9, Latin-1?), which kubectl reads as U+FFFD"},
	} {
		if got := document.NotUTF8([]byte(tc.in)); got != tc.want {
			t.Errorf("NotUTF8(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, in := range readerCases {
		checkRawInInput(t, in)
	}
}

// checkEachLikeNext: Reader.Each, parsing on other goroutines, gives the
// documents and the error Next gives, in the same order.
func checkEachLikeNext(t *testing.T, in []byte) {
	t.Helper()
	var want []*document.Document
	r := document.NewReader(bytes.NewReader(in), "in")
	var werr error
	for {
		d, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				werr = err
			}
			break
		}
		want = append(want, d)
	}
	for _, workers := range []int{1, 3} {
		var got []*document.Document
		gerr := document.NewReader(bytes.NewReader(in), "in").Each(workers, func(d *document.Document) error {
			got = append(got, d)
			return nil
		})
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("input %q, %d workers: Each's error %v, Next's %v", in, workers, gerr, werr)
		}
		if len(got) != len(want) {
			t.Fatalf("input %q, %d workers: Each gives %d documents, Next %d", in, workers, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if !reflect.DeepEqual(g.Object, w.Object) || g.Source != w.Source || !reflect.DeepEqual(g.Warnings, w.Warnings) || !bytes.Equal(g.Raw(), w.Raw()) {
				t.Fatalf("input %q, %d workers: document %d differs: %v %v %v, Next's %v %v %v", in, workers, i, g.Object, g.Source, g.Warnings, w.Object, w.Source, w.Warnings)
			}
		}
	}
}

// TestEachLikeNext runs checkEachLikeNext on the reader's cases and on
// the corpus's files (the first 200).
func TestEachLikeNext(t *testing.T) {
	for _, in := range readerCases {
		checkEachLikeNext(t, in)
	}
	boom := errors.New("stop")
	calls := 0
	err := document.NewReader(strings.NewReader("kind: A\n---\nkind: B\n---\nkind: C\n"), "in").Each(2, func(*document.Document) error {
		calls++
		return boom
	})
	if err != boom || calls != 1 {
		t.Fatalf("Each returned %v after %d calls; want fn's error after 1", err, calls)
	}
	dir := corpus.Dir(t)
	files := append(corpus.CRFiles(t, dir), corpus.CRDFiles(t, dir)[:20]...)
	for _, f := range files {
		checkEachLikeNext(t, corpus.Read(t, dir, f))
	}
}

// TestReaderLines: documents and errors carry the line of the file, JSON
// and YAML, after a switch from one to the other.
func TestReaderLines(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		lines []int // of the documents
		err   int   // line of the error, 0 for none
		msg   string
	}{
		{name: "YAML", in: "# c\n\nkind: A\n---\n\n\nkind: B\n", lines: []int{3, 7}},
		{name: "JSON stream", in: "\n{\"kind\": \"A\"}\n\n{\n\"kind\": \"B\"}\n", lines: []int{2, 4}},
		{name: "JSON then YAML", in: "{\"kind\": \"A\"}\n\nkind: B\n---\nkind: C\n", lines: []int{1, 3, 5}},
		{name: "NUL byte", in: "kind: A\ndata:\n  a: b\n  c: \x00\n", err: 4, msg: "control characters"},
		{name: "NUL byte in a second document", in: "kind: A\n---\nkind: B\ndata:\n  c: \x00\n", err: 5, msg: "control characters"},
		{name: "JSON syntax error", in: "{\"kind\": \"A\"}\n{\"kind\": \"B\"}\n{\"kind\": \"C\",\n \"a\": 1\n \"b\": 2}\n", err: 5, msg: "invalid JSON"},
		{name: "JSON syntax error in a second JSON document", in: "{\"kind\": \"A\"}\n{\"kind\": \"B\",\n\n \"b\" 2}\n", err: 4, msg: "invalid JSON"},
		{name: "invalid UTF-8 is read as U+FFFD", in: "kind: A\ndata:\n  a: \xff\n", lines: []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := document.Read(strings.NewReader(tt.in), "f")
			if tt.err != 0 {
				var ie *document.InputError
				if !errors.As(err, &ie) || ie.Source.Line != tt.err || !strings.Contains(ie.Msg, tt.msg) {
					t.Fatalf("error %v, want one at f:%d saying %q", err, tt.err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []int
			for _, d := range ds {
				lines = append(lines, d.Source.Line)
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReaderBlockScalarAtEnd: a block scalar that ends the input without a
// line break keeps its "\n", as kubectl sends it (issue: prune stored
// "echo hi" where the server stores "echo hi\n").
func TestReaderBlockScalarAtEnd(t *testing.T) {
	ds, err := document.Read(strings.NewReader("kind: A\ndata:\n  script: |\n    echo hi"), "f")
	if err != nil {
		t.Fatal(err)
	}
	if got := ds[0].Object["data"].(map[string]interface{})["script"]; got != "echo hi\n" {
		t.Errorf("script = %q, want %q", got, "echo hi\n")
	}
}

func TestReaderStreams(t *testing.T) {
	// One document at a time: a reader that fails after the first
	// document still gives that document first.
	in := io.MultiReader(strings.NewReader("kind: A\n---\nkind: B\n---\n"), errReader{})
	r := document.NewReader(in, "f")
	d, err := r.Next()
	if err != nil || d.Object["kind"] != "A" {
		t.Fatalf("first document: %v, %v", d, err)
	}
	if d, err := r.Next(); err != nil || d.Object["kind"] != "B" {
		t.Fatalf("second document: %v, %v", d, err)
	}
	if _, err := r.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("after a failing read: %v, want the read error", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// kubectl's reader drops a last line that fills its 4096-byte buffer
// exactly: the object is checked as the server gets it, and a warning says
// what was dropped.
func TestReaderDroppedLastLine(t *testing.T) {
	in := "kind: A\ndata:\n  a: x\n  b: " + strings.Repeat("y", 4096-5)
	ds, err := document.Read(strings.NewReader(in), "f")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ds[0].Object["data"].(map[string]interface{})["b"]; ok {
		t.Errorf("data.b is read; kubectl's reader drops it")
	}
	if len(ds[0].Warnings) != 1 || ds[0].Warnings[0].Source.Line != 4 || !strings.Contains(ds[0].Warnings[0].Msg, "drops this last line") {
		t.Errorf("warnings %v, want one at line 4", ds[0].Warnings)
	}
}

// A document only kubectl's YAML 1.1 parser reads, with anchors and
// aliases, is refused: without the node tree their expansion cannot be
// bounded before it happens. Without aliases it is read; the node tree is
// parsed only where the reader needs it (aliases, a key written twice, the
// items of a List), and there a warning says that it could not be.
func TestYAML11OnlyDocuments(t *testing.T) {
	aliased := " a: &x [1, 2]\n b: [*x, *x]\n0\n0:\n"
	if _, err := document.Read(strings.NewReader(aliased), "f"); err == nil || !strings.Contains(err.Error(), "cannot be bounded") {
		t.Errorf("aliased: %v, want a refusal", err)
	}
	plain := " a: 1\n0\n0:\n"
	ds, err := document.Read(strings.NewReader(plain), "f")
	if err != nil || len(ds) != 1 || len(ds[0].Warnings) != 0 {
		t.Errorf("plain: %v, %v, want no warning", ds, err)
	}
	twice := " a: 1\n a: 2\n0\n0:\n"
	ds, err = document.Read(strings.NewReader(twice), "f")
	if err != nil || len(ds) != 1 || len(ds[0].Warnings) != 1 || !strings.Contains(ds[0].Warnings[0].Msg, "not every YAML parser") {
		t.Errorf("twice: %v, %v, want a warning", ds, err)
	}
	// kubectl reads all three.
	for _, in := range []string{aliased, plain, twice} {
		if _, refused := kubectlObjects([]byte(in)); refused {
			t.Errorf("kubectl refuses %q", in)
		}
	}
}

// endless is an input that never ends: the same bytes over and over.
type endless struct {
	pattern string
	at      int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.pattern[e.at]
		e.at = (e.at + 1) % len(e.pattern)
	}
	return len(p), nil
}

// A document larger than MaxDocumentBytes is refused as it is read, with its
// first line: an endless input (-f /dev/zero) ends with an error, not with the
// memory of the machine.
func TestReaderRefusesEndlessDocument(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   io.Reader
		line int
	}{
		{"zeros", &endless{pattern: "\x00"}, 1},
		{"YAML line", io.MultiReader(strings.NewReader("a: 1\n---\nb: \""), &endless{pattern: "x"}), 3},
		{"YAML lines", io.MultiReader(strings.NewReader("a: 1\n---\n\nitems:\n"), &endless{pattern: "- " + strings.Repeat("x", 97) + "\n"}), 3},
		{"JSON value", io.MultiReader(strings.NewReader("{\"a\": 1}\n{\"b\": \""), &endless{pattern: "x"}), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := document.NewReader(tc.in, "in")
			var err error
			for range 3 {
				if _, err = r.Next(); err != nil {
					break
				}
			}
			var ie *document.InputError
			if !errors.As(err, &ie) || !errors.Is(err, document.ErrBeyondLimits) {
				t.Fatalf("got %v, want an InputError beyond limits", err)
			}
			if ie.Source.Line != tc.line || !strings.Contains(ie.Msg, "a document of more than 64 MiB") {
				t.Errorf("got %v, want line %d and the limit", ie, tc.line)
			}
		})
	}
}

// A document just under the limit is read: the limit is no smaller than it says.
func TestReaderReadsDocumentUnderLimit(t *testing.T) {
	// Comments and white space: large text, a small object.
	pad := document.MaxDocumentBytes - 64
	for _, in := range []string{
		"a: 1\n#" + strings.Repeat("x", pad) + "\n---\nb: 2\n",
		"{\"a\": 1" + strings.Repeat(" ", pad) + "}\n{\"b\": 2}\n",
	} {
		ds, err := document.Read(strings.NewReader(in), "in")
		if err != nil || len(ds) != 2 {
			t.Fatalf("got %d documents, %v", len(ds), err)
		}
	}
}
