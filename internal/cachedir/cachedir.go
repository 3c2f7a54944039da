// Package cachedir decides whether a cache directory may be trusted, and
// makes the directories and files of a cache private. Both caches under
// $KUBECTL_CRD_CACHE_DIR ask it: internal/source's (fetched files, kept
// by the sha256 of their content and verified on every read, so that an
// untrusted directory is still read, and never written) and
// pkg/engine/crdindex's (indexes derived from files, which no hash can
// verify, so that an untrusted directory is not used at all).
//
// Neither Go's caches (GOCACHE, GOMODCACHE) nor Helm's check the
// directory they are given: they write with the umask's permissions and
// read back what they find. Ours hold what decides a verdict, and are
// shared in CI (a restored cache, a self-hosted runner), so they check,
// as git checks the owner of a repository (safe.directory) and OpenSSH the
// modes of ~/.ssh (StrictModes).
package cachedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The modes of what a cache writes: the user's alone, as ~/.ssh.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// UntrustedError is a cache directory that fails Check: Dir, and why.
type UntrustedError struct {
	Dir    string
	Reason string
}

func (e *UntrustedError) Error() string { return e.Dir + ": " + e.Reason }

// Check says whether dir, and each of subs (paths below it) that exists,
// may be trusted as a cache: nil when each is a directory, not a symbolic
// link, owned by the user running, that neither its group nor others may
// write (on Windows, whose permissions are ACLs that the mode does not
// show, only the first two). A directory that does not exist yet is
// trusted: MkdirAll creates it private. Any other answer is an
// *UntrustedError.
func Check(dir string, subs ...string) error {
	for _, d := range append([]string{dir}, subs...) {
		if d != dir {
			d = filepath.Join(dir, d)
		}
		st, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return &UntrustedError{Dir: d, Reason: err.Error()}
		}
		if reason := untrusted(st); reason != "" {
			return &UntrustedError{Dir: d, Reason: reason}
		}
	}
	return nil
}

// untrusted is why a directory's Lstat is not a cache's to trust, "" when
// it is.
func untrusted(st fs.FileInfo) string {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return "a symbolic link, not a directory: name the directory itself"
	case !st.IsDir():
		return "not a directory"
	}
	if uid, me, ok := owner(st); ok && uid != me {
		return fmt.Sprintf("owned by another user (uid %d; this is uid %d)", uid, me)
	}
	if othersWrite(st) {
		return fmt.Sprintf("writable by its group or others (%s): chmod go-w it", st.Mode())
	}
	return ""
}

// MkdirAll creates dir and the parents it lacks, private.
func MkdirAll(dir string) error { return os.MkdirAll(dir, DirMode) }
