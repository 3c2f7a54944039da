package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const evil = "kind: CustomResourceDefinition\nmetadata: {name: evil}\n"

func digestOf(data string) string {
	sum := sha256.Sum256([]byte(data))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// blobPath is where the cache of dir keeps the blob of digest.
func blobPath(dir, digest string) string {
	return filepath.Join(dir, "sha256", strings.TrimPrefix(digest, "sha256:"))
}

// A cache entry changed after it was fetched is a miss: offline, by the
// lock or by the last fetch, an input error naming the source, the digest
// and the entry's path; online, the source fetched again (with a lock and
// without) and the entry replaced. Whoever can write the cache does not
// decide what a run reads.
func TestTamperedHTTPSBlob(t *testing.T) {
	srv := newTestFileServer(t)
	src := srv.put("/crds.yaml", crdA)
	for _, c := range []struct {
		what    string
		offline bool
		lock    bool
	}{{"offline, by the lock", true, true}, {"offline, by the last fetch", true, false},
		{"online, by the lock", false, true}, {"online, no lock", false, false}} {
		t.Run(c.what, func(t *testing.T) {
			dir := t.TempDir()
			cache := filepath.Join(dir, "sources")
			lock := filepath.Join(dir, "kubectl-crd.lock")
			if _, err := run(t, Options{Dir: cache, Update: true}, lock, src); err != nil {
				t.Fatal(err)
			}
			entry := blobPath(cache, digestOf(crdA))
			writeFile(t, entry, []byte(evil))
			if !c.lock {
				lock = ""
			}
			files, err := run(t, Options{Dir: cache, Offline: c.offline}, lock, src)
			if c.offline {
				wantInputError(t, c.what, err, src+": ", digestOf(crdA), entry, "--offline fetches nothing")
				return
			}
			wantFiles(t, c.what, files, err, src, crdA)
			if got := string(readFile(t, entry)); got != crdA {
				t.Fatalf("the entry was not replaced: %q", got)
			}
		})
	}
}

// An OCI artifact's manifest or layer changed in the cache: the manifest
// replaced by one of other layers (whose blobs the cache holds, as one who
// writes the cache would leave them), or a layer's content replaced. Each
// is a miss: offline an input error naming the entry, online fetched again.
func TestTamperedOCIBlobs(t *testing.T) {
	for _, what := range []string{"manifest", "layer"} {
		t.Run(what, func(t *testing.T) {
			reg := newTestRegistry(t)
			src, img := reg.push(t, "crds/app:v1", "a.yaml", crdA)
			manifestDigest, _ := img.Digest()
			dir := t.TempDir()
			cache := filepath.Join(dir, "sources")
			lock := filepath.Join(dir, "kubectl-crd.lock")
			if _, err := run(t, Options{Dir: cache, Update: true}, lock, src); err != nil {
				t.Fatal(err)
			}
			var entry string
			switch what {
			case "manifest":
				// Another manifest, its layer in the cache by its true digest.
				other, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.oci.empty.v1+json"),
					mutate.Addendum{Layer: static.NewLayer([]byte(evil), "application/yaml"), MediaType: "application/yaml",
						Annotations: map[string]string{ociTitle: "a.yaml"}})
				if err != nil {
					t.Fatal(err)
				}
				raw, err := other.RawManifest()
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, blobPath(cache, digestOf(evil)), []byte(evil))
				entry = blobPath(cache, manifestDigest.String())
				writeFile(t, entry, raw)
			case "layer":
				entry = blobPath(cache, digestOf(crdA))
				writeFile(t, entry, []byte(evil))
			}
			_, err := run(t, Options{Dir: cache, Offline: true}, lock, src)
			wantInputError(t, "offline, by the lock", err, src+": ", entry, "--offline fetches nothing")
			_, err = run(t, Options{Dir: cache, Offline: true}, "", src)
			wantInputError(t, "offline, by the last fetch", err, src+": ", entry)
			files, err := run(t, Options{Dir: cache}, lock, src)
			wantFiles(t, "online, by the lock", files, err, src+"/a.yaml", crdA)
			reg.Close()
			files, err = run(t, Options{Dir: cache, Offline: true}, lock, src)
			wantFiles(t, "offline, the entry replaced", files, err, src+"/a.yaml", crdA)
		})
	}
}

// What the cache noted of the last fetch names a digest; one that is not
// a sha256 of 64 hex digits (a path out of the cache) is no record.
func TestForgedRef(t *testing.T) {
	srv := newTestFileServer(t)
	src := srv.put("/crds.yaml", crdA)
	cache := filepath.Join(t.TempDir(), "sources")
	if _, err := run(t, Options{Dir: cache}, "", src); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(cache), "outside")
	writeFile(t, outside, []byte(evil))
	b := &blobs{dir: cache}
	for _, digest := range []string{"sha256:../../outside", "sha256:" + strings.Repeat("../", 21) + "x", "sha256:" + strings.ToUpper(strings.TrimPrefix(digestOf(crdA), "sha256:"))} {
		writeFile(t, b.refPath(src), []byte(`{"source":"`+src+`","digest":"`+digest+`"}`))
		_, err := run(t, Options{Dir: cache, Offline: true}, "", src)
		wantInputError(t, "a ref to "+digest, err, src+": not in the cache")
	}
}

// What the cache writes is private: directories 0700, files 0600, as the
// user's own cache, whatever the umask.
func TestCachePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are ACLs")
	}
	srv := newTestFileServer(t)
	src := srv.put("/crds.yaml", crdA)
	cache := filepath.Join(t.TempDir(), "kubectl-crd", "sources")
	if _, err := run(t, Options{Dir: cache}, "", src); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir(filepath.Dir(cache), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: %v, want %v", p, st.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil || n < 6 { // kubectl-crd, sources, sha256, its blob, refs, its record
		t.Fatalf("%d entries: %v", n, err)
	}
}

// A cache directory that is not the user's own, or that others may write
// (or whose parent is such: the cache of indexes, which holds it), is read
// only: a pinned source is read from it as its digest verifies it (a
// changed entry named, offline), what a run fetches is not written there,
// and its records of the last fetch are not read (offline without a lock,
// nothing verifies them).
func TestUntrustedCacheReadOnly(t *testing.T) {
	srv := newTestFileServer(t)
	src := srv.put("/crds.yaml", crdA)
	other := srv.put("/other.yaml", crdB)
	for _, c := range []struct {
		what    string
		make    func(t *testing.T, root string) // what makes root untrusted
		reason  string
		windows bool
	}{
		{"writable by others", func(t *testing.T, root string) { chmod(t, root, 0o777) }, "cache: writable by its group or others (drwxrwxrwx)", false},
		{"writable by its group", func(t *testing.T, root string) { chmod(t, filepath.Join(root, "sources"), 0o770) }, "sources: writable by its group or others (drwxrwx---)", false},
		{"another user's", func(t *testing.T, root string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a directory to another user takes root")
			}
			if err := os.Chown(root, 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}, "cache: owned by another user (uid 4242", false},
		{"a symbolic link", func(t *testing.T, root string) {
			real := root + ".real"
			if err := os.Rename(root, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, root); err != nil {
				t.Fatal(err)
			}
		}, "cache: a symbolic link", true},
	} {
		t.Run(c.what, func(t *testing.T) {
			if runtime.GOOS == "windows" && !c.windows {
				t.Skip("modes and owners are ACLs")
			}
			dir := t.TempDir()
			root := filepath.Join(dir, "cache")
			cache := filepath.Join(root, "sources")
			lock := filepath.Join(dir, "kubectl-crd.lock")
			if _, err := run(t, Options{Dir: cache, Update: true}, lock, src); err != nil {
				t.Fatal(err)
			}
			c.make(t, root)
			before := tree(t, cache)
			var warnings []string
			warn := func(s string) { warnings = append(warnings, s) }

			files, err := run(t, Options{Dir: cache, Offline: true, Warn: warn}, lock, src)
			wantFiles(t, "offline, by the lock", files, err, src, crdA)
			if len(warnings) != 1 || !strings.Contains(warnings[0], "the cache of remote sources is not trusted: read only") || !strings.Contains(warnings[0], c.reason) {
				t.Errorf("warnings: %q", warnings)
			}
			_, err = run(t, Options{Dir: cache, Offline: true}, "", src)
			wantInputError(t, "offline, by the last fetch", err, src+": not in the cache", "what the cache notes of the last fetch is not read", c.reason)
			files, err = run(t, Options{Dir: cache}, "", src, other)
			wantFiles(t, "online", files, err, src, crdA, other, crdB)
			if after := tree(t, cache); after != before {
				t.Errorf("the cache was written:\n%s\nwas:\n%s", after, before)
			}
			writeFile(t, blobPath(cache, digestOf(crdA)), []byte(evil))
			_, err = run(t, Options{Dir: cache, Offline: true}, lock, src)
			wantInputError(t, "offline, a changed entry", err, blobPath(cache, digestOf(crdA)), "it was changed after it was fetched")
		})
	}
}

func chmod(t *testing.T, p string, mode fs.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// tree lists the files below dir with their sizes.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err == nil {
			fmt.Fprintf(&b, "%s %d\n", p, st.Size())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// An OCI Helm chart's archive is a blob of the cache as any: pinned by
// the manifest, verified when read; changed in the cache, offline an input
// error naming the entry, online fetched again. (Read before rendering:
// what crd-helm is handed.)
func TestTamperedOCIChart(t *testing.T) {
	reg := newTestRegistry(t)
	archive := "not really a .tgz: the bytes crd-helm would be handed"
	img, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), helmConfigMediaType),
		mutate.Addendum{Layer: static.NewLayer([]byte(archive), helmChartMediaType), MediaType: helmChartMediaType})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(reg.host + "/charts/app:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	src := "oci://" + ref.String()
	cache := filepath.Join(t.TempDir(), "sources")
	resolve := func(opts Options) ([]File, error) {
		opts.Dir = cache
		f, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f.resolve(context.Background(), src, src)
	}
	wantChart := func(what string, files []File, err error) {
		t.Helper()
		if err != nil || len(files) != 1 || !files[0].chart || string(readFile(t, files[0].Path)) != archive {
			t.Fatalf("%s: %+v %v", what, files, err)
		}
	}
	files, err := resolve(Options{})
	wantChart("fetched", files, err)
	entry := blobPath(cache, digestOf(archive))
	writeFile(t, entry, []byte(evil))
	_, err = resolve(Options{Offline: true})
	wantInputError(t, "offline, the archive changed", err, src+": ", entry, digestOf(archive), "it was changed after it was fetched")
	files, err = resolve(Options{})
	wantChart("online, fetched again", files, err)
	reg.Close()
	files, err = resolve(Options{Offline: true})
	wantChart("offline, the entry replaced", files, err)
}
