package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
)

// ociRegistry is go-containerregistry's registry on loopback (plain http,
// which the plugin takes on loopback only), behind basic authentication
// as user:secret when private.
type ociRegistry struct {
	*httptest.Server
	host string
	auth remote.Option
}

func newOCIRegistry(t *testing.T, private bool) *ociRegistry {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r := &ociRegistry{auth: remote.WithAuth(authn.Anonymous)}
	if private {
		h = basicAuth(h)
		r.auth = remote.WithAuth(&authn.Basic{Username: "user", Password: "secret"})
	}
	r.Server = httptest.NewServer(h)
	t.Cleanup(r.Close)
	r.host = strings.TrimPrefix(r.URL, "http://")
	return r
}

func basicAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "user" || pass != "secret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ociFile is a file of an artifact: its title and content.
type ociFile struct {
	title string
	data  []byte
}

// push pushes files as oras push does (an OCI manifest, a layer per file
// titled by its name, of the media types oras and users give YAML), and
// returns the oci:// reference of repoTag and the manifest's digest.
func (r *ociRegistry) push(t *testing.T, repoTag string, files []ociFile) (string, string) {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.oci.empty.v1+json")
	mediaTypes := []types.MediaType{"application/vnd.oci.image.layer.v1.tar", "application/yaml", "text/yaml"}
	for i, f := range files {
		mt := mediaTypes[i%len(mediaTypes)]
		var err error
		img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(f.data, mt), MediaType: mt,
			Annotations: map[string]string{"org.opencontainers.image.title": f.title}})
		if err != nil {
			t.Fatal(err)
		}
	}
	ref, err := name.ParseReference(r.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, r.auth); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return "oci://" + ref.String(), digest.String()
}

// ociCorpus is the CRDs of a corpus set, a file each, written into dir as
// the artifact holds them, and the files of its custom resources.
func ociCorpus(t *testing.T, set, dir string) (files []ociFile, crs []string) {
	cdir := corpus.Dir(t)
	for _, f := range corpus.Manifest(t, cdir) {
		if f.Set() != set {
			continue
		}
		switch f.Kind {
		case corpus.KindCRD:
			title := fmt.Sprintf("%02d-%s", len(files), filepath.Base(f.LocalPath))
			files = append(files, ociFile{title: title, data: corpus.Read(t, cdir, f)})
			if err := os.WriteFile(filepath.Join(dir, title), files[len(files)-1].data, 0o600); err != nil {
				t.Fatal(err)
			}
		case corpus.KindCR:
			crs = append(crs, filepath.Join(cdir, filepath.FromSlash(f.LocalPath)))
		}
	}
	if len(files) < 2 || len(crs) == 0 {
		t.Fatalf("corpus: too few CRDs or custom resources of %s", set)
	}
	return files, crs
}

// A plain artifact of corpus CRDs by tag and by digest: the verdicts of
// the same files in a directory; the lock pins the manifest's digest; a
// rerun with the registry stopped gives the same bytes from the cache.
func TestSourceOCI(t *testing.T) {
	local := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", local)
	want := NewTest(t).Run("kubectl-crd", pruneArgs(local, crs)...)
	wantOffline := NewTest(t).Run("kubectl-crd", pruneArgs(local, crs, "--offline")...)
	if want.Code > 1 || want.Stdout == "" || wantOffline.Stdout == "" {
		t.Fatalf("local: exit %d\n%s", want.Code, want.Stderr)
	}
	reg := newOCIRegistry(t, false)
	ref, digest := reg.push(t, "crds/keda:v2.21.0", files)
	lock := filepath.Join(t.TempDir(), "kubectl-crd.lock")
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	got := x.Run("kubectl-crd", pruneArgs(ref, crs, "--lock", lock, "--update-lock")...)
	sameRun(t, "by tag", got, want, ref, local)
	data, err := os.ReadFile(lock)
	pin := "- digest: " + digest + "\n  resolved: oci://" + reg.host + "/crds/keda@" + digest + "\n  source: " + ref + "\n"
	if err != nil || !strings.Contains(string(data), pin) {
		t.Fatalf("lock (%v):\n%s\nwant:\n%s", err, data, pin)
	}
	byDigest := "oci://" + reg.host + "/crds/keda@" + digest
	sameRun(t, "by digest", x.Run("kubectl-crd", pruneArgs(byDigest, crs)...), want, byDigest, local)

	reg.Close() // the network cut: the cache answers
	sameRun(t, "offline", x.Run("kubectl-crd", pruneArgs(ref, crs, "--offline")...), wantOffline, ref, local)
	sameRun(t, "by the lock", x.Run("kubectl-crd", pruneArgs(ref, crs, "--lock", lock)...), got, ref, ref)
	cold := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	if r := cold.Run("kubectl-crd", pruneArgs(ref, crs, "--lock", lock, "--offline")...); r.Code != 2 || !strings.Contains(r.Stderr, ref+": "+digest+" is not in the cache") {
		t.Fatalf("offline, cold: exit %d\n%s", r.Code, r.Stderr)
	}
}

// The tag moves to another manifest under the lock: exit 2, naming the
// source; --update-lock accepts the change.
func TestSourceOCIChangedDigest(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	reg := newOCIRegistry(t, false)
	ref, digest := reg.push(t, "crds/maintenance:v1", []ociFile{{"crd.yaml", crd}})
	lock := filepath.Join(t.TempDir(), "kubectl-crd.lock")
	online := []string{"prune", "--crd-file", ref, "-f", "examples/maintenance/job.yaml", "--lock", lock}
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	if r := x.Run("kubectl-crd", append(online, "--update-lock")...); r.Code != 0 {
		t.Fatalf("--update-lock: exit %d\n%s", r.Code, r.Stderr)
	}
	_, moved := reg.push(t, "crds/maintenance:v1", []ociFile{{"crd.yaml", append(crd, "# changed\n"...)}})
	x = NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	r := x.Run("kubectl-crd", online...)
	if want := ref + ": digest " + moved + ", not the " + digest; r.Code != 2 || !strings.Contains(r.Stderr, want) {
		t.Fatalf("changed: exit %d\n%s\nwant %q", r.Code, r.Stderr, want)
	}
	if r := x.Run("kubectl-crd", append(online, "--update-lock")...); r.Code != 0 {
		t.Fatalf("--update-lock after the change: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := x.Run("kubectl-crd", online...); r.Code != 0 {
		t.Fatalf("the updated lock: exit %d\n%s", r.Code, r.Stderr)
	}
}

// A registry behind basic authentication: the credentials of a Docker
// config file (DOCKER_CONFIG); without them, exit 2 saying so.
func TestSourceOCIAuth(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	reg := newOCIRegistry(t, true)
	ref, _ := reg.push(t, "private/maintenance:v1", []ociFile{{"crd.yaml", crd}})
	run := func(dockerConfig string) Result {
		x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir(), "DOCKER_CONFIG="+dockerConfig)
		return x.Run("kubectl-crd", "prune", "--crd-file", ref, "-f", "examples/maintenance/job.yaml")
	}
	if r := run(t.TempDir()); r.Code != 2 || !strings.Contains(r.Stderr, ref+": the registry wants credentials, and the Docker config has none for "+reg.host) {
		t.Errorf("no credentials: exit %d\n%s", r.Code, r.Stderr)
	}
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("user:secret"))
	config := `{"auths": {"` + reg.host + `": {"auth": "` + auth + `"}}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(dir); r.Code != 0 || strings.Contains(r.Stdout+r.Stderr, "secret") {
		t.Errorf("credentials: exit %d\n%s", r.Code, r.Stderr)
	}
}
