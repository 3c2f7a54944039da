package source

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/cachedir"
	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
)

// blobs is the content-addressed cache: each file fetched under
// sha256/<hex> of its content, written whole and renamed into place, and
// under refs/ what the last fetch of each source found (its Pin), for
// --offline without a lock. Content-addressed means verified: a blob is
// hashed when it is read, and one whose content is not its digest's (the
// cache written by someone else: a shared directory, a restored CI cache)
// is a miss, fetched again and replaced online, named offline (corrupt).
//
// Its directories and files are private (cachedir). A cache directory
// that is not the user's own, or that others may write (cachedir.Check),
// is read only: its blobs are read as they verify (copied into the run's
// own directory first, so that what was hashed is what is read), nothing
// is written there, and its records of the last fetch, which no digest
// verifies, are not read.
type blobs struct {
	// dir is where blobs are written and read: the cache, or a directory
	// of the run's own (tmp), removed by close.
	dir string
	tmp bool
	// readOnly is a cache not trusted (untrusted says why), read only.
	readOnly  string
	untrusted error
	max       int64 // the most a blob holds: the limit of a fetch
	// verified are the blobs hashed by this run; corrupt, the entries
	// found not to hold their digest's content, in the order found.
	verified map[string]bool
	corrupt  []*corruptError
	remove   func() error // removes tmp's directory
}

// openBlobs opens the cache of dir, "" for none (a directory of the run's
// own).
func openBlobs(dir string, max int64) (*blobs, error) {
	b := &blobs{dir: dir, max: max, verified: map[string]bool{}}
	if dir != "" {
		// Its parent is the cache of indexes' (DefaultDir): whoever may
		// write that may replace this.
		b.untrusted = cachedir.Check(filepath.Dir(dir), filepath.Base(dir), filepath.Join(filepath.Base(dir), "sha256"), filepath.Join(filepath.Base(dir), "refs"))
		if b.untrusted == nil {
			return b, nil
		}
		b.readOnly = dir
	}
	// Removed by close, or on SIGINT or SIGTERM: no way of ending a run
	// leaves what it fetched behind.
	tmp, remove, err := safewrite.TempDir("kubectl-crd-sources-")
	if err != nil {
		return nil, err
	}
	b.dir, b.tmp, b.remove = tmp, true, remove
	return b, nil
}

// kept says whether what is fetched stays in a cache after the run.
func (b *blobs) kept() bool { return !b.tmp }

func (b *blobs) close() error {
	if b.tmp {
		return b.remove()
	}
	return nil
}

// path is where a blob of digest "sha256:<hex>" is kept; "" for another
// digest (64 lowercase hex digits, so that no digest names a path out of
// the cache).
func (b *blobs) path(digest string) string {
	hexd, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || !isHex64(hexd) {
		return ""
	}
	return filepath.Join(b.dir, "sha256", hexd)
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// corruptError is a cache entry that does not hold its digest's content.
type corruptError struct {
	path, digest, reason string
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("the cache entry %s does not hold the content of %s (%s)", e.path, e.digest, e.reason)
}

// has is the path of a blob the cache holds, its content hashed once per
// run: an entry of other content is none (noted in corrupt).
func (b *blobs) has(digest string) (string, bool) {
	p := b.path(digest)
	if p == "" {
		return "", false
	}
	if b.verified[digest] {
		return p, true
	}
	err := b.verify(p, digest)
	if errors.Is(err, fs.ErrNotExist) && b.readOnly != "" {
		err = b.copyVerified(filepath.Join(b.readOnly, "sha256", filepath.Base(p)), p, digest)
	}
	if err != nil {
		var ce *corruptError
		if errors.As(err, &ce) {
			b.corrupt = append(b.corrupt, ce)
		}
		return "", false
	}
	b.verified[digest] = true
	return p, true
}

// copyVerified copies the blob of digest at from to to, once its content
// is read and hashed: a cache that others may write can change a file
// between its hash and its reading, not a copy of the run's own.
func (b *blobs) copyVerified(from, to, digest string) error {
	st, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &corruptError{path: from, digest: digest, reason: "not a regular file"}
	}
	data, err := fileread.ReadLimit(from, b.max)
	var tl *fileread.TooLargeError
	if errors.As(err, &tl) {
		return &corruptError{path: from, digest: digest, reason: fmt.Sprintf("larger than %d MiB, the limit of a fetch", b.max>>20)}
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != digest {
		return &corruptError{path: from, digest: digest, reason: "its content is of " + got + ": it was changed after it was fetched"}
	}
	return b.write(to, data)
}

// verify hashes the entry at p: nil when it is a regular file of digest's
// content, a *corruptError when it is something else, the error of the
// file system when it cannot be read (none: fs.ErrNotExist).
func (b *blobs) verify(p, digest string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &corruptError{path: p, digest: digest, reason: "not a regular file"}
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, b.max+1))
	switch {
	case err != nil:
		return err
	case n > b.max:
		return &corruptError{path: p, digest: digest, reason: fmt.Sprintf("larger than %d MiB, the limit of a fetch", b.max>>20)}
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != digest {
		return &corruptError{path: p, digest: digest, reason: "its content is of " + got + ": it was changed after it was fetched"}
	}
	return nil
}

// put keeps data under its digest, and returns both: an entry that does
// not hold it already is replaced.
func (b *blobs) put(data []byte) (digest, path string, err error) {
	sum := sha256.Sum256(data)
	digest = "sha256:" + hex.EncodeToString(sum[:])
	if p, ok := b.has(digest); ok {
		return digest, p, nil
	}
	path = b.path(digest)
	if err := b.write(path, data); err != nil {
		return "", "", err
	}
	b.verified[digest] = true
	return digest, path, nil
}

// write writes a file whole and renames it into place: a run reading the
// cache at the same time sees all of it or nothing.
func (b *blobs) write(path string, data []byte) error {
	if err := cachedir.MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path + ".tmp-" + hex.EncodeToString(rnd[:])
	if err := os.WriteFile(tmp, data, cachedir.FileMode); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (b *blobs) refPath(name string) string {
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(b.dir, "refs", hex.EncodeToString(sum[:]))
}

// recordFetch notes what a fetch of a source found; best effort.
func (b *blobs) recordFetch(p Pin) {
	if data, err := json.Marshal(p); err == nil {
		b.write(b.refPath(p.Source), data)
	}
}

// maxRef bounds the record of a fetch: a source's name and a digest.
const maxRef = 1 << 20

// lastFetch is what the last fetch of a source found; nil for none. It is
// a hint: the blobs it names are verified as any, and a digest that is
// not a sha256 (a path out of the cache) is no record.
func (b *blobs) lastFetch(name string) *Pin {
	data, err := fileread.ReadLimit(b.refPath(name), maxRef)
	if err != nil {
		return nil
	}
	var p Pin
	if json.Unmarshal(data, &p) != nil || p.Source != name || b.path(p.Digest) == "" {
		return nil
	}
	return &p
}

// corruptSince is the first entry found corrupt after the first n, nil for
// none.
func (b *blobs) corruptSince(n int) *corruptError {
	if len(b.corrupt) > n {
		return b.corrupt[n]
	}
	return nil
}
