package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// archiveEntry is what a tar header and its contents say of a file.
type archiveEntry struct {
	Name, Uname, Gname string
	Uid, Gid           int
	Mode               int64
	Type               byte
	ModTime            time.Time
	Data               string
}

// readArchive reads a tar.gz as it is, without normalising anything.
func readArchive(t *testing.T, b []byte) (*gzip.Header, []archiveEntry) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var entries []archiveEntry
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, archiveEntry{hdr.Name, hdr.Uname, hdr.Gname, hdr.Uid, hdr.Gid, hdr.Mode, hdr.Typeflag, hdr.ModTime.UTC(), string(data)})
	}
	return &gz.Header, entries
}

func TestWriteArchive(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string, mode os.FileMode, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		// The files' own times and modes must not reach the archive.
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bin := write("bin", "#!/bin/sh\n", 0o700, time.Now())
	license := write("license", "Apache License\n", 0o600, time.Now().Add(-time.Hour))
	files := []ArchiveFile{
		{Name: "kubectl-crd", Source: bin, Mode: 0o755},
		{Name: "LICENSE", Source: license, Mode: 0o644},
	}
	epoch := time.Date(2026, 11, 22, 7, 36, 0, 0, time.UTC)
	var first, second bytes.Buffer
	if err := WriteArchive(&first, files, epoch); err != nil {
		t.Fatal(err)
	}
	// Another order of files, other times on disk: the same bytes.
	write("bin", "#!/bin/sh\n", 0o755, time.Now().Add(time.Hour))
	if err := WriteArchive(&second, []ArchiveFile{files[1], files[0]}, epoch); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Error("the same files gave different archives")
	}

	gzHeader, entries := readArchive(t, first.Bytes())
	if gzHeader.Name != "" || !gzHeader.ModTime.IsZero() || gzHeader.Comment != "" {
		t.Errorf("gzip header carries name %q, time %v, comment %q", gzHeader.Name, gzHeader.ModTime, gzHeader.Comment)
	}
	want := []archiveEntry{
		{Name: "LICENSE", Mode: 0o644, Type: tar.TypeReg, ModTime: epoch, Data: "Apache License\n"},
		{Name: "kubectl-crd", Mode: 0o755, Type: tar.TypeReg, ModTime: epoch, Data: "#!/bin/sh\n"},
	}
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}

	var later bytes.Buffer
	if err := WriteArchive(&later, files, epoch.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first.Bytes(), later.Bytes()) {
		t.Error("another mtime gave the same archive")
	}
}

func TestWriteArchiveErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string][]ArchiveFile{
		"twice":     {{Name: "a", Source: file, Mode: 0o644}, {Name: "a", Source: file, Mode: 0o644}},
		"directory": {{Name: "a", Source: dir, Mode: 0o644}},
		"missing":   {{Name: "a", Source: filepath.Join(dir, "missing"), Mode: 0o644}},
	} {
		if err := WriteArchive(io.Discard, files, time.Unix(0, 0)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
