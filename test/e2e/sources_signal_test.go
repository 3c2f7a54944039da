//go:build linux

package e2e

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SIGINT while a remote source is fetched from a server that stalls ends
// the run at once, as a signal ends it (killed by SIGINT, what a shell
// reports as 130), with nothing left in $TMPDIR: the command's context,
// cancelled by the signal, reaches the fetch (issue 39). Were the fetch on
// a context of its own, the run would wait for its timeout (two minutes)
// once the signal is handled. With a cache and without one (a directory
// of the run's own, in $TMPDIR); the plugin and the function alike.
func TestSourceHTTPSInterrupted(t *testing.T) {
	requests := make(chan struct{}, 8)
	stop := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A part of the document, then nothing until the client goes.
		w.Write([]byte("apiVersion: apiextensions.k8s.io/v1\n"))
		w.(http.Flusher).Flush()
		requests <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // first: the handlers end, then Close
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/crds.yaml"
	widget := filepath.Join(repoRoot(), "examples", "krm", "widget.yaml")
	config := standaloneConfig(t, t.TempDir(), "check.yaml", url, "")
	for _, cache := range []string{t.TempDir(), "off"} {
		for _, args := range [][]string{{"prune", "--crd-file", url, "-f", widget}, {"krm", config, widget}} {
			tmp := t.TempDir()
			x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+cache, "TMPDIR="+tmp, "SSL_CERT_FILE="+ca)
			cmd := exec.Command(filepath.Join(binDir, "kubectl-crd"), args...)
			cmd.Env = x.env
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-requests:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("%s, cache %s: no request to the server", args[0], cache)
			}
			time.Sleep(200 * time.Millisecond) // reading the body
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			var err error
			select {
			case err = <-ended:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-ended
				t.Errorf("%s, cache %s: still running 20 s after SIGINT: the fetch was not cancelled", args[0], cache)
				continue
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
				t.Errorf("%s, cache %s: ended with %v, want killed by SIGINT", args[0], cache, err)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
				t.Errorf("%s, cache %s: left in $TMPDIR: %v", args[0], cache, entries)
			}
		}
	}
}
