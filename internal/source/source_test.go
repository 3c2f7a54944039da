package source

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"
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

// Plain http reaches a registry on loopback only, unless allowed.
func TestPlainHTTPGuard(t *testing.T) {
	next := roundTripFunc(func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: 200}, nil })
	for _, c := range []struct {
		url   string
		allow bool
		ok    bool
	}{
		{"http://127.0.0.1:5000/v2/", false, true}, {"http://localhost:5000/v2/", false, true},
		{"http://[::1]:5000/v2/", false, true}, {"https://registry.example/v2/", false, true},
		{"http://192.168.1.10:5000/v2/", false, false}, {"http://registry.example/v2/", false, false},
		{"http://registry.example/v2/", true, true},
	} {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		_, err := plainHTTPGuard{next: next, allow: c.allow}.RoundTrip(req)
		if (err == nil) != c.ok {
			t.Errorf("%s (allow %v): %v", c.url, c.allow, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// What is not an artifact of files is refused, saying what it is.
func TestArtifactManifest(t *testing.T) {
	layer := `{"mediaType":"%s","digest":"sha256:` + string(make64('a')) + `","size":3}`
	manifest := func(config, layerType string) []byte {
		return []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":` +
			fmt.Sprintf(layer, config) + `,"layers":[` + fmt.Sprintf(layer, layerType) + `]}`)
	}
	for _, c := range []struct {
		mt   types.MediaType
		data []byte
		want string
	}{
		{types.OCIManifestSchema1, manifest("application/vnd.oci.empty.v1+json", "text/yaml"), ""},
		{types.OCIManifestSchema1, manifest("application/vnd.oci.empty.v1+json", "application/vnd.oci.image.layer.v1.tar"), ""},
		{types.OCIImageIndex, []byte(`{}`), "an image index"},
		{types.OCIManifestSchema1, manifest("application/vnd.cncf.helm.config.v1+json", "text/yaml"), "a Helm chart"},
		{types.OCIManifestSchema1, manifest("application/vnd.oci.empty.v1+json", "application/vnd.oci.image.layer.v1.tar+gzip"), "is an archive"},
	} {
		_, err := artifactManifest(c.mt, c.data)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.mt, c.data, err, c.want)
		}
	}
}
