//go:build unix

package safewrite

import (
	"io"
	"io/fs"
	"os"
	"syscall"
)

// isFile says whether the open descriptor fd is the file info describes.
func isFile(fd uintptr, info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || fd == ^uintptr(0) {
		return false
	}
	var open syscall.Stat_t
	if err := syscall.Fstat(int(fd), &open); err != nil {
		return false
	}
	return open.Dev == st.Dev && open.Ino == st.Ino
}

// writeDescriptor writes to a copy of the open descriptor fd, which shares
// its offset: what is written follows what was (2>>log, 3>>log).
func writeDescriptor(fd int, name string, fill func(io.Writer) error) error {
	dup, err := syscall.Dup(fd)
	if err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(dup), name)
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// HardLinks is the number of names of the file info describes.
func HardLinks(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
