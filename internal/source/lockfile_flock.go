//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package source

import (
	"os"
	"syscall"
)

// openLockFile opens the lock file at path for reading and locking,
// creating it when missing.
func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o666)
}

// lockFile takes an exclusive lock of f (flock), waiting for it; f's
// Close releases it.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
