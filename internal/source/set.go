package source

import (
	"context"
	"errors"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// Set is the remote sources of a run, fetched (or read from the cache):
// the names of each argument's files, and the file that holds each.
type Set struct {
	fetcher *Fetcher
	names   map[string][]string
	local   map[string]string
	charts  map[string]bool // the arguments that were Helm charts
	kept    bool            // remote sources are among them, in a cache kept after the run
}

// Fetch fetches the remote sources among the arguments (IsRemote, and
// Helm charts on disk, IsChart; the others are left alone) and renders
// the charts, reading the lock of lockFile ("" for none) into
// opts.Lock, and writing the pins of what it fetched to it with
// opts.Update (UpdateLock: other runs' pins kept). The Set is closed by
// its caller, once its files are read.
func Fetch(ctx context.Context, opts Options, lockFile string, args ...[]string) (*Set, error) {
	s := &Set{names: map[string][]string{}, local: map[string]string{}, charts: map[string]bool{}}
	var remote []string
	for _, as := range args {
		for _, a := range as {
			if IsRemote(a) || IsChart(a) {
				remote = append(remote, a)
			}
		}
	}
	if len(remote) == 0 {
		return s, nil
	}
	if lockFile != "" {
		l, err := ReadLock(lockFile, opts.Update)
		if err != nil {
			return nil, &Error{Source: lockFile, Input: true, Err: withoutPath(err)}
		}
		opts.Lock = l
	}
	f, err := New(opts)
	if err != nil {
		return nil, &Error{Source: "sources", Input: true, Err: err}
	}
	s.fetcher = f
	for _, a := range remote {
		files, err := f.Files(ctx, a)
		if err != nil {
			f.Close()
			return nil, err
		}
		s.names[a] = []string{} // a chart may hold no CRD
		s.charts[a] = f.isChart(a)
		for _, file := range files {
			s.names[a] = append(s.names[a], file.Name)
			s.local[file.Name] = file.Path
		}
	}
	for _, a := range remote {
		s.kept = s.kept || IsRemote(a) && f.cache.kept()
	}
	if opts.Update && opts.Lock != nil {
		// Merged with the file as it is now: another run may have
		// written it since it was read (UpdateLock).
		if err := UpdateLock(lockFile, f.pins); err != nil {
			f.Close()
			return nil, &Error{Source: lockFile, Input: isTooLarge(err), Err: withoutPath(err)}
		}
	}
	return s, nil
}

// Names are the names of the files of a remote source argument; false
// for an argument that is not one.
func (s *Set) Names(arg string) ([]string, bool) {
	if s == nil {
		return nil, false
	}
	names, ok := s.names[arg]
	return names, ok
}

// IsChart says whether a source argument of the set was a Helm chart,
// rendered: on disk (IsChart), or fetched (an oci:// reference is one
// when its manifest's config is Helm's).
func (s *Set) IsChart(arg string) bool { return s != nil && s.charts[arg] }

// Path is the file that holds the input of name: a remote source's file
// in the cache, else name itself.
func (s *Set) Path(name string) string {
	if s != nil {
		if p, ok := s.local[name]; ok {
			return p
		}
	}
	return name
}

// Kept says whether the set holds remote sources, fetched or read from a
// cache that keeps them after the run: a run with --offline then reads
// them from there (by the lock, else by what the cache notes of this
// fetch). False for none, or a cache not kept (KUBECTL_CRD_CACHE_DIR=off,
// or not trusted: read only).
func (s *Set) Kept() bool { return s != nil && s.kept }

// Close removes what a run without a cache fetched.
func (s *Set) Close() {
	if s != nil && s.fetcher != nil {
		s.fetcher.Close()
	}
}

// isTooLarge says whether err is a file over the bound of fileread.
func isTooLarge(err error) bool {
	var tl *fileread.TooLargeError
	return errors.As(err, &tl)
}
