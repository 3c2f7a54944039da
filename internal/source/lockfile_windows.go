//go:build windows

package source

import (
	"os"

	"golang.org/x/sys/windows"
)

// openLockFile opens the lock file at path for reading and locking,
// creating it when missing. Unlike os.Open, it lets the file be renamed
// over while it is open (FILE_SHARE_DELETE): the lock is replaced so,
// and waiting runs then lock the new one.
func openLockFile(path string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_ALWAYS, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// lockFile takes an exclusive lock of f (LockFileEx), waiting for it; f's
// Close releases it.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, ^uint32(0), ^uint32(0), new(windows.Overlapped))
}
