package plugin

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/source"
)

// An empty --lock is refused, as an empty --report is: the run went on without pins,
// exit 0, as if no lock had been given.
func TestLockEmptyRefused(t *testing.T) {
	for _, args := range [][]string{
		append(append([]string{}, pruneJob...), "--lock", ""),
		append(append([]string{}, pruneJob...), "--lock="),
		append(append([]string{}, pruneJob...), "--lock", "", "--update-lock"),
		{"check-update", "--offline", "-f", exampleCRD, "--old", exampleCRD, "--lock", ""},
	} {
		r := run(t, "", args...)
		if want := "error: --lock '': give a file name\n"; r.code != ExitInput || r.stderr != want || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %s", args, r.code, r.stdout, r.stderr, want)
		}
	}
}

// --lock /dev/zero and --values /dev/zero are read bounded, as every input:
// exit 2 naming the file, after 64 MiB; they were read until memory ran
// out.
func TestNamedFilesBounded(t *testing.T) {
	chart := t.TempDir()
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: app\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.CompanionEnv, "/bin/false") // never run: the values are read first
	t.Setenv("KUBECTL_CRD_CACHE_DIR", t.TempDir())
	for _, args := range [][]string{
		{"prune", "--offline", "-f", exampleJob, "--crd-file", "https://127.0.0.1:1/crds.yaml", "--lock", "/dev/zero"},
		{"prune", "--offline", "-f", exampleJob, "--crd-file", chart, "--values", "/dev/zero"},
	} {
		r := run(t, "", args...)
		if want := "error: /dev/zero: larger than 64 MiB, the most kubectl crd reads of a file\n"; r.code != ExitInput || r.stderr != want {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2 and %s", args, r.code, r.stderr, want)
		}
	}
}

// A run without a cluster that fetched its remote sources into the cache
// (and wrote its lock) says, in the cluster's error, that --offline now
// reads them from there (exit 3 still); and so it does, the server
// stopped. With no cache kept (KUBECTL_CRD_CACHE_DIR=off), it does not.
func TestNoClusterHintsOffline(t *testing.T) {
	crd, err := os.ReadFile(exampleCRD)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(crd) }))
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECTL_CRD_CACHE_DIR", filepath.Join(dir, "cache"))
	lock := filepath.Join(dir, "kubectl-crd.lock")
	url := srv.URL + "/crd.yaml"
	args := []string{"prune", "--crd-file", url, "--source-certificate-authority", ca, "-f", exampleJob, "-f", "testdata/bad/missing-crd.yaml", "--lock", lock}
	const noCluster = "error: no cluster configured: the kubeconfig has no cluster (set KUBECONFIG or --kubeconfig); to work without a cluster, pass --offline and give the CRDs with --crd-file"
	const hint = "; the remote sources of --crd-file and --old are in the cache now, and --offline reads them from there"

	r := run(t, "", append([]string{"--kubeconfig", empty}, append(args, "--update-lock")...)...)
	if want := noCluster + hint + "\n"; r.code != ExitInternal || r.stdout != "" || r.stderr != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 3 and:\n%s", r.code, r.stderr, want)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the lock: %v", err)
	}
	srv.Close()
	// Read by the lock from the cache, the cluster unreachable.
	r = run(t, "", append([]string{"--kubeconfig", writeKubeconfig(t, "https://127.0.0.1:1")}, args...)...)
	if want := "connect: connection refused; to work without a cluster, pass --offline and give the CRDs with --crd-file" + hint + "\n"; r.code != ExitInternal || !strings.HasSuffix(r.stderr, want) {
		t.Fatalf("unreachable: exit %d, stderr:\n%s\nwant exit 3 and:\n...%s", r.code, r.stderr, want)
	}
	r = run(t, "", append(args, "--offline")...)
	if r.code != ExitFindings || !strings.Contains(r.stderr, "nowhere.example.com") {
		t.Fatalf("--offline, as the hint says: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	t.Setenv("KUBECTL_CRD_CACHE_DIR", "off")
	srv = httptest.NewTLSServer(srv.Config.Handler)
	defer srv.Close()
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	args[2] = srv.URL + "/crd.yaml"
	r = run(t, "", append([]string{"--kubeconfig", empty}, append(args[:len(args)-2], "--lock", filepath.Join(dir, "other.lock"), "--update-lock")...)...)
	if want := noCluster + "\n"; r.code != ExitInternal || r.stderr != want {
		t.Fatalf("no cache kept: exit %d, stderr:\n%s\nwant exit 3 and:\n%s", r.code, r.stderr, want)
	}
}

// --request-timeout bounds the rendering of a chart (and each fetch) when
// it is given: a crd-helm that never ends is stopped after it, exit 2.
// (Without it, the bound is source.DefaultTimeout, 2 minutes.)
func TestSourcesRequestTimeout(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.CompanionEnv, exe)
	t.Setenv(fakeHelmEnv, "1")
	chart := filepath.Join(t.TempDir(), "chart")
	os.MkdirAll(chart, 0o755)
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := run(t, "", "prune", "--offline", "--request-timeout", "1s", "--crd-file", chart, "-f", exampleJob)
	if r.code != 2 || !strings.Contains(r.stderr, chart+": rendering the chart took longer than 1s, the bound: it was stopped") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("stopped after %v", d)
	}
}
