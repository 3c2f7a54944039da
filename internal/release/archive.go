package release

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// ArchiveFile is a file to put in an archive: Name in the archive, the
// contents of Source on disk, and Mode (0o755 for executables, else 0o644).
type ArchiveFile struct {
	Name   string
	Source string
	Mode   int64
}

// WriteArchive writes files as a tar.gz whose bytes depend only on the
// files' names, modes and contents and on mtime: entries sorted by name,
// owner 0:0 without names, every mtime set to mtime, USTAR headers (no PAX
// records with access times), and a gzip header without name or time.
func WriteArchive(w io.Writer, files []ArchiveFile, mtime time.Time) error {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b ArchiveFile) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(files); i++ {
		if files[i].Name == files[i-1].Name {
			return fmt.Errorf("archive: %s twice", files[i].Name)
		}
	}
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if err := addFile(tw, f, mtime); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func addFile(tw *tar.Writer, f ArchiveFile, mtime time.Time) error {
	src, err := os.Open(f.Source)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("archive: %s is not a regular file", f.Source)
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     f.Name,
		Size:     info.Size(),
		Mode:     f.Mode,
		ModTime:  mtime.UTC().Truncate(time.Second),
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archive: %s: %v", f.Name, err)
	}
	if _, err := io.Copy(tw, src); err != nil {
		return fmt.Errorf("archive: %s: %v", f.Name, err)
	}
	return nil
}
