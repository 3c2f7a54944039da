// Package source fetches the CRDs of schema sources that are not local
// files (https:// URLs, oci:// artifacts) into a content-addressed cache
// beside the cache of indexes, pinned by a lock file, and hands them back
// as local files: the front ends read them as any file of --crd-file,
// --old, crdPaths or previous, named by the source. The engine has no
// network code; this package has no engine code.
package source

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// File is a file of a fetched source: Path holds its content, Name is
// how messages name it (the source with its credentials removed, and for
// a source of several files, the file within it).
type File struct {
	Path, Name string
	chart      bool // a Helm chart's directory or archive, to render
}

// Options configure a Fetcher.
type Options struct {
	// Dir is the cache (DefaultDir); "" keeps none: what is fetched is
	// held in a temporary directory until Close.
	Dir string
	// Lock pins the sources: a source it pins is read from the cache when
	// the cache holds its digest, else fetched and checked against it; a
	// source it lacks is an error. Nil: no pins.
	Lock *Lock
	// Update fetches every source anew and records it in Lock.
	Update bool
	// Offline never fetches: sources come from the cache, by the lock's
	// pins, else by what the cache recorded of the last fetch.
	Offline bool
	// CAFile adds the certificates of a PEM file to the system's (which
	// SSL_CERT_FILE and SSL_CERT_DIR set) for https.
	CAFile string
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// ClientCertFile and ClientKeyFile are a PEM certificate and its key
	// that the client shows a server (https or an OCI registry) that asks
	// for one (mutual TLS); the key's file is the certificate's when "".
	ClientCertFile, ClientKeyFile string
	// PlainHTTP lets an OCI registry that is not on loopback be reached
	// without TLS (one on loopback always may be).
	PlainHTTP bool
	// Timeout bounds each fetch (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxBytes bounds the size of each file fetched.
	MaxBytes int64
	// ChartSet (helm's --set) and ChartValues (values files) are the
	// values every Helm chart is rendered with, beside its own.
	ChartSet, ChartValues []string
	// Warn is told what a run should know that fails nothing (a cache
	// not trusted, read only), a line without "Warning: "; nil: nobody.
	Warn func(string)
	// ChartRoot, when set, is the directory that every file of a chart
	// directory must be in, its symbolic links resolved (the KRM
	// function's load restriction, applied by crd-helm as it reads them).
	ChartRoot string
}

// DefaultTimeout bounds a fetch: its connection, its request and its
// reading.
const DefaultTimeout = 2 * time.Minute

// IsRemote says whether a source argument names a remote source rather
// than a local file or directory.
func IsRemote(arg string) bool {
	for _, scheme := range []string{"https://", "http://", "oci://"} {
		if len(arg) > len(scheme) && strings.EqualFold(arg[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// DefaultDir is the cache of fetched sources: "sources" in the directory
// of $KUBECTL_CRD_CACHE_DIR, else kubectl-crd/sources in the user's cache
// directory, beside the cache of indexes (kubectl-crd/crds); "" when it is
// "off" or there is no such directory.
func DefaultDir() string {
	switch dir := os.Getenv("KUBECTL_CRD_CACHE_DIR"); dir {
	case "off":
		return ""
	case "":
	default:
		return filepath.Join(dir, "sources")
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "kubectl-crd", "sources")
}

// Error is a source that could not be read: Input when the fault is the
// source's or the lock's (a changed digest, a source not in the cache
// offline, a file too large, an HTTP status that is not a server's
// error), else the network's or the machine's.
type Error struct {
	Source string
	Input  bool
	Err    error
}

func (e *Error) Error() string { return e.Source + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Fetcher fetches sources, each at most once per run.
type Fetcher struct {
	opts    Options
	cache   *blobs
	mu      sync.Mutex
	fetched map[string][]File
	// charts are the sources fetched that were Helm charts, by name.
	charts map[string]bool
	client *client
	// pins are the sources fetched with Options.Update, for the lock.
	pins []Pin
	// values are the values files of the charts, once read (valuesFiles).
	values []string
	// renderDir holds the files of the charts rendered, removed by Close
	// (removeRenderDir), or on a signal.
	renderDir       string
	removeRenderDir func() error
}

// New is a Fetcher with opts.
func New(opts Options) (*Fetcher, error) {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	cache, err := openBlobs(opts.Dir, c.maxBytes)
	if err != nil {
		return nil, err
	}
	if cache.untrusted != nil && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("the cache of remote sources is not trusted: read only, a file used as its digest verifies it: %v", cache.untrusted))
	}
	return &Fetcher{opts: opts, cache: cache, fetched: map[string][]File{}, charts: map[string]bool{}, client: c}, nil
}

// Close removes what a run without a cache fetched, and the charts
// rendered.
func (f *Fetcher) Close() error {
	if f.removeRenderDir != nil {
		f.removeRenderDir()
	}
	return f.cache.close()
}

// Files are the files of a remote source, fetched or from the cache, as
// the lock and the options say.
func (f *Fetcher) Files(ctx context.Context, arg string) ([]File, error) {
	name := Redact(arg)
	f.mu.Lock()
	defer f.mu.Unlock()
	if files, ok := f.fetched[name]; ok {
		return files, nil
	}
	var files []File
	var err error
	if IsChart(arg) {
		files = []File{{Path: arg, Name: arg, chart: true}}
	} else {
		files, err = f.resolve(ctx, arg, name)
	}
	chart := false
	for _, file := range files {
		chart = chart || file.chart
	}
	if err == nil {
		files, err = f.renderCharts(ctx, name, files)
	}
	if err != nil {
		var se *Error
		if !errors.As(err, &se) {
			err = &Error{Source: name, Err: err}
		}
		return nil, err
	}
	f.fetched[name], f.charts[name] = files, chart
	return files, nil
}

// isChart says whether a source Files read was a Helm chart.
func (f *Fetcher) isChart(arg string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.charts[Redact(arg)]
}

// resolve reads a source by its pin, by the last fetch offline, or
// fetches it.
func (f *Fetcher) resolve(ctx context.Context, arg, name string) ([]File, error) {
	k, err := kindOf(arg)
	if err != nil {
		return nil, &Error{Source: name, Input: true, Err: err}
	}
	var pin *Pin
	if f.opts.Lock != nil && !f.opts.Update {
		if pin = f.opts.Lock.Find(name); pin == nil {
			return nil, &Error{Source: name, Input: true, Err: fmt.Errorf("not in the lock %s (--update-lock adds it)", f.opts.Lock.Path)}
		}
	}
	if pin == nil && f.opts.Offline {
		pin = f.cache.lastFetch(name)
		switch {
		case pin == nil && f.cache.untrusted != nil:
			return nil, &Error{Source: name, Input: true, Err: fmt.Errorf("not in the cache, and --offline fetches nothing: what the cache notes of the last fetch is not read, as %v; pin the source in a lock (--lock, --update-lock), whose digest verifies the cache's files", f.cache.untrusted)}
		case pin == nil:
			return nil, &Error{Source: name, Input: true, Err: errors.New("not in the cache, and --offline fetches nothing: run once without --offline to fetch it")}
		}
	}
	if pin != nil {
		seen := len(f.cache.corrupt)
		if files, ok := k.cached(f.cache, name, pin.Digest); ok {
			return files, nil
		}
		if f.opts.Offline {
			// A changed entry is named: the cache was written by another.
			if ce := f.cache.corruptSince(seen); ce != nil {
				return nil, &Error{Source: name, Input: true, Err: fmt.Errorf("%w, and --offline fetches nothing: run without --offline to fetch it again", ce)}
			}
			return nil, &Error{Source: name, Input: true, Err: fmt.Errorf("%s is not in the cache, and --offline fetches nothing", pin.Digest)}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	got, files, err := k.fetch(ctx, f, arg, name)
	if err != nil {
		return nil, err
	}
	if pin != nil && got.Digest != pin.Digest {
		return nil, &Error{Source: name, Input: true, Err: fmt.Errorf("digest %s, not the %s of the lock %s: the source changed (--update-lock accepts the change)", got.Digest, pin.Digest, f.lockPath())}
	}
	f.cache.recordFetch(got)
	if f.opts.Update && f.opts.Lock != nil {
		f.opts.Lock.Set(got)
		f.pins = append(f.pins, got)
	}
	return files, nil
}

func (f *Fetcher) lockPath() string {
	if f.opts.Lock == nil {
		return ""
	}
	return f.opts.Lock.Path
}

// kind is a kind of remote source: how it is fetched, and how its files
// are found in the cache by its digest.
type kind interface {
	fetch(ctx context.Context, f *Fetcher, arg, name string) (Pin, []File, error)
	cached(c *blobs, name, digest string) ([]File, bool)
}

func kindOf(arg string) (kind, error) {
	u, _, err := parseSource(arg)
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		switch {
		case isFileURL(u):
			return httpsKind{}, nil
		case u.Fragment != "":
			return helmRepoKind{}, nil
		case isChartURL(u):
			return helmArchiveKind{}, nil
		}
		return httpsKind{}, nil
	case "oci":
		return ociKind{}, nil
	}
	return nil, fmt.Errorf("%s:// is not fetched: use https:// or oci://", u.Scheme)
}

// isFileURL says whether an https source is a file by its name (.yaml,
// .yml, .json): its fragment (a line of a repository's web view, #L10)
// is no chart's name, and is not sent.
func isFileURL(u *url.URL) bool {
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
