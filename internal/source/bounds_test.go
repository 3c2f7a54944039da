package source

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// Every file a run is given by name is read bounded (fileread): a lock, a
// certificate authority, a client certificate and its key, Helm's
// repository configuration and the charts' values files. One larger than
// 64 MiB (or a device that never ends, /dev/zero) is an input error that
// names it, after at most the bound is read; each was read whole.
func TestNamedFilesBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(fileread.MaxBytes + 1); err != nil { // sparse: no disk
		t.Fatal(err)
	}
	f.Close()
	small := filepath.Join(dir, "small.pem")
	writeFile(t, small, []byte("-----BEGIN CERTIFICATE-----\n"))
	chart := filepath.Join(dir, "chart")
	if err := os.Mkdir(chart, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: chart\nversion: 1.0.0\n"))
	t.Setenv(CompanionEnv, "/bin/false") // never reached
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(dir, "none.yaml"))

	src := "https://127.0.0.1:1/crds.yaml" // never reached
	for _, c := range []struct {
		what string
		opts Options
		lock string
		arg  string
		env  string // HELM_REPOSITORY_CONFIG
	}{
		{what: "the lock", lock: big, arg: src},
		{what: "the certificate authority", opts: Options{CAFile: big}, arg: src},
		{what: "the client certificate", opts: Options{ClientCertFile: big}, arg: src},
		{what: "the client key", opts: Options{ClientCertFile: small, ClientKeyFile: big}, arg: src},
		{what: "Helm's repository configuration", arg: "https://127.0.0.1:1/charts#app", env: big},
		{what: "a values file", opts: Options{ChartValues: []string{big}}, arg: chart},
	} {
		t.Run(c.what, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("HELM_REPOSITORY_CONFIG", c.env)
			}
			c.opts.Dir = filepath.Join(dir, "cache")
			_, err := run(t, c.opts, c.lock, c.arg)
			wantInputError(t, c.what, err, big+": larger than 64 MiB, the most kubectl crd reads of a file")
		})
	}
}
