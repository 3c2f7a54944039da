package source

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/mtls"
)

// A server that requires a client certificate: the file is fetched with
// the certificate and its key (in two files or in one); without them, an
// input error that says the server asks for one; with another CA's, one
// that says it was refused.
func TestClientCertificate(t *testing.T) {
	client := mtls.NewClient(t, "kubectl-crd")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("kind: CustomResourceDefinition\n"))
	}))
	srv.TLS = client.ServerConfig()
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	writeFile(t, caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	both := filepath.Join(dir, "both.pem")
	writeFile(t, both, append(readFile(t, client.CertFile), readFile(t, client.KeyFile)...))
	other := mtls.NewClient(t, "someone else")

	url := srv.URL + "/crds.yaml"
	fetch := func(certFile, keyFile string) error {
		f, err := New(Options{CAFile: caFile, ClientCertFile: certFile, ClientKeyFile: keyFile})
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Files(context.Background(), url)
		return err
	}
	for _, c := range []struct {
		what, cert, key string
		want            string // "" for success
		input           bool
	}{
		{"two files", client.CertFile, client.KeyFile, "", false},
		{"one file", both, "", "", false},
		{"none", "", "", "the server asks for a client certificate, and none was given", true},
		{"another CA's", other.CertFile, other.KeyFile, "the server refused the client certificate", true},
	} {
		err := fetch(c.cert, c.key)
		var se *Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.what, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &se) || se.Input != c.input):
			t.Errorf("%s: %v, want %q (input %v)", c.what, err, c.want, c.input)
		}
	}
}

// A certificate or key that cannot be used is named, and its content
// never quoted.
func TestClientCertificateErrors(t *testing.T) {
	client := mtls.NewClient(t, "kubectl-crd")
	key := string(readFile(t, client.KeyFile))
	missing := filepath.Join(t.TempDir(), "missing.crt")
	for _, c := range []struct{ cert, key, want string }{
		{missing, client.KeyFile, missing},
		{client.CertFile, missing, missing},
		{client.KeyFile, client.CertFile, client.KeyFile + " and key " + client.CertFile},
		{client.CertFile, client.CertFile, "found a certificate rather than a key"},
	} {
		_, err := New(Options{ClientCertFile: c.cert, ClientKeyFile: c.key})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, %s: %v, want %q", c.cert, c.key, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), key[40:80]) || strings.Contains(err.Error(), "BEGIN")) {
			t.Errorf("%s, %s: the error quotes a file: %v", c.cert, c.key, err)
		}
	}
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
