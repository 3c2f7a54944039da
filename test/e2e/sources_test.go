package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
)

// fileServer is an HTTPS server of files on loopback, with its own
// self-signed CA (caFile), the files changeable while it runs; those
// under /private/ want basic authentication as user:secret.
type fileServer struct {
	*httptest.Server
	caFile string
	mu     sync.Mutex
	files  map[string][]byte
}

func newFileServer(t *testing.T) *fileServer {
	t.Helper()
	s := &fileServer{files: map[string][]byte{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	s.caFile = filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	if err := os.WriteFile(s.caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *fileServer) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/private/") {
		if user, pass, ok := r.BasicAuth(); !ok || user != "user" || pass != "secret" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
	}
	s.mu.Lock()
	data, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(data)
}

// put serves data at path, and returns its URL.
func (s *fileServer) put(path string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = data
	return s.URL + path
}

// sourceBundle is the CRDs of a corpus set as one stream, as projects
// publish them in a release, and the files of its custom resources.
func sourceBundle(t *testing.T, set string) (bundle []byte, crs []string) {
	dir := corpus.Dir(t)
	for _, f := range corpus.Manifest(t, dir) {
		if f.Set() != set {
			continue
		}
		switch f.Kind {
		case corpus.KindCRD:
			bundle = append(bundle, "---\n"...)
			bundle = append(bundle, corpus.Read(t, dir, f)...)
		case corpus.KindCR:
			crs = append(crs, filepath.Join(dir, filepath.FromSlash(f.LocalPath)))
		}
	}
	if len(bundle) == 0 || len(crs) == 0 {
		t.Fatalf("corpus: no CRDs or custom resources of %s", set)
	}
	return bundle, crs
}

// pruneArgs are the arguments of prune --defaults against crdSource, with
// -f for each custom resource.
func pruneArgs(crdSource string, crs []string, extra ...string) []string {
	args := append([]string{"prune", "--crd-file", crdSource, "--defaults"}, extra...)
	for _, f := range crs {
		args = append(args, "-f", f)
	}
	return args
}

// sameRun fails unless two runs print the same, once the names of the
// remote source are those of the local file.
func sameRun(t *testing.T, what string, got, want Result, remote, local string) {
	t.Helper()
	norm := func(s string) string { return strings.ReplaceAll(s, remote, local) }
	if got.Code != want.Code || norm(got.Stdout) != want.Stdout || norm(got.Stderr) != want.Stderr {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s\nwant stdout:\n%s\nwant stderr:\n%s",
			what, got.Code, want.Code, got.Stdout, got.Stderr, want.Stdout, want.Stderr)
	}
}

// A CRD bundle by https URL: the verdicts of the same CRDs as a local
// file; the lock written with --update-lock; a rerun with the server
// stopped gives the same bytes from the cache, by --offline or by the
// lock; a changed digest exits 2 naming the source.
func TestSourceHTTPS(t *testing.T) {
	bundle, crs := sourceBundle(t, "keda@v2.21.0")
	dir := t.TempDir()
	local := filepath.Join(dir, "keda-crds.yaml")
	if err := os.WriteFile(local, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	// --offline also leaves the kubeconfig's namespace alone: both ways.
	want := NewTest(t).Run("kubectl-crd", pruneArgs(local, crs)...)
	wantOffline := NewTest(t).Run("kubectl-crd", pruneArgs(local, crs, "--offline")...)
	if want.Code > 1 || want.Stdout == "" || wantOffline.Stdout == "" {
		t.Fatalf("local: exit %d\n%s", want.Code, want.Stderr)
	}
	srv := newFileServer(t)
	url := srv.put("/releases/v2.21.0/keda-crds.yaml", bundle)
	cache := t.TempDir()
	lock := filepath.Join(dir, "kubectl-crd.lock")
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + cache)
	ca := "--source-certificate-authority=" + srv.caFile
	got := x.Run("kubectl-crd", pruneArgs(url, crs, ca, "--lock", lock, "--update-lock")...)
	sameRun(t, "by URL", got, want, url, local)
	sum := sha256.Sum256(bundle)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	data, err := os.ReadFile(lock)
	if err != nil || !strings.Contains(string(data), "- digest: "+digest+"\n  source: "+url+"\n") {
		t.Fatalf("lock (%v):\n%s", err, data)
	}

	srv.Close() // the network cut: the cache answers
	sameRun(t, "offline", x.Run("kubectl-crd", pruneArgs(url, crs, "--offline")...), wantOffline, url, local)
	sameRun(t, "by the lock", x.Run("kubectl-crd", pruneArgs(url, crs, "--lock", lock)...), got, url, url)

	// Cold cache, offline: the source is named.
	cold := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	r := cold.Run("kubectl-crd", pruneArgs(url, crs, "--offline")...)
	if r.Code != 2 || !strings.Contains(r.Stderr, url+": not in the cache") {
		t.Fatalf("offline, cold: exit %d\n%s", r.Code, r.Stderr)
	}
}

// The source changes under its lock: exit 2, naming the source and both
// digests; --update-lock accepts the change.
func TestSourceHTTPSChangedDigest(t *testing.T) {
	srv := newFileServer(t)
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	url := srv.put("/crd.yaml", crd)
	lock := filepath.Join(t.TempDir(), "kubectl-crd.lock")
	ca := "--source-certificate-authority=" + srv.caFile
	online := []string{"prune", "--crd-file", url, ca, "-f", "examples/maintenance/job.yaml", "--lock", lock}
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	if r := x.Run("kubectl-crd", append(online, "--update-lock")...); r.Code != 0 {
		t.Fatalf("--update-lock: exit %d\n%s", r.Code, r.Stderr)
	}
	srv.put("/crd.yaml", append(crd, "# changed\n"...))
	// A cold cache fetches the source again, and finds it changed.
	x = NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	r := x.Run("kubectl-crd", online...)
	if r.Code != 2 || !strings.Contains(r.Stderr, url+": digest sha256:") || !strings.Contains(r.Stderr, "the source changed") {
		t.Fatalf("changed: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := x.Run("kubectl-crd", append(online, "--update-lock")...); r.Code != 0 {
		t.Fatalf("--update-lock after the change: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := x.Run("kubectl-crd", online...); r.Code != 0 {
		t.Fatalf("the updated lock: exit %d\n%s", r.Code, r.Stderr)
	}
}

// --old by URL: a CRD upgrade checked against the old CRD fetched gives
// the verdicts of the old CRD as a file; offline, from the cache.
func TestSourceHTTPSOld(t *testing.T) {
	root := repoRoot()
	old := filepath.Join(root, crdUpgradeDir, "old.yaml")
	data, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	srv := newFileServer(t)
	url := srv.put("/v1/crd.yaml", data)
	args := func(oldArg string, extra ...string) []string {
		return append([]string{"check-update", "--old", oldArg, "--objects", filepath.Join(root, crdUpgradeDir, "objects.yaml"),
			"-f", filepath.Join(root, crdUpgradeDir, "new.yaml"), "-o", "json"}, extra...)
	}
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	want := x.Run("kubectl-crd", args(old)...)
	if want.Code != 1 || want.Stdout == "" {
		t.Fatalf("local: exit %d\n%s", want.Code, want.Stderr)
	}
	sameRun(t, "by URL", x.Run("kubectl-crd", args(url, "--source-certificate-authority", srv.caFile)...), want, url, old)
	srv.Close()
	wantOffline := x.Run("kubectl-crd", args(old, "--offline")...)
	sameRun(t, "offline", x.Run("kubectl-crd", args(url, "--offline")...), wantOffline, url, old)
}

// TLS and authentication: a self-signed server is refused unless its CA
// is given (or verification skipped, when asked); a source behind basic
// authentication takes the URL's user information, which no message and
// no lock holds.
func TestSourceHTTPSTrustAndAuth(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	srv := newFileServer(t)
	url := srv.put("/private/crd.yaml", crd)
	withUser := strings.Replace(url, "https://", "https://user:secret@", 1)
	run := func(src string, extra ...string) Result {
		x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
		return x.Run("kubectl-crd", append([]string{"prune", "--crd-file", src, "-f", "examples/maintenance/job.yaml"}, extra...)...)
	}
	if r := run(withUser); r.Code != 3 || !strings.Contains(r.Stderr, url+": get: tls: failed to verify certificate") {
		t.Errorf("untrusted: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := run(withUser, "--source-insecure-skip-tls-verify"); r.Code != 0 {
		t.Errorf("insecure: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := run(url, "--source-certificate-authority", srv.caFile); r.Code != 2 || !strings.Contains(r.Stderr, url+": the server answered 401 Unauthorized") {
		t.Errorf("no credentials: exit %d\n%s", r.Code, r.Stderr)
	}
	lock := filepath.Join(t.TempDir(), "kubectl-crd.lock")
	r := run(withUser, "--source-certificate-authority", srv.caFile, "--lock", lock, "--update-lock")
	data, _ := os.ReadFile(lock)
	if r.Code != 0 || !strings.Contains(string(data), "source: "+url+"\n") {
		t.Errorf("credentials: exit %d\n%s\nlock:\n%s", r.Code, r.Stderr, data)
	}
	for what, s := range map[string]string{"stdout": r.Stdout, "stderr": r.Stderr, "lock": string(data)} {
		if strings.Contains(s, "secret") {
			t.Errorf("the password is in the %s:\n%s", what, s)
		}
	}
}

// The KRM function with crdPaths by URL (https trusting SSL_CERT_FILE):
// the results of the same CRDs as a file; with offline: true and the
// server stopped, the same bytes from the cache.
func TestSourceHTTPSKRM(t *testing.T) {
	bundle, crs := sourceBundle(t, "keda@v2.21.0")
	dir := t.TempDir()
	local := filepath.Join(dir, "keda-crds.yaml")
	if err := os.WriteFile(local, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newFileServer(t)
	url := srv.put("/keda-crds.yaml", bundle)
	config := func(name, crdPath, extra string) string { return standaloneConfig(t, dir, name, crdPath, extra) }
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir(), "SSL_CERT_FILE="+srv.caFile)
	want := x.Run("kubectl-crd", append([]string{"krm", config("local.yaml", local, "")}, crs...)...)
	if want.Stdout == "" && want.Stderr == "" {
		t.Fatalf("local: exit %d, no output", want.Code)
	}
	got := x.Run("kubectl-crd", append([]string{"krm", config("url.yaml", url, "")}, crs...)...)
	sameRun(t, "by URL", got, want, url, local)
	srv.Close()
	offline := x.Run("kubectl-crd", append([]string{"krm", config("offline.yaml", url, "offline: true\n")}, crs...)...)
	sameRun(t, "offline", offline, want, url, local)
}

// standaloneConfig writes a CRDCheck for kubectl-crd krm run standalone
// (no load restriction) to dir/name, of crdPaths and the fields of extra,
// and returns its path.
func standaloneConfig(t *testing.T, dir, name, crdPaths, extra string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	c := "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nloadRestrictor: LoadRestrictionsNone\ncrdPaths: [" + crdPaths + "]\n" + extra
	if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
