package crdindex

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// poisoned is a cache of dir holding the index of twoCRDs, its first CRD's
// object changed as one who may write the cache would change it (a
// maximum raised): what a run reads from it decides its verdicts.
func poisoned(t *testing.T, dir string) (key string) {
	t.Helper()
	c := Cache{Dir: dir, Build: "test"}
	data := []byte(twoCRDs)
	idx, err := c.read("crds.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	keepAll(idx)
	key = c.key("crds.yaml", data)
	blob := filepath.Join(c.path(key), "0.json")
	b, err := os.ReadFile(blob)
	if err != nil || !strings.Contains(string(b), `"maximum":10`) {
		t.Fatalf("%s: %s %v", blob, b, err)
	}
	if err := os.WriteFile(blob, []byte(strings.Replace(string(b), `"maximum":10`, `"maximum":1000`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return key
}

// firstObject is the object of the first CRD of twoCRDs as c reads it, and
// whether it came from the cache.
func firstObject(t *testing.T, c Cache) (map[string]interface{}, bool) {
	t.Helper()
	idx, err := c.read("crds.yaml", []byte(twoCRDs))
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Entries[0].Document()
	if err != nil {
		t.Fatal(err)
	}
	return d.Object, idx.Entries[0].object == nil
}

// A cache directory that is not the user's own or that others may write
// is not used (Open: none, and the error the front ends warn with): an
// index cannot be verified by a hash, so that whoever may write the
// directory decides what it says. An entry whose directories are such is
// not read either.
func TestUntrustedCacheNotUsed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are ACLs")
	}
	crds, _ := want(t, "crds.yaml", []byte(twoCRDs))
	truth := crds[0].Object

	dir := t.TempDir()
	key := poisoned(t, dir)
	if obj, cached := firstObject(t, Cache{Dir: dir, Build: "test"}); !cached || reflect.DeepEqual(obj, truth) {
		t.Fatalf("the poisoned entry is not what a trusted cache reads: cached %v", cached)
	}
	for _, sub := range []string{key[:2], filepath.Join(key[:2], key)} {
		if err := os.Chmod(filepath.Join(dir, sub), 0o777); err != nil {
			t.Fatal(err)
		}
		if obj, cached := firstObject(t, Cache{Dir: dir, Build: "test"}); cached || !reflect.DeepEqual(obj, truth) {
			t.Errorf("%s writable by others: read from the cache %v, the file's object %v", sub, cached, reflect.DeepEqual(obj, truth))
		}
		os.Chmod(filepath.Join(dir, sub), 0o700)
	}

	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dir, "test")
	if c.Dir != "" || err == nil || err.Error() != "the cache of CRD indexes is not used: "+dir+": writable by its group or others (drwxrwxrwx): chmod go-w it" {
		t.Fatalf("Open of a directory others may write: %+v, %v", c, err)
	}
	if obj, cached := firstObject(t, c); cached || !reflect.DeepEqual(obj, truth) {
		t.Errorf("an untrusted cache was read")
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if c, err := Open(dir, "test"); c.Dir != dir || err != nil {
		t.Errorf("Open of the user's own directory: %+v, %v", c, err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if c, err := Open(link, "test"); c.Dir != "" || err == nil || !strings.Contains(err.Error(), link+": a symbolic link") {
		t.Errorf("Open of a symbolic link: %+v, %v", c, err)
	}
}

// What the cache writes is private: directories 0700, files 0600.
func TestCachePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are ACLs")
	}
	dir := filepath.Join(t.TempDir(), "crds")
	poisoned(t, dir)
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: %v, want %v", p, st.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if n < 6 { // crds, its key's directory, the entry, index.json, 0.json, 1.json
		t.Fatalf("%d entries", n)
	}
}
