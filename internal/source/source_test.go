package source

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/crds.yaml":                "https://example.com/crds.yaml",
		"https://user:secret@example.com/a@b.yaml":     "https://example.com/a@b.yaml",
		"https://tok@en:p@ss@example.com:8443/x?y=@z":  "https://example.com:8443/x?y=@z",
		"oci://user:secret@registry.example/repo:v1":   "oci://registry.example/repo:v1",
		"https://user:%zz@example.com/not-a-valid-url": "https://example.com/not-a-valid-url",
		"crds/local.yaml":                              "crds/local.yaml",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsRemote(t *testing.T) {
	for in, want := range map[string]bool{
		"https://x/y": true, "HTTPS://x/y": true, "oci://r/x:1": true, "http://x/y": true,
		"https://": false, "crds/": false, "-": false, "./https:/x": false,
	} {
		if got := IsRemote(in); got != want {
			t.Errorf("IsRemote(%q) = %v", in, got)
		}
	}
}

// A lock written and read back is the same; the same pins give the same
// bytes, whatever their order.
func TestLockRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubectl-crd.lock")
	l, err := ReadLock(path, true)
	if err != nil {
		t.Fatal(err)
	}
	b := Pin{Source: "https://b.example/crds.yaml", Digest: "sha256:" + string(make64('b'))}
	a := Pin{Source: "https://a.example/crds.yaml", Resolved: "https://cdn.example/a", Digest: "sha256:" + string(make64('a'))}
	l.Set(b)
	l.Set(a)
	data, err := l.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLock(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if back.Changed() || *back.Find(a.Source) != a || *back.Find(b.Source) != b {
		t.Fatalf("read back:\n%s", data)
	}
	if _, err := ReadLock(filepath.Join(t.TempDir(), "none.lock"), false); err == nil {
		t.Error("a missing lock read without an error")
	}
}

func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}
