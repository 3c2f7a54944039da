package crdindex

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-crd/kubectl-crd/internal/cachedir"
	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// format is the version of the cache's layout and of what it holds.
// crdindex/3 keeps the server's warnings on each CRD it accepts: an
// entry of crdindex/2, which did not, would read as one with none.
// crdindex/4 keeps each CRD a run used decoded, in protobuf (N.pb).
const format = "crdindex/4"

// CacheDirEnv names the cache directory; "off" keeps none.
const CacheDirEnv = "KUBECTL_CRD_CACHE_DIR"

// DefaultDir is the cache of indexes: $KUBECTL_CRD_CACHE_DIR, else
// kubectl-crd/crds in the user's cache directory ($XDG_CACHE_HOME, or
// ~/.cache on Linux); "" (none) when it is "off" or there is no such
// directory.
func DefaultDir() string {
	switch dir := os.Getenv(CacheDirEnv); dir {
	case "off":
		return ""
	case "":
	default:
		return dir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "kubectl-crd", "crds")
}

// Open is the cache of indexes in dir ("" keeps none) for build, when dir
// may be trusted (cachedir.Check: the user's own directory, that no one
// else may write). Else the cache is none, and the error says why, for
// the front ends to warn of: an index is derived from a file (its CRDs
// decoded, the server's verdict on each), so that no hash of the file
// verifies it, and whoever may write the directory decides what it says.
func Open(dir, build string) (Cache, error) {
	if dir == "" {
		return Cache{Build: build}, nil
	}
	if err := cachedir.Check(dir); err != nil {
		return Cache{Build: build}, fmt.Errorf("the cache of CRD indexes is not used: %w", err)
	}
	return Cache{Dir: dir, Build: build}, nil
}

// BuildKey names the running build: its module version and VCS revision,
// and for a build of a modified tree or without them (a development
// build, a test binary), its executable's size and modification time. ""
// when none of that is known: then nothing is cached.
func BuildKey() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	key := info.Main.Path + "@" + info.Main.Version + " " + info.GoVersion
	revision, modified := "", true
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	key += " " + revision
	if revision != "" && !modified && info.Main.Version != "(devel)" {
		return key
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	st, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return key + " " + strconv.FormatInt(st.Size(), 10) + " " + strconv.FormatInt(st.ModTime().UnixNano(), 10)
}

// stored is a file's index as the cache holds it, in index.json beside a
// JSON file per CRD (0.json, 1.json, ...) and, for a CRD a run decoded,
// its decoded form (0.pb, ...: schema.CRD.Encoded).
type stored struct {
	Format   string        `json:"format"`
	Entries  []storedEntry `json:"entries"`
	Warnings []Warning     `json:"warnings"`
}

type storedEntry struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Line  int    `json:"line"`
	// Refusal is the server's verdict on the CRD (Entry.Refusal), and
	// Warnings what it warns of when it accepts it (Entry.Accepted).
	Refusal  string   `json:"refusal,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Encoded, when N.pb holds the CRD decoded, is what its document
	// says it is (Entry.Encoded).
	Encoded *document.ObjectRef `json:"encoded,omitempty"`
}

func (c Cache) path(key string) string { return filepath.Join(c.Dir, key[:2], key) }

// load is the cached index of key, its entries read from the cache when
// used (Entry.Document), or from f should it fail by then.
func (c Cache) load(key string, f *file) (*File, error) {
	if c.Build == "" {
		return nil, os.ErrNotExist
	}
	dir := c.path(key)
	// The entry's directories too: the cache's own, as Open found it.
	if err := cachedir.Check(c.Dir, key[:2], filepath.Join(key[:2], key)); err != nil {
		return nil, err
	}
	b, err := fileread.Read(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, err
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil || s.Format != format {
		return nil, fmt.Errorf("%s: not an index of %s", dir, format)
	}
	out := &File{Warnings: s.Warnings}
	for i, e := range s.Entries {
		var encoded string
		var ref document.ObjectRef
		if e.Encoded != nil {
			encoded, ref = filepath.Join(dir, strconv.Itoa(i)+".pb"), *e.Encoded
		}
		out.Entries = append(out.Entries, Entry{
			GroupKind: runtimeschema.GroupKind{Group: e.Group, Kind: e.Kind},
			Source:    document.Source{File: f.name, Line: e.Line},
			blob:      filepath.Join(dir, strconv.Itoa(i)+".json"), file: f, index: i,
			refusal: e.Refusal, warnings: e.Warnings, checked: true, encodedBlob: encoded, ref: ref,
		})
	}
	return out, nil
}

// store keeps idx under key, written in a directory of its own and then
// renamed into place: a run reading the cache at the same time sees all
// of it or nothing, and of two runs that store the same index, one wins.
func (c Cache) store(key string, idx *File) {
	if c.Build == "" {
		return
	}
	final := c.path(key)
	if err := cachedir.MkdirAll(filepath.Dir(final)); err != nil {
		return
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := final + ".tmp-" + hex.EncodeToString(rnd[:])
	if err := c.write(tmp, idx); err != nil || os.Rename(tmp, final) != nil {
		os.RemoveAll(tmp)
	}
}

func (c Cache) write(dir string, idx *File) error {
	if err := os.Mkdir(dir, cachedir.DirMode); err != nil {
		return err
	}
	s := stored{Format: format, Entries: []storedEntry{}, Warnings: idx.Warnings}
	for i, e := range idx.Entries {
		b, err := json.Marshal(e.object)
		if err != nil {
			return err // NaN: no JSON; not kept
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".json"), b, cachedir.FileMode); err != nil {
			return err
		}
		var encoded *document.ObjectRef
		if e.encoded != nil {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".pb"), e.encoded, cachedir.FileMode); err != nil {
				return err
			}
			ref := document.Ref(e.object)
			encoded = &ref
		}
		s.Entries = append(s.Entries, storedEntry{
			Group: e.GroupKind.Group, Kind: e.GroupKind.Kind, Line: e.Source.Line,
			Refusal: e.refusal, Warnings: e.warnings, Encoded: encoded,
		})
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.json"), b, cachedir.FileMode)
}

// readBlob reads a CRD's object as kubectl decodes JSON: integers as
// int64, as the document reader makes them.
func readBlob(path string) (map[string]interface{}, error) {
	b, err := fileread.Read(path)
	if err != nil {
		return nil, err
	}
	var obj map[string]interface{}
	if err := utiljson.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("%s: no object", path)
	}
	return obj, nil
}
