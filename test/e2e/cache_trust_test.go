package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// poisonIndexes changes every index of the maintenance CRD in the cache of
// CRD indexes at dir as one who may write the cache would: its schema then
// knows spec.privileged, which the server drops (and the CRD decoded beside
// it, N.pb, is gone: the document is read). It returns how many it
// changed.
func poisonIndexes(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || strings.Contains(p, string(filepath.Separator)+"sources"+string(filepath.Separator)) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if s := string(data); strings.Contains(s, "maintenancenightlyjobs") && strings.Contains(s, `"machines":{`) {
			n++
			if err := os.Remove(strings.TrimSuffix(p, ".json") + ".pb"); err != nil && !os.IsNotExist(err) {
				return err
			}
			return os.WriteFile(p, []byte(strings.Replace(s, `"machines":{`, `"privileged":{"type":"boolean"},"machines":{`, 1)), 0o600)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A cache directory that others may write (KUBECTL_CRD_CACHE_DIR, mode
// 0777): its index of a --crd-file, poisoned to keep a field the server
// drops, is not used, and the run warns; a source pinned by a lock is read
// from it as its digest verifies it (read only), and the run warns; the
// KRM function warns the same lines.
func TestCacheNotTrusted(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + cache)
	args := []string{"prune", "--offline", "-f", "examples/maintenance/job.yaml", "--crd-file"}
	want := x.Run("kubectl-crd", append(args, exampleCRD)...)
	if want.Code != 0 || !strings.Contains(want.Stderr, "privileged") {
		t.Fatalf("clean: exit %d\n%s", want.Code, want.Stderr)
	}
	if n := poisonIndexes(t, cache); n == 0 {
		t.Fatal("no index of the CRD in the cache")
	}
	// The premise: a cache of the user's own is trusted, poisoned or not.
	if r := x.Run("kubectl-crd", append(args, exampleCRD)...); r.Stdout == want.Stdout {
		t.Fatalf("the poisoned index is not read from a cache of the user's own:\n%s", r.Stderr)
	}

	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	indexWarning := "Warning: the cache of CRD indexes is not used: " + cache + ": writable by its group or others (drwxrwxrwx): chmod go-w it\n"
	r := x.Run("kubectl-crd", append(args, exampleCRD)...)
	if r.Code != want.Code || r.Stdout != want.Stdout || r.Stderr != indexWarning+want.Stderr {
		t.Fatalf("a cache others may write: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s%s", r.Code, r.Stdout, r.Stderr, indexWarning, want.Stderr)
	}

	// A source pinned while the cache was trusted, read from it read only.
	if err := os.Chmod(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	srv := newFileServer(t)
	url := srv.put("/crd.yaml", crd)
	lock := filepath.Join(dir, "kubectl-crd.lock")
	if r := x.Run("kubectl-crd", "prune", "--crd-file", url, "--source-certificate-authority", srv.caFile, "-f", "examples/maintenance/job.yaml",
		"--lock", lock, "--update-lock"); r.Code != 0 {
		t.Fatalf("--update-lock: exit %d\n%s", r.Code, r.Stderr)
	}
	srv.Close()
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	sourceWarning := "Warning: the cache of remote sources is not trusted: read only, a file used as its digest verifies it: " + cache + ": writable by its group or others (drwxrwxrwx): chmod go-w it\n"
	r = x.Run("kubectl-crd", append(args, url, "--lock", lock)...)
	if r.Code != want.Code || r.Stdout != want.Stdout || !strings.HasPrefix(r.Stderr, indexWarning+sourceWarning) {
		t.Fatalf("a pinned source, the cache read only: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	config := standaloneConfig(t, dir, "check.yaml", url, "lock: "+lock+"\noffline: true\n")
	r = x.Run("kubectl-crd", "krm", config, "examples/maintenance/job.yaml")
	if r.Code != 0 || !strings.HasPrefix(r.Stderr, indexWarning+sourceWarning) {
		t.Fatalf("the KRM function: exit %d\nstderr:\n%s", r.Code, r.Stderr)
	}
}
