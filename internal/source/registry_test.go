package source

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The -short tier's servers of sources: go-containerregistry's registry
// and an https file server, in-process on loopback, and a run's Fetch as
// the front ends make it.

// testRegistry is go-containerregistry's registry on loopback, over plain
// http (which a registry on loopback is reached by).
type testRegistry struct {
	*httptest.Server
	host string
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return &testRegistry{Server: srv, host: strings.TrimPrefix(srv.URL, "http://")}
}

// push pushes files (title, content) as oras push does: an OCI manifest
// with a layer per file, titled; it returns the oci:// reference of
// repoTag and the image pushed.
func (r *testRegistry) push(t *testing.T, repoTag string, files ...string) (string, v1.Image) {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.oci.empty.v1+json")
	for i := 0; i+1 < len(files); i += 2 {
		var err error
		img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer([]byte(files[i+1]), "application/yaml"),
			MediaType: "application/yaml", Annotations: map[string]string{ociTitle: files[i]}})
		if err != nil {
			t.Fatal(err)
		}
	}
	ref, err := name.ParseReference(r.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return "oci://" + ref.String(), img
}

// testFileServer is an https server of files, its certificate not
// verified by the runs (Options.Insecure); it counts the requests.
type testFileServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string]string
	gets  int
}

func newTestFileServer(t *testing.T) *testFileServer {
	t.Helper()
	s := &testFileServer{files: map[string]string{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, ok := s.files[r.URL.Path]
		s.gets++
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, data)
	}))
	t.Cleanup(s.Close)
	return s
}

// put serves data at path, and returns its URL.
func (s *testFileServer) put(path, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = data
	return s.URL + path
}

func (s *testFileServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets
}

// run is a run's fetch of args as the front ends make it: the cache of
// dir, the lock file (none for ""), the options of opts beside.
func run(t *testing.T, opts Options, lock string, args ...string) (map[string]string, error) {
	t.Helper()
	opts.Insecure = true
	set, err := Fetch(context.Background(), opts, lock, args)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	files := map[string]string{}
	for _, a := range args {
		names, ok := set.Names(a)
		if !ok {
			t.Fatalf("%s: not a remote source of the set", a)
		}
		for _, n := range names {
			data, err := os.ReadFile(set.Path(n))
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			files[n] = string(data)
		}
	}
	return files, nil
}

// wantFiles fails unless files are want (name, content, ...).
func wantFiles(t *testing.T, what string, files map[string]string, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	w := map[string]string{}
	for i := 0; i+1 < len(want); i += 2 {
		w[want[i]] = want[i+1]
	}
	if len(files) != len(w) {
		t.Fatalf("%s: files %v, want %v", what, files, w)
	}
	for n, data := range w {
		if files[n] != data {
			t.Fatalf("%s: %s is %q, want %q", what, n, files[n], data)
		}
	}
}

// wantInputError fails unless err is a source's input error (exit 2)
// whose message has each of want.
func wantInputError(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) || !se.Input {
		t.Fatalf("%s: %v, want an input error", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: %v\nwant %q in it", what, err, w)
		}
	}
}

const (
	crdA = "kind: CustomResourceDefinition\nmetadata: {name: a}\n"
	crdB = "kind: CustomResourceDefinition\nmetadata: {name: b}\n"
)

// An artifact by tag: fetched, its files named by the source and their
// titles, pinned by the manifest's digest; then, the registry stopped,
// read from the cache by the lock, and offline by the last fetch; with a
// cold cache offline, an input error naming the source.
func TestOCIFetchPinAndCache(t *testing.T) {
	reg := newTestRegistry(t)
	src, img := reg.push(t, "crds/app:v1", "a.yaml", crdA, "b.yaml", crdB)
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache", "sources")
	lock := filepath.Join(dir, "kubectl-crd.lock")
	files, err := run(t, Options{Dir: cache, Update: true}, lock, src)
	wantFiles(t, "--update-lock", files, err, src+"/a.yaml", crdA, src+"/b.yaml", crdB)
	l, err := ReadLock(lock, false)
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Find(src); p == nil || p.Digest != digest.String() || p.Resolved != "oci://"+reg.host+"/crds/app@"+digest.String() {
		t.Fatalf("the lock's pin: %+v, want the digest %s", p, digest)
	}

	reg.Close()
	files, err = run(t, Options{Dir: cache}, lock, src)
	wantFiles(t, "by the lock, the registry stopped", files, err, src+"/a.yaml", crdA, src+"/b.yaml", crdB)
	files, err = run(t, Options{Dir: cache, Offline: true}, "", src)
	wantFiles(t, "offline, by the last fetch", files, err, src+"/a.yaml", crdA, src+"/b.yaml", crdB)
	_, err = run(t, Options{Dir: filepath.Join(dir, "cold"), Offline: true}, "", src)
	wantInputError(t, "offline, a cold cache", err, src+": not in the cache")
	_, err = run(t, Options{Dir: filepath.Join(dir, "cold"), Offline: true}, lock, src)
	wantInputError(t, "offline, a cold cache, by the lock", err, src+": "+digest.String()+" is not in the cache")
}

// A tag moved to another manifest: the lock's run fetches it (a cold
// cache) and refuses it, naming both digests; --update-lock takes it.
func TestOCIChangedManifest(t *testing.T) {
	reg := newTestRegistry(t)
	src, img := reg.push(t, "crds/app:v1", "a.yaml", crdA)
	old, _ := img.Digest()
	dir := t.TempDir()
	lock := filepath.Join(dir, "kubectl-crd.lock")
	if _, err := run(t, Options{Dir: filepath.Join(dir, "first"), Update: true}, lock, src); err != nil {
		t.Fatal(err)
	}
	_, img = reg.push(t, "crds/app:v1", "a.yaml", crdB)
	moved, _ := img.Digest()
	_, err := run(t, Options{Dir: filepath.Join(dir, "second")}, lock, src)
	wantInputError(t, "a moved tag", err, src+": digest "+moved.String(), "not the "+old.String(), "the source changed")
	files, err := run(t, Options{Dir: filepath.Join(dir, "second"), Update: true}, lock, src)
	wantFiles(t, "--update-lock", files, err, src+"/a.yaml", crdB)
	if l, err := ReadLock(lock, false); err != nil || l.Find(src).Digest != moved.String() {
		t.Fatalf("the lock after --update-lock: %+v %v", l, err)
	}
}

// An https file: pinned by its content's digest, then read from the cache
// by the lock without a request; without a lock, fetched on every run.
func TestHTTPSFetchPinAndCache(t *testing.T) {
	srv := newTestFileServer(t)
	src := srv.put("/crds.yaml", crdA)
	dir := t.TempDir()
	cache := filepath.Join(dir, "sources")
	lock := filepath.Join(dir, "kubectl-crd.lock")
	files, err := run(t, Options{Dir: cache, Update: true}, lock, src)
	wantFiles(t, "--update-lock", files, err, src, crdA)
	before := srv.requests()
	files, err = run(t, Options{Dir: cache}, lock, src)
	wantFiles(t, "by the lock", files, err, src, crdA)
	if srv.requests() != before {
		t.Errorf("a pinned source in the cache was fetched")
	}
	srv.put("/crds.yaml", crdB)
	files, err = run(t, Options{Dir: cache}, "", src)
	wantFiles(t, "no lock", files, err, src, crdB)
	_, err = run(t, Options{Dir: filepath.Join(dir, "cold")}, lock, src)
	wantInputError(t, "changed under its lock", err, src+": digest sha256:", "the source changed")
}
