// Package crdindex reads the CRD files of a schema source (--crd-file, the
// KRM function's crdPaths) as an index: the group and kind each CRD
// defines, and its object only when a run asks for it. Parsing the YAML is
// most of what a CRD a run does not use costs, so the index of a file is
// kept in a cache keyed by the file's content: a run that checks one kind
// against a directory of a hundred CRDs reads the other ninety-nine as
// bytes to hash, and decodes none of them.
package crdindex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"iter"
	"os"
	"slices"
	"sync"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Entry is a CRD of a schema file, known by the kind it defines.
type Entry struct {
	// GroupKind is what the CRD defines, as written (zero when its group
	// or kind is not a string: it is refused once decoded).
	GroupKind runtimeschema.GroupKind
	Source    document.Source
	// object is the CRD as read now; else blob names it in the cache, and
	// file is the whole file, read again should the cache fail.
	object map[string]interface{}
	blob   string
	file   *file
	index  int
	// refusal is why the server would refuse the CRD ("" when it accepts
	// it), and warnings what it warns of when it accepts it, known once
	// checked: as the cache kept them, or as a run decided them
	// (File.SetVerdict), to be kept with the index (File.Keep).
	refusal  string
	warnings []string
	checked  bool
	// encoded is the CRD decoded (schema.CRD.Encoded), to be kept with
	// the index (File.SetEncoded); else encodedBlob names it in the cache
	// ("" when the cache holds none), and ref is what the document says
	// it is.
	encoded     []byte
	encodedBlob string
	ref         document.ObjectRef
}

// FromDocument is an entry of a CRD already read.
func FromDocument(d *document.Document) Entry {
	return Entry{GroupKind: Key(d.Object), Source: d.Source, object: d.Object}
}

// Key is the group and kind a CRD object defines, read as written; zero
// when either is not a string.
func Key(obj map[string]interface{}) runtimeschema.GroupKind {
	spec, _ := obj["spec"].(map[string]interface{})
	names, _ := spec["names"].(map[string]interface{})
	group, _ := spec["group"].(string)
	kind, _ := names["kind"].(string)
	if group == "" || kind == "" {
		return runtimeschema.GroupKind{}
	}
	return runtimeschema.GroupKind{Group: group, Kind: kind}
}

// Document is the CRD as the document reader reads it: its object and
// where it is (not its YAML's nodes, which no check of a schema source
// needs).
func (e Entry) Document() (*document.Document, error) {
	if e.object != nil {
		return &document.Document{Object: e.object, Source: e.Source}, nil
	}
	obj, err := readBlob(e.blob)
	if err != nil {
		// The cache went away during the run: the file is read again.
		f, ferr := e.file.parse()
		if ferr != nil {
			return nil, ferr
		}
		obj = f.Entries[e.index].object
	}
	return &document.Document{Object: obj, Source: e.Source}, nil
}

// Refusal is why the server would refuse the CRD, in the words of its
// decoding and CRD validation ("" when it accepts it): as the cache kept
// it, so that a run says which CRDs of a schema source the server refuses
// without decoding them; else decided now by v, the server's CRD
// validation (Verdict).
func (e Entry) Refusal(v schema.CRDValidator) (string, error) {
	refusal, _, err := e.Verdict(v)
	return refusal, err
}

// Verdict is Refusal with the warnings the server accepts the CRD with
// (schema.CRD.Warnings; none when it refuses it): as the cache kept them,
// else decided now by v (File.SetVerdict records them).
func (e Entry) Verdict(v schema.CRDValidator) (refusal string, warnings []string, err error) {
	if e.checked {
		return e.refusal, e.warnings, nil
	}
	d, err := e.Document()
	if err != nil {
		return "", nil, err
	}
	refusal, warnings = verdictOf(d.Object, v)
	return refusal, warnings, nil
}

// Encoded is the CRD decoded, as the cache kept it (schema.CRD.Encoded),
// for schema.DecodeEncoded, and its document without reading it: its
// object holds what the document says it is (apiVersion, kind, metadata's
// name and namespace), all a run reads of a CRD without mutability markers
// beside the CRD decoded (File.SetEncoded). ok false when the cache holds
// none or it can no longer be read: then the CRD is decoded from its
// Document.
func (e Entry) Encoded() (d *document.Document, encoded []byte, ok bool) {
	if e.encodedBlob == "" {
		return nil, nil, false
	}
	b, err := fileread.Read(e.encodedBlob)
	if err != nil {
		return nil, nil, false
	}
	metadata := map[string]interface{}{"name": e.ref.Name}
	if e.ref.Namespace != "" {
		metadata["namespace"] = e.ref.Namespace
	}
	obj := map[string]interface{}{"apiVersion": e.ref.APIVersion, "kind": e.ref.Kind, "metadata": metadata}
	return &document.Document{Object: obj, Source: e.Source}, b, true
}

// Accepted are the warnings the server accepts the CRD with, ok when the
// verdict is known (as the cache kept it, or File.SetVerdict) and the
// server accepts the CRD: a run that uses the CRD gives them to it
// (schema.CRD.SetAccepted) rather than validate it again.
func (e Entry) Accepted() (warnings []string, ok bool) {
	return e.warnings, e.checked && e.refusal == ""
}

// verdictOf is the server's refusal of a CRD object, as on a create: its
// decoding, then its CRD validation by v (with its CEL cost estimates);
// or the warnings it accepts it with.
func verdictOf(obj map[string]interface{}, v schema.CRDValidator) (refusal string, warnings []string) {
	warnings, err := schema.Verdict(obj, v)
	if err != nil {
		return err.Error(), nil
	}
	return "", warnings
}

// Warning is what the document reader warns of in a file (a key written
// twice, a line kubectl's reader drops), as it warns of the inputs.
type Warning struct {
	Object  document.ObjectRef `json:"object"`
	Source  document.Source    `json:"source"`
	Message string             `json:"message"`
}

// WarningsOf are the reader's warnings about a document as read: a List's,
// then its items'.
func WarningsOf(d *document.Document) []Warning {
	holders := d.Objects() // a List's items hold their own warnings
	if d.IsList() {
		holders = append([]*document.Document{d}, holders...)
	}
	var out []Warning
	for _, o := range holders {
		for _, w := range o.Warnings {
			out = append(out, Warning{Object: document.Ref(o.Object), Source: w.Source, Message: w.Msg})
		}
	}
	return out
}

// File is the index of one file: its CRDs in the order written, and the
// reader's warnings about all of it.
type File struct {
	Entries  []Entry
	Warnings []Warning
	// cache and key are where a file just parsed is kept (Keep); zero for
	// one read from the cache, or with none.
	cache Cache
	key   string
}

// Checked reports whether the server's verdict on entry i is known.
func (f *File) Checked(i int) bool { return f.Entries[i].checked }

// SetVerdict records the server's verdict on entry i (Entry.Verdict): its
// refusal, or the warnings it accepts the CRD with, as a run that prepared
// the CRD found them, or as Verdict decided them.
func (f *File) SetVerdict(i int, refusal string, warnings []string) {
	if refusal != "" {
		warnings = nil
	}
	e := &f.Entries[i]
	e.refusal, e.warnings, e.checked = refusal, warnings, true
}

// SetEncoded records entry i's CRD decoded (schema.CRD.Encoded), for the
// cache to keep with the index: a later run that uses the CRD reads it
// from there rather than decode it again, and does not read its document
// (Encoded): only for a CRD the server accepts that has no mutability
// marker, which the server drops. encode runs only when the file is to
// be kept (Keep).
func (f *File) SetEncoded(i int, encode func() ([]byte, error)) {
	if f.key == "" {
		return
	}
	if b, err := encode(); err == nil {
		f.Entries[i].encoded = b
	}
}

// Keep keeps a file just parsed in the cache, with the server's verdict on
// each of its CRDs, once a run knows them all: a run that uses some of a
// file's CRDs prepares those, and checks only the others. A file with a
// verdict unknown (a run stopped by a refused CRD) is not kept: the next
// run parses it again. Best effort: a cache that cannot be written is as
// none.
func (f *File) Keep() {
	if f.key == "" {
		return
	}
	for _, e := range f.Entries {
		if !e.checked {
			return
		}
	}
	f.cache.store(f.key, f)
	f.key = ""
	for i := range f.Entries {
		f.Entries[i].encoded = nil
	}
}

// file is a file's name and content, parsed at most once. path is where
// it is read, when not by its name (Path).
type file struct {
	name string
	path string
	data []byte
	once sync.Once
	f    *File
	err  error
}

func (f *file) parse() (*File, error) {
	f.once.Do(func() {
		data := f.data
		if data == nil { // ReadFile's: read now
			if data, f.err = os.ReadFile(f.path); f.err != nil {
				return
			}
		}
		f.f, f.err = parse(f.name, data)
	})
	return f.f, f.err
}

// parse reads a file with the document reader: its CRDs and its warnings.
func parse(name string, data []byte) (*File, error) {
	docs, err := document.Read(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	out := &File{}
	for _, d := range docs {
		out.Warnings = append(out.Warnings, WarningsOf(d)...)
		for _, o := range d.Objects() {
			if ref := document.Ref(o.Object); schema.IsCRD(ref.APIVersion, ref.Kind) {
				out.Entries = append(out.Entries, FromDocument(o))
			}
		}
	}
	return out, nil
}

// Cache is where indexes are kept: Dir "" keeps none. Build names the
// build of the tool that writes and reads them: an index is never trusted
// across builds (BuildKey).
type Cache struct {
	Dir   string
	Build string
}

// read is the index of a file of the given name and content, as ReadFile
// reads it.
func (c Cache) read(name string, data []byte) (*File, error) {
	f := &file{name: name, data: data}
	if c.Dir == "" {
		return f.parse()
	}
	return c.index(c.key(name, data), f)
}

// index is the index of f under key: from the cache, else parsed, to be
// kept there once its verdicts are known (File.Keep).
func (c Cache) index(key string, f *file) (*File, error) {
	if idx, err := c.load(key, f); err == nil {
		return idx, nil
	}
	idx, err := f.parse()
	if err != nil {
		return nil, err
	}
	idx.cache, idx.key = c, key
	return idx, nil
}

// ReadFile is the index of a file: from the cache when it holds one for
// that name, content and build, else parsed, to be kept there once the
// run knows the server's verdict on each of its CRDs (File.Keep). On a hit
// the content is only hashed, never held. A file that does not parse is
// the reader's error, with file and line. A cache that cannot be read or
// written is as none.
func (c Cache) ReadFile(path string) (*File, error) {
	return c.ReadPath(Path{File: path, Name: path})
}

// Path is a file to index and the name its entries' sources give it: a
// file fetched from a remote source (internal/source) is read from the
// cache that holds it and named by the source.
type Path struct {
	File, Name string
}

// ReadPath is ReadFile of p.File, its CRDs and warnings named p.Name.
func (c Cache) ReadPath(p Path) (*File, error) {
	f := &file{name: p.Name, path: p.File}
	if c.Dir == "" || c.Build == "" {
		return f.parse()
	}
	in, err := os.Open(p.File)
	if err != nil {
		return nil, err
	}
	h := c.hash(p.Name)
	_, err = io.Copy(h, in)
	in.Close()
	if err != nil {
		return nil, err
	}
	return c.index(hex.EncodeToString(h.Sum(nil)), f)
}

// ReadFiles is ReadFile of each path, on every core, the indexes yielded
// in the paths' order: a directory of CRD files is indexed as fast as the
// cores parse and check it. Leaving the range stops the reading.
func (c Cache) ReadFiles(paths []string) iter.Seq2[*File, error] {
	named := make([]Path, len(paths))
	for i, p := range paths {
		named[i] = Path{File: p, Name: p}
	}
	return c.ReadPaths(named)
}

// ReadPaths is ReadPath of each path, as ReadFiles.
func (c Cache) ReadPaths(paths []Path) iter.Seq2[*File, error] {
	type read struct {
		f   *File
		err error
	}
	readFile := func(p Path) read {
		f, err := c.ReadPath(p)
		return read{f, err}
	}
	return func(yield func(*File, error) bool) {
		for _, r := range ordered.Seq(ordered.Workers(), slices.Values(paths), readFile) {
			if !yield(r.f, r.err) {
				return
			}
		}
	}
}

// key is the cache key of a file: the index's format, the build, the
// name (the entries' sources name it) and the content.
func (c Cache) key(name string, data []byte) string {
	h := c.hash(name)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// hash is the hash of a key, the content still to be written to it. The
// minor answering is part of it: an index keeps the server's verdict on
// each CRD, which is that minor's.
func (c Cache) hash(name string) hash.Hash {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d:%s\x00", format, c.Build, kubeversion.Current().Minor, len(name), name)
	return h
}
