package plugin

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// hangingTLSKubeconfig completes the TLS handshake and never answers; it returns a
// kubeconfig for it.
func hangingTLSKubeconfig(t *testing.T) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return, Close does not wait
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: hang
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: hang
  context: {cluster: hang, user: u}
current-context: hang
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// A server that never answers: exit 3 and "timed out" within the
// --request-timeout, not a hang.
func TestRequestTimeout(t *testing.T) {
	kubeconfig := hangingTLSKubeconfig(t)
	for _, args := range [][]string{
		{"explain-structural", "foos.example.com"}, // a GET of the CRD
		{"explain-structural", "foo"},              // a LIST of the CRDs
		{"prune", "-f", exampleJob},                // discovery and the CRDs
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			args = append(args, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "--request-timeout", "500ms")
			var out, errOut bytes.Buffer
			start := time.Now()
			code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
			took := time.Since(start)
			if code != ExitInternal || !strings.Contains(errOut.String(), "timed out") {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 3, timed out", code, errOut.String())
			}
			// One request, or a few in a row (client-go retries none of these on a timeout).
			if took > 5*time.Second {
				t.Errorf("took %v with --request-timeout 500ms", took)
			}
		})
	}
}

// Without --request-timeout, each request times out after
// defaultRequestTimeout; --request-timeout sets it, and 0 means no limit,
// as in kubectl.
func TestDefaultRequestTimeout(t *testing.T) {
	kubeconfig := hangingTLSKubeconfig(t)
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, defaultRequestTimeout},
		{[]string{"--request-timeout", "5s"}, 5 * time.Second},
		{[]string{"--request-timeout", "0"}, 0},
	} {
		flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
		cf := newConfigFlags(genericiooptions.NewTestIOStreamsDiscard(), flags, context.Background)
		if err := flags.Parse(append([]string{"--kubeconfig", kubeconfig}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := cf.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Timeout != tc.want {
			t.Errorf("%v: timeout %v, want %v", tc.args, cfg.Timeout, tc.want)
		}
	}
}
