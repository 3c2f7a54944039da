package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/mtls"
)

// newMTLSFileServer is a fileServer that requires a client certificate
// signed by client's CA.
func newMTLSFileServer(t *testing.T, client mtls.Client) *fileServer {
	t.Helper()
	s := &fileServer{files: map[string][]byte{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
	s.TLS = client.ServerConfig()
	s.StartTLS()
	t.Cleanup(s.Close)
	s.caFile = writeCA(t, s.Server)
	return s
}

// newMTLSRegistry is go-containerregistry's registry over TLS on
// loopback, requiring a client certificate signed by client's CA; the
// test pushes to it with client's certificate. It returns the file of the
// registry's CA.
func newMTLSRegistry(t *testing.T, client mtls.Client) (*ociRegistry, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = client.ServerConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{client.Cert}}}
	r := &ociRegistry{Server: srv, host: strings.TrimPrefix(srv.URL, "https://"), auth: remote.WithTransport(transport)}
	return r, writeCA(t, srv)
}

// writeCA writes the certificate of a test server (its own CA) to a PEM
// file.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile
}

// An https server and an OCI registry that require a client certificate:
// with --source-client-certificate and --source-client-key, the output of
// the same CRDs as local files; without, exit 2 saying the server asks for
// one; a certificate and key that do not make a pair, exit 2 naming the
// files, never quoting them.
func TestSourceClientCertificate(t *testing.T) {
	client := mtls.NewClient(t, "ci")
	bundle, crs := sourceBundle(t, "keda@v2.21.0")
	dir := t.TempDir()
	local := filepath.Join(dir, "keda-crds.yaml")
	if err := os.WriteFile(local, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	want := NewTest(t).Run("kubectl-crd", pruneArgs(local, crs)...)
	if want.Code > 1 || want.Stdout == "" {
		t.Fatalf("local: exit %d\n%s", want.Code, want.Stderr)
	}
	srv := newMTLSFileServer(t, client)
	url := srv.put("/keda-crds.yaml", bundle)
	run := func(src string, extra ...string) Result {
		x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
		return x.Run("kubectl-crd", pruneArgs(src, crs, extra...)...)
	}
	certFlags := []string{"--source-client-certificate", client.CertFile, "--source-client-key", client.KeyFile}
	sameRun(t, "https with a client certificate", run(url, append(certFlags, "--source-certificate-authority", srv.caFile)...), want, url, local)
	if r := run(url, "--source-certificate-authority", srv.caFile); r.Code != 2 || !strings.Contains(r.Stderr, url+": the server asks for a client certificate, and none was given") {
		t.Errorf("https without a client certificate: exit %d\n%s", r.Code, r.Stderr)
	}

	key, err := os.ReadFile(client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	r := run(url, "--source-certificate-authority", srv.caFile, "--source-client-certificate", client.KeyFile, "--source-client-key", client.CertFile)
	if r.Code != 2 || !strings.Contains(r.Stderr, "the client certificate "+client.KeyFile+" and key "+client.CertFile+": ") ||
		strings.Contains(r.Stderr, strings.Split(string(key), "\n")[1]) {
		t.Errorf("switched files: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := run(url, "--source-client-key", client.KeyFile); r.Code != 2 || !strings.Contains(r.Stderr, "--source-client-key is the key of --source-client-certificate") {
		t.Errorf("a key without its certificate: exit %d\n%s", r.Code, r.Stderr)
	}

	localDir := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", localDir)
	want = NewTest(t).Run("kubectl-crd", pruneArgs(localDir, crs)...)
	if want.Code > 1 || want.Stdout == "" {
		t.Fatalf("local: exit %d\n%s", want.Code, want.Stderr)
	}
	reg, regCA := newMTLSRegistry(t, client)
	ref, _ := reg.push(t, "crds/keda:v2.21.0", files)
	sameRun(t, "OCI with a client certificate", run(ref, append(certFlags, "--source-certificate-authority", regCA)...), want, ref, localDir)
	if r := run(ref, "--source-certificate-authority", regCA); r.Code != 2 || !strings.Contains(r.Stderr, ref+": the server asks for a client certificate, and none was given") {
		t.Errorf("OCI without a client certificate: exit %d\n%s", r.Code, r.Stderr)
	}
}
