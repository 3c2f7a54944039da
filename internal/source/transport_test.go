package source

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/mtls"
)

// recorder is a server on loopback (https, asking for any client
// certificate, or plain http) that records what each request showed:
// its path, its Authorization and whether a client certificate came.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	path, auth string
	cert       bool
}

func newRecorder(t *testing.T, https bool, h http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, seenRequest{path: req.URL.Path, auth: req.Header.Get("Authorization"),
			cert: req.TLS != nil && len(req.TLS.PeerCertificates) > 0})
		r.mu.Unlock()
		h(w, req)
	}))
	r.Config.ErrorLog = log.New(io.Discard, "", 0)
	if https {
		r.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
		r.StartTLS()
	} else {
		r.Start()
	}
	t.Cleanup(r.Close)
	return r
}

// requests are the requests the server saw.
func (r *recorder) requests() []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seenRequest(nil), r.seen...)
}

// reset forgets the requests seen.
func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = nil
}

func serveCRD(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, testCRD) }

// withUser is an https URL with user:secret@ as its user information.
func withUser(u string) string { return strings.Replace(u, "https://", "https://user:secret@", 1) }

// fetchOnce fetches a source with a Fetcher of opts, and returns the
// error.
func fetchOnce(t *testing.T, opts Options, src string) error {
	t.Helper()
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.Files(context.Background(), src)
	return err
}

// An https source redirected to plain http is refused, naming where it
// was sent, and nothing goes over plain http; with --source-plain-http,
// to a server on loopback, it is followed, without the credentials.
func TestRedirectNeverDowngrades(t *testing.T) {
	plain := newRecorder(t, false, serveCRD)
	src := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/crd.yaml", http.StatusFound)
	})
	err := fetchOnce(t, Options{Insecure: true}, withUser(src.URL)+"/crd.yaml")
	inputError(t, "to http", err, src.URL+"/crd.yaml: redirected to "+plain.URL+"/crd.yaml: https is never downgraded to plain http")
	if got := plain.requests(); len(got) != 0 {
		t.Errorf("the plain http server was asked: %+v", got)
	}
	if err := fetchOnce(t, Options{Insecure: true, PlainHTTP: true}, withUser(src.URL)+"/crd.yaml"); err != nil {
		t.Fatalf("--source-plain-http, loopback: %v", err)
	}
	if got := plain.requests(); len(got) != 1 || got[0].auth != "" {
		t.Errorf("the plain http server saw %+v, want one request without credentials", got)
	}
}

// A redirect to another scheme than https, or to a URL without a host,
// is the source's fault (exit 2), as are a source without a host and a
// redirect loop.
func TestRedirectElsewhereIsInput(t *testing.T) {
	src := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", strings.TrimPrefix(r.URL.Path, "/to/"))
		w.WriteHeader(http.StatusFound)
	})
	for target, want := range map[string]string{
		"file:///etc/passwd": "redirected to file:///etc/passwd: only https:// is followed",
		"https:///x":         "redirected to https:///x: a URL without a host",
		"ftp://h.example/x":  "redirected to ftp://h.example/x: only https:// is followed",
	} {
		inputError(t, target, fetchOnce(t, Options{Insecure: true}, src.URL+"/to/"+target), want)
	}
	inputError(t, "no host", fetchOnce(t, Options{Insecure: true}, "https:///crd.yaml"), "https:///crd.yaml: a URL without a host")
	loop := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.Path, http.StatusFound) })
	inputError(t, "a loop", fetchOnce(t, Options{Insecure: true}, loop.URL+"/crd.yaml"), "redirected to "+loop.URL+"/crd.yaml: a redirect after 10: not followed")
}

// The URL's credentials and the client certificate go to the source's
// origin alone: along a redirect of the same origin, not to another port
// of the same host (which Go's client would give the Authorization).
func TestCredentialsStayWithTheirOrigin(t *testing.T) {
	client := mtls.NewClient(t, "kubectl-crd")
	other := newRecorder(t, true, serveCRD)
	src := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/crd.yaml", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other.URL+"/crd.yaml", http.StatusFound)
		default:
			serveCRD(w, r)
		}
	})
	opts := Options{Insecure: true, ClientCertFile: client.CertFile, ClientKeyFile: client.KeyFile}
	for _, path := range []string{"/same", "/away"} {
		if err := fetchOnce(t, opts, withUser(src.URL)+path); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	basic := "Basic dXNlcjpzZWNyZXQ=" // user:secret
	for _, r := range src.requests() {
		if r.auth != basic || !r.cert {
			t.Errorf("the source's origin, %s: %+v, want its credentials and certificate", r.path, r)
		}
	}
	if got := src.requests(); len(got) != 3 {
		t.Errorf("the source's origin saw %+v, want /same, /crd.yaml, /away", got)
	}
	if got := other.requests(); len(got) != 1 || got[0].auth != "" || got[0].cert {
		t.Errorf("another origin saw %+v, want one request without credentials nor certificate", got)
	}
}

// An OCI registry over TLS behind basic authentication whose blobs
// redirect to storage elsewhere (as registries do): the storage gets
// neither the credentials of the reference nor the client certificate.
func TestRegistryBlobRedirectWithoutCredentials(t *testing.T) {
	client := mtls.NewClient(t, "kubectl-crd")
	layer := static.NewLayer([]byte(testCRD), "application/yaml")
	layerDigest, err := layer.Digest()
	if err != nil {
		t.Fatal(err)
	}
	storage := newRecorder(t, true, serveCRD)
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "user" || pass != "secret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+layerDigest.String()) {
			http.Redirect(w, r, storage.URL+"/blob", http.StatusTemporaryRedirect)
			return
		}
		reg.ServeHTTP(w, r)
	})
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.oci.empty.v1+json")
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: "application/yaml",
		Annotations: map[string]string{ociTitle: "crd.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "https://")
	ref, err := name.ParseReference(host + "/crds:v1")
	if err != nil {
		t.Fatal(err)
	}
	insecure := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	if err := remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: "user", Password: "secret"}), remote.WithTransport(insecure)); err != nil {
		t.Fatal(err)
	}
	srv.reset()
	opts := Options{Insecure: true, ClientCertFile: client.CertFile, ClientKeyFile: client.KeyFile}
	if err := fetchOnce(t, opts, "oci://user:secret@"+host+"/crds:v1"); err != nil {
		t.Fatal(err)
	}
	if got := storage.requests(); len(got) != 1 || got[0].auth != "" || got[0].cert {
		t.Errorf("the storage saw %+v, want one request without credentials nor certificate", got)
	}
	for _, r := range srv.requests() {
		if r.auth != "" && !r.cert {
			t.Errorf("the registry, %s: credentials without the client certificate", r.path)
		}
	}
}
