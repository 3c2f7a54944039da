package source

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
)

// UpdateLock writes pins to the lock file at path, each replacing the pin
// of its source, the file's other pins kept (the file is created when
// missing). Runs that update the same lock at once lose nothing: the file
// is read, merged and written under an exclusive lock of the file itself,
// so that each run merges into what the one before it wrote; and written
// whole to a temporary file renamed over it (safewrite), so that a crash
// never leaves half a lock, and a run reading it never sees one. No
// lock file is left beside it: a run that waited for the lock of a file
// that was replaced meanwhile (renamed over) locks the new one.
func UpdateLock(path string, pins []Pin) error {
	for {
		f, err := openLockFile(path)
		if err != nil {
			return err
		}
		done, err := updateLocked(f, path, pins)
		f.Close() // releases the lock
		if done || err != nil {
			return err
		}
	}
}

// updateLocked merges pins into the lock at path, f being that file
// opened: false when f was replaced while its lock was awaited.
func updateLocked(f *os.File, path string, pins []Pin) (done bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if st.Mode().IsRegular() {
		if err := lockFile(f); err != nil {
			return false, fmt.Errorf("%s: locking it: %w", path, err)
		}
		now, err := os.Stat(path)
		if err != nil || !os.SameFile(st, now) {
			return false, nil // renamed over while we waited: lock the new one
		}
	}
	old, err := io.ReadAll(io.LimitReader(f, fileread.MaxBytes+1))
	if err != nil {
		return false, err
	}
	if len(old) > fileread.MaxBytes {
		return false, &fileread.TooLargeError{Path: path, Limit: fileread.MaxBytes}
	}
	l := &Lock{Path: path, LockVersion: LockVersion}
	if len(bytes.TrimSpace(old)) > 0 { // created just now, by this run or the one before
		if l, err = parseLock(path, old); err != nil {
			return false, err
		}
	}
	for _, p := range pins {
		l.Set(p)
	}
	data, err := l.Bytes()
	if err != nil || bytes.Equal(data, old) {
		return true, err
	}
	return true, safewrite.WriteFile(path, data)
}
