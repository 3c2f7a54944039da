package release

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// standInImage writes an image of stand-in binaries for both linux
// platforms.
func standInImage(t *testing.T, mtime time.Time) ([]byte, map[Platform]string) {
	t.Helper()
	dir := t.TempDir()
	bins := map[Platform]string{}
	data := map[Platform]string{}
	for _, p := range []Platform{{"linux", "arm64"}, {"linux", "amd64"}} {
		bins[p] = filepath.Join(dir, p.Arch, "kubectl-crd")
		data[p] = "binary of " + p.String() + strings.Repeat("x", 1000)
		if err := os.MkdirAll(filepath.Dir(bins[p]), 0o755); err != nil {
			t.Fatal(err)
		}
		// The file's own mode and time must not reach the image.
		if err := os.WriteFile(bins[p], []byte(data[p]), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p.Arch, "crd-helm"), []byte("companion of "+p.String()), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := WriteImage(&buf, ImageOptions{Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", Binaries: bins, MTime: mtime}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), data
}

// TestWriteImage reads the image back and checks what kpt, kustomize and
// a registry see: the platforms, the entrypoint, the user, the labels, and
// a layer of the binary and the users' files only, dated and owned as the
// release's archives are.
func TestWriteImage(t *testing.T) {
	mtime := time.Date(2026, 11, 22, 7, 36, 0, 0, time.UTC)
	b, data := standInImage(t, mtime)
	img, err := ReadImage(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Ref != "v1.2.3" {
		t.Errorf("ref.name %q, want the version", img.Ref)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":         "kubectl-crd",
		"org.opencontainers.image.description":   ImageLabels("", "", mtime)["org.opencontainers.image.description"],
		"org.opencontainers.image.url":           "https://github.com/kubectl-crd/kubectl-crd",
		"org.opencontainers.image.source":        "https://github.com/kubectl-crd/kubectl-crd",
		"org.opencontainers.image.documentation": "https://github.com/kubectl-crd/kubectl-crd/blob/main/docs/ci.md",
		"org.opencontainers.image.licenses":      "Apache-2.0",
		"org.opencontainers.image.version":       "v1.2.3",
		"org.opencontainers.image.revision":      "0123456789abcdef0123456789abcdef01234567",
		"org.opencontainers.image.created":       "2026-11-22T07:36:00Z",
	}
	if diff := cmp.Diff(labels, img.Index.Annotations); diff != "" {
		t.Errorf("the index's annotations (-want +got):\n%s", diff)
	}
	var platforms []ImagePlatform
	for _, pi := range img.Platforms {
		platforms = append(platforms, pi.Platform)
		c := pi.Config
		if c.Config.User != "65532:65532" || !cmp.Equal(c.Config.Entrypoint, []string{"/kubectl-crd", "krm"}) ||
			!cmp.Equal(c.Config.Env, []string{"KUBECTL_CRD_CACHE_DIR=off"}) || c.Created != "2026-11-22T07:36:00Z" {
			t.Errorf("%s: user %q, entrypoint %q, env %q, created %s", pi.Platform.Architecture, c.Config.User, c.Config.Entrypoint, c.Config.Env, c.Created)
		}
		if diff := cmp.Diff(labels, c.Config.Labels); diff != "" {
			t.Errorf("%s: labels (-want +got):\n%s", pi.Platform.Architecture, diff)
		}
		type file struct {
			Name     string
			Type     byte
			Mode     int64
			Uid, Gid int
			Owner    string
			ModTime  time.Time
			Data     string
		}
		var got []file
		for _, f := range pi.Files {
			h := f.Header
			got = append(got, file{h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname + h.Gname, h.ModTime.UTC(), string(f.Data)})
		}
		p := Platform{pi.Platform.OS, pi.Platform.Architecture}
		want := []file{
			{"crd-helm", tar.TypeReg, 0o755, 0, 0, "", mtime, "companion of " + p.String()},
			{"etc/", tar.TypeDir, 0o755, 0, 0, "", mtime, ""},
			{"etc/group", tar.TypeReg, 0o644, 0, 0, "", mtime, imageGroup},
			{"etc/passwd", tar.TypeReg, 0o644, 0, 0, "", mtime, imagePasswd},
			{"kubectl-crd", tar.TypeReg, 0o755, 0, 0, "", mtime, data[p]},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the layer (-want +got):\n%s", p, diff)
		}
	}
	if diff := cmp.Diff([]ImagePlatform{{"amd64", "linux", ""}, {"arm64", "linux", "v8"}}, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	// kpt and kustomize run the container with --user nobody; the default
	// user is named too.
	for _, line := range []string{"nobody:x:65534:65534:", "nonroot:x:65532:65532:"} {
		if !strings.Contains(imagePasswd, "\n"+line) && !strings.HasPrefix(imagePasswd, line) {
			t.Errorf("/etc/passwd has no line %s...", line)
		}
	}

	again, _ := standInImage(t, mtime)
	if !bytes.Equal(b, again) {
		t.Error("two images of the same binaries differ")
	}
	later, _ := standInImage(t, mtime.Add(time.Second))
	if bytes.Equal(b, later) {
		t.Error("the image does not depend on its time")
	}
}

// TestReadImageRefuses: a damaged or incomplete layout is an error.
func TestReadImageRefuses(t *testing.T) {
	b, _ := standInImage(t, time.Unix(0, 0))
	var entries []tarFile
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		var data bytes.Buffer
		data.ReadFrom(tr)
		entries = append(entries, tarFile{name: hdr.Name, data: data.Bytes(), dir: hdr.Typeflag == tar.TypeDir})
	}
	keep := func(_ string, d []byte) ([]byte, bool) { return d, true }
	isLayer := func(d []byte) bool { return len(d) > 2 && d[0] == 0x1f && d[1] == 0x8b } // gzip's magic
	rewrite := func(change func(name string, data []byte) ([]byte, bool), extra ...tarFile) []byte {
		files := extra
		for _, e := range entries {
			if data, ok := change(e.name, bytes.Clone(e.data)); ok {
				files = append(files, tarFile{name: e.name, data: data, dir: e.dir})
			}
		}
		var buf bytes.Buffer
		if err := writeTar(&buf, files, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if _, err := ReadImage(bytes.NewReader(rewrite(keep))); err != nil {
		t.Fatalf("the image rewritten unchanged: %v", err)
	}
	for name, damaged := range map[string][]byte{
		"a blob changed": rewrite(func(n string, d []byte) ([]byte, bool) {
			if isLayer(d) {
				d[len(d)/2] ^= 1
			}
			return d, true
		}),
		"a blob missing": rewrite(func(n string, d []byte) ([]byte, bool) {
			return d, !isLayer(d)
		}),
		"no oci-layout": rewrite(func(n string, d []byte) ([]byte, bool) { return d, n != "oci-layout" }),
		"a stray blob":  rewrite(keep, tarFile{name: "blobs/sha256/" + strings.Repeat("0", 64), data: []byte("x")}),
		"another layout version": rewrite(func(n string, d []byte) ([]byte, bool) {
			if n == "oci-layout" {
				return []byte(`{"imageLayoutVersion":"2.0.0"}`), true
			}
			return d, true
		}),
	} {
		if _, err := ReadImage(bytes.NewReader(damaged)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	if err := WriteImage(&bytes.Buffer{}, ImageOptions{Version: "v1.0.0", Binaries: map[Platform]string{{"darwin", "arm64"}: "x"}}); err == nil {
		t.Error("an image of a darwin binary was written")
	}
}

// TestHomepage: the image's labels name the homepage of the krew manifest.
func TestHomepage(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join("..", "..", ManifestTemplate))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, p := range Platforms {
		sums[p.Archive()] = strings.Repeat("0", 64)
	}
	b, err := RenderManifest(ManifestTemplate, tmpl, "v1.0.0", sums)
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if plugin.Spec.Homepage != Homepage {
		t.Errorf("the krew manifest's homepage is %s, the image's %s", plugin.Spec.Homepage, Homepage)
	}
}
