//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || windows)

package source

import "os"

// openLockFile opens the lock file at path, creating it when missing.
func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o666)
}

// lockFile cannot lock here (aix, solaris, plan9, wasm): concurrent
// updates of one lock may lose pins, as before file locks.
func lockFile(*os.File) error { return nil }
