package source

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// LockVersion is the version of the lock file's format.
const LockVersion = 1

// Pin is what a source resolved to: its URL or reference as given
// (credentials removed), what was fetched in the end (the URL after
// redirects; the manifest's digest for an OCI reference), and the sha256
// digest of the content (of an OCI artifact, its manifest's).
type Pin struct {
	Source   string `json:"source"`
	Resolved string `json:"resolved,omitempty"`
	// Version is the version a chart repository's source resolved to.
	Version string `json:"version,omitempty"`
	Digest  string `json:"digest"`
}

// Lock is a lock file (kubectl-crd.lock): the pins of the remote sources,
// in YAML (JSON reads too).
type Lock struct {
	// Path is the file's; not written.
	Path        string `json:"-"`
	LockVersion int    `json:"lockVersion"`
	Sources     []Pin  `json:"sources"`
}

const lockHeader = `# kubectl-crd.lock: the remote schema sources of kubectl crd, each pinned by
# the sha256 digest of its content (docs/sources.md). Written by --update-lock.
`

// ReadLock reads a lock file, at most fileread.MaxBytes (a larger one, or
// /dev/zero, is a *fileread.TooLargeError). A file that does not exist,
// or is empty (another run's UpdateLock is creating it), is an empty lock
// when missingOK (it is about to be written), else an error. The errors
// of its content do not name the file: the caller does.
func ReadLock(path string, missingOK bool) (*Lock, error) {
	data, err := fileread.Read(path)
	if missingOK && (errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0) {
		return &Lock{Path: path, LockVersion: LockVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseLock(path, data)
}

// parseLock reads the lock file at path of content data.
func parseLock(path string, data []byte) (*Lock, error) {
	l := &Lock{}
	if err := yaml.UnmarshalStrict(data, l); err != nil {
		return nil, err
	}
	if l.LockVersion != LockVersion {
		return nil, fmt.Errorf("lockVersion %d, not %d: written by another version of kubectl crd", l.LockVersion, LockVersion)
	}
	for _, p := range l.Sources {
		if p.Source == "" || !strings.HasPrefix(p.Digest, "sha256:") {
			return nil, errors.New("a source without its source or sha256 digest")
		}
	}
	l.Path = path
	return l, nil
}

// Find is the pin of a source; nil for none.
func (l *Lock) Find(name string) *Pin {
	for i := range l.Sources {
		if l.Sources[i].Source == name {
			return &l.Sources[i]
		}
	}
	return nil
}

// Set records the pin of its source, replacing the one before.
func (l *Lock) Set(p Pin) {
	if old := l.Find(p.Source); old != nil {
		*old = p
		return
	}
	l.Sources = append(l.Sources, p)
}

// Bytes is the lock file's content: the sources sorted, so that the same
// pins give the same bytes.
func (l *Lock) Bytes() ([]byte, error) {
	slices.SortFunc(l.Sources, func(a, b Pin) int { return strings.Compare(a.Source, b.Source) })
	l.LockVersion = LockVersion
	if l.Sources == nil {
		l.Sources = []Pin{}
	}
	data, err := yaml.Marshal(l)
	if err != nil {
		return nil, err
	}
	return append([]byte(lockHeader), data...), nil
}

// Changed says whether the lock's bytes differ from those of its file.
func (l *Lock) Changed() bool {
	data, err := l.Bytes()
	if err != nil {
		return true
	}
	old, err := fileread.Read(l.Path)
	return err != nil || !bytes.Equal(old, data)
}
