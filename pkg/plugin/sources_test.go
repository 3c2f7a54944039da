package plugin

import (
	"os"
	"path/filepath"
	"testing"

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
