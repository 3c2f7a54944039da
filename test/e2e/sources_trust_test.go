package e2e

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/mtls"
)

// witness is a server on loopback (https, its TLS config as given, or
// plain http) that records what each request showed the server: its
// path, its Authorization and whether a client certificate came with it.
type witness struct {
	*httptest.Server
	mu   sync.Mutex
	seen []witnessed
}

type witnessed struct {
	path, auth string
	cert       bool
}

func newWitness(t *testing.T, tlsConfig *tls.Config, h http.HandlerFunc) *witness {
	t.Helper()
	w := &witness{}
	w.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.seen = append(w.seen, witnessed{r.URL.Path, r.Header.Get("Authorization"), r.TLS != nil && len(r.TLS.PeerCertificates) > 0})
		w.mu.Unlock()
		h(rw, r)
	}))
	w.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsConfig != nil {
		w.TLS = tlsConfig
		w.StartTLS()
	} else {
		w.Start()
	}
	t.Cleanup(w.Close)
	return w
}

func (w *witness) requests() []witnessed {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]witnessed(nil), w.seen...)
}

// anyClientCert asks for a client certificate and takes any, so that the
// witness sees whether one was shown.
func anyClientCert() *tls.Config { return &tls.Config{ClientAuth: tls.RequestClientCert} }

// noSecret fails if the password is in a run's output or a file.
func noSecret(t *testing.T, what, password string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, password) {
			t.Errorf("%s: the password is printed:\n%s", what, s)
		}
	}
}

// An https source that redirects to plain http on another port of the
// same host: exit 2 naming the source and the redirect, the lock not
// written, nothing asked over plain http and no password printed; with
// --source-plain-http (the server on loopback), followed, and the plain
// http server gets no credentials.
func TestSourceHTTPSDowngradeRefused(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	plain := newWitness(t, nil, func(w http.ResponseWriter, _ *http.Request) { w.Write(crd) })
	src := newWitness(t, &tls.Config{}, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/crd.yaml", http.StatusFound)
	})
	url := src.URL + "/crd.yaml"
	withUser := strings.Replace(url, "https://", "https://user:secret@", 1)
	lock := filepath.Join(t.TempDir(), "kubectl-crd.lock")
	args := []string{"prune", "--crd-file", withUser, "--source-certificate-authority", writeCA(t, src.Server),
		"-f", "examples/maintenance/job.yaml", "--lock", lock, "--update-lock"}
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	r := x.Run("kubectl-crd", args...)
	want := "error: " + url + ": redirected to " + plain.URL + "/crd.yaml: https is never downgraded to plain http (only to a server on loopback, with --source-plain-http)\n"
	if r.Code != 2 || r.Stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2, stderr:\n%s", r.Code, r.Stderr, want)
	}
	if _, err := os.Stat(lock); err == nil {
		data, _ := os.ReadFile(lock)
		t.Errorf("the lock was written:\n%s", data)
	}
	if got := plain.requests(); len(got) != 0 {
		t.Errorf("plain http was asked: %+v", got)
	}
	noSecret(t, "refused", "secret", r.Stdout, r.Stderr)

	r = x.Run("kubectl-crd", append(args, "--source-plain-http")...)
	data, _ := os.ReadFile(lock)
	if r.Code != 0 || !strings.Contains(string(data), "resolved: "+plain.URL+"/crd.yaml\n") {
		t.Errorf("--source-plain-http: exit %d\n%s\nlock:\n%s", r.Code, r.Stderr, data)
	}
	if got := plain.requests(); len(got) != 1 || got[0].auth != "" {
		t.Errorf("--source-plain-http: plain http saw %+v, want one request without credentials", got)
	}
	noSecret(t, "--source-plain-http", "secret", r.Stdout, r.Stderr, string(data))
}

// The URL's credentials and the client certificate go to the source's
// origin alone: a redirect to another port of the same host gets
// neither, nor does a chart repository's archive of another origin; the
// source's origin gets both.
func TestSourceCredentialsStayWithTheirOrigin(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	client := mtls.NewClient(t, "kubectl-crd")
	other := newWitness(t, anyClientCert(), func(w http.ResponseWriter, _ *http.Request) { w.Write(crd) })
	src := newWitness(t, anyClientCert(), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/crd.yaml" {
			http.Redirect(w, r, other.URL+"/crd.yaml", http.StatusFound)
			return
		}
		http.NotFound(w, r)
	})
	ca := writeCA(t, src.Server)
	withUser := strings.Replace(src.URL, "https://", "https://user:secret@", 1) + "/crd.yaml"
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	r := x.Run("kubectl-crd", "prune", "--crd-file", withUser, "--source-certificate-authority", ca,
		"--source-client-certificate", client.CertFile, "--source-client-key", client.KeyFile, "-f", "examples/maintenance/job.yaml")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	basic := "Basic dXNlcjpzZWNyZXQ=" // user:secret
	if got := src.requests(); len(got) != 1 || got[0].auth != basic || !got[0].cert {
		t.Errorf("the source's origin saw %+v, want its credentials and the certificate", got)
	}
	if got := other.requests(); len(got) != 1 || got[0].auth != "" || got[0].cert {
		t.Errorf("another origin saw %+v, want neither credentials nor certificate", got)
	}
	noSecret(t, "a redirect", "secret", r.Stdout, r.Stderr)
}

// A chart repository's index.yaml that names the archive by plain http
// (same host, another port), or gives it no digest, is refused (exit 2,
// saying why), the archive never asked for; an archive of another https
// origin is fetched without the repository's credentials, checked
// against the index's digest.
func TestSourceHelmArchiveTrust(t *testing.T) {
	local := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", local)
	archive := crdsChart("1.0.0", files).tgz(t, "keda")
	sum := sha256.Sum256(archive)
	digest := hex.EncodeToString(sum[:])
	serveArchive := func(w http.ResponseWriter, _ *http.Request) { w.Write(archive) }
	plain := newWitness(t, nil, serveArchive)
	other := newWitness(t, &tls.Config{}, serveArchive)
	var mu sync.Mutex
	var index string
	repo := newWitness(t, &tls.Config{}, func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "user" || pass != "hunter2-pw" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(w, index)
	})
	setIndex := func(url, digest string) {
		mu.Lock()
		defer mu.Unlock()
		index = "apiVersion: v1\nentries:\n  keda:\n  - name: keda\n    version: 1.0.0\n    urls:\n    - " + url + "\n"
		if digest != "" {
			index += "    digest: " + digest + "\n"
		}
	}
	// (the corpus objects hold "secret" of their own)
	src := strings.Replace(repo.URL, "https://", "https://user:hunter2-pw@", 1) + "#keda@1.0.0"
	name := repo.URL + "#keda@1.0.0"
	ca := "--source-certificate-authority=" + writeCA(t, repo.Server)
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir(), "HELM_REPOSITORY_CONFIG="+filepath.Join(t.TempDir(), "none.yaml"))
	for _, c := range []struct {
		what, url, digest, want string
	}{
		{"plain http", plain.URL + "/keda-1.0.0.tgz", digest, "error: " + name + ": the repository's index.yaml names the archive of chart keda 1.0.0 by " +
			plain.URL + "/keda-1.0.0.tgz: https is never downgraded to plain http (only to a server on loopback, with --source-plain-http)\n"},
		{"no digest", other.URL + "/keda-1.0.0.tgz", "", "error: " + name + ": the repository's index.yaml gives no digest of chart keda 1.0.0: its archive could not be verified\n"},
	} {
		setIndex(c.url, c.digest)
		r := x.Run("kubectl-crd", pruneArgs(src, crs, ca)...)
		if r.Code != 2 || r.Stderr != c.want {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2, stderr:\n%s", c.what, r.Code, r.Stderr, c.want)
		}
		noSecret(t, c.what, "hunter2-pw", r.Stdout, r.Stderr)
	}
	if got := append(plain.requests(), other.requests()...); len(got) != 0 {
		t.Errorf("the archive was asked for: %+v", got)
	}
	setIndex(other.URL+"/keda-1.0.0.tgz", digest)
	r := x.Run("kubectl-crd", pruneArgs(src, crs, ca)...)
	if r.Code > 1 {
		t.Fatalf("another origin: exit %d\n%s", r.Code, r.Stderr)
	}
	noSecret(t, "another origin", "hunter2-pw", r.Stdout, r.Stderr)
	if got := other.requests(); len(got) != 1 || got[0].auth != "" {
		t.Errorf("another origin saw %+v, want one request without credentials", got)
	}
}
