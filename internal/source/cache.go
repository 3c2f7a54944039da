package source

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// blobs is the content-addressed cache: each file fetched under
// sha256/<hex> of its content, written whole and renamed into place, and
// under refs/ what the last fetch of each source found (its Pin), for
// --offline without a lock.
type blobs struct {
	dir string
	tmp bool // a directory of the run's own, removed by close
}

func openBlobs(dir string) (*blobs, error) {
	if dir != "" {
		return &blobs{dir: dir}, nil
	}
	tmp, err := os.MkdirTemp("", "kubectl-crd-sources-")
	if err != nil {
		return nil, err
	}
	return &blobs{dir: tmp, tmp: true}, nil
}

func (b *blobs) close() error {
	if b.tmp {
		return os.RemoveAll(b.dir)
	}
	return nil
}

// path is where a blob of digest "sha256:<hex>" is kept; "" for another
// digest.
func (b *blobs) path(digest string) string {
	hexd, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexd) != 64 || strings.ContainsAny(hexd, `/\.`) {
		return ""
	}
	return filepath.Join(b.dir, "sha256", hexd)
}

// has is the path of a blob the cache holds.
func (b *blobs) has(digest string) (string, bool) {
	p := b.path(digest)
	if p == "" {
		return "", false
	}
	st, err := os.Stat(p)
	return p, err == nil && st.Mode().IsRegular()
}

// put keeps data under its digest, and returns both.
func (b *blobs) put(data []byte) (digest, path string, err error) {
	sum := sha256.Sum256(data)
	digest = "sha256:" + hex.EncodeToString(sum[:])
	if p, ok := b.has(digest); ok {
		return digest, p, nil
	}
	return digest, b.path(digest), b.write(b.path(digest), data)
}

// write writes a file whole and renames it into place: a run reading the
// cache at the same time sees all of it or nothing.
func (b *blobs) write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path + ".tmp-" + hex.EncodeToString(rnd[:])
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
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

// lastFetch is what the last fetch of a source found; nil for none.
func (b *blobs) lastFetch(name string) *Pin {
	data, err := os.ReadFile(b.refPath(name))
	if err != nil {
		return nil
	}
	var p Pin
	if json.Unmarshal(data, &p) != nil || p.Source != name {
		return nil
	}
	return &p
}
