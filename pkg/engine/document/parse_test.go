package document

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
)

// eagerParse is how a YAML document was read before its node tree waited
// for a need: parsed twice, sigs.k8s.io/yaml's JSON decoded, the node tree
// always built, duplicate keys looked for in every document. The reader
// must read every document as it did.
func eagerParse(c chunk, file string) (*Document, error) {
	node, nodeErr := parseTree(c.text)
	if nodeErr == nil && bytes.IndexByte(c.text, '*') >= 0 {
		src := Source{File: file, Line: c.startLine}
		if len(node.Content) > 0 {
			src.Line += node.Content[0].Line - 1
		}
		if err := checkAliases(node, src, requestBound); err != nil {
			return nil, err
		}
	}
	if nodeErr != nil && bytes.IndexByte(c.text, '&') >= 0 && bytes.IndexByte(c.text, '*') >= 0 {
		ie := shiftYAMLError(nodeErr, file, c.startLine)
		return nil, &InputError{Source: ie.Source, Err: ErrBeyondLimits, Msg: "this document may hold YAML aliases, and only kubectl's YAML 1.1 parser reads it (" + ie.Msg +
			"): what its aliases expand to cannot be bounded before they expand; write it without aliases"}
	}
	if err := keysAlike(c.data); err != nil {
		return nil, conversionError(err, c, file)
	}
	js, err := sigsyaml.YAMLToJSON(c.data)
	if err != nil {
		ie := shiftYAMLError(err, file, c.startLine)
		if l := firstUnprintable(c.data); l >= 0 && strings.Contains(err.Error(), "control characters are not allowed") {
			ie.Source.Line = c.startLine + l
		}
		return nil, ie
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || bytes.Equal(js, []byte("null")) {
		return nil, nil
	}
	d := &Document{Source: Source{File: file, Line: c.startLine}, raw: c.text, lineShift: c.startLine - 1}
	if nodeErr != nil {
		ie := shiftYAMLError(nodeErr, file, c.startLine)
		d.Warnings = append(d.Warnings, Warning{Source: ie.Source, Msg: "kubectl reads this document, but not every YAML parser does (" + ie.Msg +
			"): lines are not known, and an edit writes the document again without its comments"})
	} else if len(node.Content) > 0 {
		d.Source.Line = c.startLine + node.Content[0].Line - 1
	}
	d.setTree(node, nodeErr)
	if c.dropped > 0 {
		d.Warnings = append(d.Warnings, Warning{Source: Source{File: file, Line: c.dropped},
			Msg: "kubectl's reader drops this last line (a multiple of 4096 bytes without a line break): the server never gets it"})
	}
	if err := d.decode(nil, js, true); err != nil {
		return d, err
	}
	return d, d.checkSize(len(js), requestBound)
}

// checkLikeEager reads the YAML documents of in both ways and fails where
// they differ: error, object (types included), line, warnings, items.
// A document the YAML 1.2 parser refuses is the exception: read lazily, it
// has that warning, and the line of its first node, only when the reader
// needed its node tree; and it is refused for aliases only when a "*"
// could start one.
func checkLikeEager(t *testing.T, in []byte) {
	t.Helper()
	r := NewReader(bytes.NewReader(in), "in")
	if r.yaml == nil {
		return // JSON: its node tree is built as it was
	}
	for i := 0; ; i++ {
		c, err := r.nextChunk()
		if err != nil {
			if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "separator") && !strings.Contains(err.Error(), "more than") {
				t.Fatalf("input %q: %v", in, err)
			}
			return
		}
		got, gerr := parseChunk(c, "in")
		want, werr := eagerParse(c, "in")
		if werr != nil && strings.Contains(werr.Error(), "may hold YAML aliases") && !mayHoldAliases(c.text) {
			// Refused for a "*" that cannot start an alias: read now.
			continue
		}
		treeRefused := want != nil && want.treeErr != nil
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() && !sameButLine(c.text, treeRefused, gerr, werr) {
			t.Fatalf("input %q, document %d: error %v, want %v", in, i, gerr, werr)
		}
		if (got == nil) != (want == nil) {
			t.Fatalf("input %q, document %d: document %v, want %v", in, i, got, want)
		}
		if want != nil && want.node != nil && !mayHoldAliases(c.text) && hasAlias(want.node) {
			t.Fatalf("input %q, document %d: an alias, which mayHoldAliases does not see", in, i)
		}
		if got == nil || gerr != nil {
			continue
		}
		lenient := want.treeErr != nil && got.treeErr == nil && !got.treeDone
		for j, w := range append([]*Document{want}, want.Objects()...) {
			g := append([]*Document{got}, got.Objects()...)[j]
			if !reflect.DeepEqual(g.Object, w.Object) {
				t.Fatalf("input %q, document %d: object differs (-eager +lazy):\n%s", in, i, cmp.Diff(w.Object, g.Object))
			}
			if lenient {
				continue
			}
			// The eager reader, its node tree refused, named the line where
			// the document's text starts; the lazy one may know the line of
			// its first node, from the text.
			lineKnown := !want.IsList() && want.treeErr != nil && g.Source.File == w.Source.File && g.Source.Line >= w.Source.Line
			if g.Source != w.Source && !lineKnown || !reflect.DeepEqual(g.Warnings, w.Warnings) {
				t.Fatalf("input %q, document %d: source %v, warnings %v; want %v, %v", in, i, g.Source, g.Warnings, w.Source, w.Warnings)
			}
		}
	}
}

// sameButLine: the two errors differ only in their line, the lazy reader's
// later, for one of three reasons (the third: a key kubectl's conversion
// refuses, below). The eager reader's node tree was refused
// (treeRefused), so it named the line where the document's text starts,
// where the lazy one names the line of its first node (blank lines before
// it). Or the text has a separator such as "---#", which kubectl's reader
// splits on and YAML reads as the start of a scalar: the eager reader took
// the document's line from that scalar, the separator's; the lazy one names
// the line where kubectl's document starts, after the separator.
func sameButLine(text []byte, treeRefused bool, got, want error) bool {
	var g, w *InputError
	if !errors.As(got, &g) || !errors.As(want, &w) || g.Msg != w.Msg || g.Source.File != w.Source.File {
		return false
	}
	if treeRefused && g.Source.Line >= w.Source.Line {
		return true
	}
	// A key kubectl's conversion refuses (a null, a mapping, a list): the
	// lazy reader names the key's line (badKeyLine), the eager one the
	// document's.
	if (strings.Contains(g.Msg, "invalid map key") || strings.Contains(g.Msg, "unsupported map key")) && g.Source.Line >= w.Source.Line {
		return true
	}
	for _, line := range bytes.Split(text, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("---#")) {
			return g.Source.Line > w.Source.Line
		}
	}
	return false
}

func hasAlias(n *kyaml.Node) bool {
	if n.Kind == kyaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

func TestMayHoldAliases(t *testing.T) {
	for in, want := range map[string]bool{
		"a: *x\n":                    true,
		"- *x\n":                     true,
		"*x: 1\n":                    true,
		"a: [1,*x]\n":                true,
		"a: {b:*x}\n":                true,
		"a:\n  *x\n":                 true,
		"a: b\u2028*x\n":             true,
		"a: '*'\n":                   false,
		"a: matches *.example.com\n": false,
		"a: |\n  * an item\n":        false,
		"a: **bold**\n":              false,
		"# *x\n":                     false,
		"a: b*c\n":                   false,
	} {
		if got := mayHoldAliases([]byte(in)); got != want {
			t.Errorf("mayHoldAliases(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzParse: on any input, the reader reads every YAML document exactly as
// the eager reader did, with one parse where it can.
func FuzzParse(f *testing.F) {
	for _, in := range parseCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<16 {
			return
		}
		checkLikeEager(t, in)
	})
}

// parseCases are where one parse could differ from two.
var parseCases = []string{
	"kind: A\nmetadata:\n  name: a\n  name: b\n",
	"kind: A\nspec:\n  x: [{a: 1, a: 2}]\n",
	"kind: A\nspec:\n  1: a\n  \"2\": b\n  true: c\n",
	"kind: A\nspec:\n  a: 1.0\n  b: 1e21\n  c: 1e20\n  d: -0.0\n  e: 0.000001\n  f: 1e-7\n  h: 9223372036854775807\n  i: 1.5\n  j: 0x1F\n",
	"kind: A\nspec:\n  g: 18446744073709551615\n",
	"kind: A\nspec:\n  i: .nan\n",
	"kind: A\nspec:\n  i: -.inf\n",
	"kind: A\nspec:\n  a: \"\\xff\\xfe\"\n  \"\\xff\": 1\n",
	"kind: A\nspec:\n  a: yes\n  b: 0777\n  c: 2001-12-14t21:59:43.10-05:00\n  d: !!binary aGk=\n  e: ~\n  f: []\n  g: {}\n  h: <a&b>\n",
	"kind: A\nspec:\n  <<: {a: 1}\n  a: 2\n",
	"kind: A\nspec:\n  a: &x {b: 1}\n  c: *x\n",
	"kind: A\nspec:\n  a: [*x]\n",
	"kind: A\nspec:\n  a: a*b\n  b: '*'\n  c: \"**x\"\n",
	"kind: A\nspec:\n  !!merge \"\\x3c\\x3c\": {a: 1}\n",
	"kind: A\nspec:\n  !<tag:yaml.org,2002:%6Derge> \"\\x3c\\x3c\": {a: 1}\n  a: 2\n",
	"%TAG !e! tag:yaml.org,2002:\n---\nkind: A\nspec:\n  !e!merge \"\\x3c\\x3c\": {a: 1}\n",
	"- key: a\n  value: b\n",
	"{}\n",
	"# c\n\n--- # d\n  kind: A\n",
	"--- !!map\nkind: A\n",
	"817: 0C\nC9:\n  2: 7\n  \"2\": 8\nA: ",
	"%YAML 1.1\n---\nkind: A\n",
	"&a\nkind: A\n",
	"\t\nkind: A\n",
	"# c\rkind: A\n",
	"# c\u2028\nkind: A\n",
	"kind: A\n\u2028x: 1\n",
	" a: 1\n0\n0:\n",
	"kind: AList\nitems:\n- kind: B\n  a: 1\n  a: 2\n- kind: C\n",
	"? a\n: b\n",
	"[a, b]\n",
	"{a: 1, a: 2}\n",
	"\"a\": 1\n'a': 2\n",
	"kind: A\nspec: {\"a\": !!binary aGk=, hi: 1}\n",
}

// TestParseCorpus: every document of the corpus, CRDs and samples, is
// read exactly as the eager reader read it (a sample, every set read,
// unless KUBECTL_CRD_CORPUS_ALL=1).
func TestParseCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the whole corpus")
	}
	dir := corpus.Dir(t)
	for _, f := range corpus.Sample(t, corpus.Manifest(t, dir)) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.LocalPath)))
		if err != nil {
			t.Fatal(err)
		}
		checkLikeEager(t, b)
	}
}

func TestParseCases(t *testing.T) {
	for _, in := range parseCases {
		checkLikeEager(t, []byte(in))
	}
}
