//go:build unix

package document

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// A FIFO named *.yaml in a directory is refused, directly or through a
// symbolic link, with -R or not: kubectl opens it and waits for a writer
// forever, and so did kubectl crd (-R, the function's crdPaths). A FIFO
// named itself is read, as kubectl reads it.
func TestFilesFIFOInDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	top, deep := filepath.Join(dir, "pipe.yaml"), filepath.Join(sub, "pipe.yml")
	for _, p := range []string{top, deep} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip(err)
		}
	}
	linkDir := t.TempDir()
	if err := os.Symlink(deep, filepath.Join(linkDir, "link.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir       string
		recursive bool
		fifo      string
	}{{dir, false, top}, {dir, true, top}, {sub, false, deep}, {linkDir, false, filepath.Join(linkDir, "link.json")}} {
		_, err := Files(tc.dir, tc.recursive)
		want := tc.fifo + `: a named pipe (FIFO) in the directory "` + tc.dir + `"`
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Files(%s, %v): %v\nwant: %s...", tc.dir, tc.recursive, err, want)
		}
	}
	got, err := Files(top, false)
	if err != nil || !reflect.DeepEqual(got, []string{top}) {
		t.Errorf("a FIFO named itself: %v, %v", got, err)
	}
}
