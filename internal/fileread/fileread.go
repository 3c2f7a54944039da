// Package fileread reads the small files a run is given by name (a lock,
// values files, certificates, Helm's repository configuration) whole, and
// bounded: a file that is not a regular file (/dev/zero, a FIFO that
// never ends) or that is larger than the bound is an error after at most
// the bound is read, never a run that fills its memory.
package fileread

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxBytes bounds a file read whole: 64 MiB, as a document of the inputs
// (pkg/engine/document.MaxDocumentBytes).
const MaxBytes = 64 << 20

// TooLargeError is a file over the bound.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %d MiB, the most kubectl crd reads of a file", e.Path, e.Limit>>20)
}

// Read reads the file at path whole, at most MaxBytes.
func Read(path string) ([]byte, error) {
	return ReadLimit(path, MaxBytes)
}

// ReadLimit reads the file at path whole, at most limit bytes: more is a
// *TooLargeError, after limit+1 bytes are read.
func ReadLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > limit {
			return nil, &TooLargeError{Path: path, Limit: limit}
		}
		size = st.Size()
	}
	buf := make([]byte, 0, min(size, limit)+1)
	data, err := readAll(io.LimitReader(f, limit+1), buf)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// readAll is io.ReadAll into buf, so that a regular file's size is
// allocated once.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
