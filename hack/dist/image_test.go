package main

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/release"
)

// TestImage checks the image of each release directory that has one (the
// runs' when they built a linux platform, the host's on linux): one image
// per linux platform built, each holding that platform's released binary
// and nothing but the users' files, run as the function by its entrypoint,
// not as root, labelled with the version and the commit. On a linux host,
// the binary of the host's image runs as kpt and kustomize run it: the
// entrypoint with a ResourceList on stdin and the image's environment only.
func TestImage(t *testing.T) {
	skipShort(t)
	revision := strings.TrimSpace(string(mustOutput(t, "git", "-C", root, "rev-parse", "HEAD")))
	dirs := map[string][]release.Platform{}
	if hasLinux(built) {
		dirs[dists[0]] = built
	}
	if _, ok := dirs[hostDist]; !ok && hostDist != "" && runtime.GOOS == "linux" {
		dirs[hostDist] = []release.Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH}}
	}
	if len(dirs) == 0 {
		t.Skip("no linux platform built: no image")
	}
	ran := false
	for dir, platforms := range dirs {
		f, err := os.Open(filepath.Join(dir, release.ImageFile))
		if err != nil {
			t.Fatal(err)
		}
		img, err := release.ReadImage(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, p := range platforms {
			if p.OS == "linux" {
				want = append(want, p.String())
			}
		}
		for _, pi := range img.Platforms {
			got = append(got, pi.Platform.OS+"/"+pi.Platform.Architecture)
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: the image's platforms are %q, want %q", dir, got, want)
		}
		if img.Ref != testVersion || img.Index.Annotations["org.opencontainers.image.version"] != testVersion ||
			img.Index.Annotations["org.opencontainers.image.revision"] != revision {
			t.Errorf("%s: ref %q, annotations %q; want the version %s and the commit %s", dir, img.Ref, img.Index.Annotations, testVersion, revision)
		}
		for _, pi := range img.Platforms {
			p := release.Platform{OS: pi.Platform.OS, Arch: pi.Platform.Architecture}
			c := pi.Config.Config
			if c.User == "" || strings.HasPrefix(c.User, "0:") || c.User == "0" || c.User == "root" ||
				!slices.Equal(c.Entrypoint, []string{"/kubectl-crd", "krm"}) || c.Labels["org.opencontainers.image.revision"] != revision {
				t.Errorf("%s: user %q, entrypoint %q, labels %q", p, c.User, c.Entrypoint, c.Labels)
			}
			var names []string
			var bin, companion []byte
			for _, e := range pi.Files {
				names = append(names, e.Header.Name)
				switch e.Header.Name {
				case "kubectl-crd":
					bin = e.Data
				case "crd-helm":
					companion = e.Data
				}
			}
			if !slices.Equal(names, []string{"crd-helm", "etc/", "etc/group", "etc/passwd", "kubectl-crd"}) {
				t.Errorf("%s: the layer holds %q", p, names)
			}
			var released, releasedCompanion []byte
			for _, e := range readArchive(t, filepath.Join(dir, p.Archive())) {
				switch e.hdr.Name {
				case p.Binary():
					released = e.data
				case p.Companion():
					releasedCompanion = e.data
				}
			}
			if sha256.Sum256(bin) != sha256.Sum256(released) || len(bin) == 0 {
				t.Errorf("%s: the image's binary is not the one of %s", p, p.Archive())
			}
			if sha256.Sum256(companion) != sha256.Sum256(releasedCompanion) || len(companion) == 0 {
				t.Errorf("%s: the image's crd-helm is not the one of %s", p, p.Archive())
			}
			if p.OS == runtime.GOOS && p.Arch == runtime.GOARCH && !ran {
				runImageFunction(t, bin, pi.Config)
				ran = true
			}
		}
	}
}

// runImageFunction runs the image's binary as a container runtime would:
// its entrypoint, the image's environment and nothing else, a ResourceList
// on stdin (examples/krm's CRD and widget, with its config).
func runImageFunction(t *testing.T, bin []byte, config release.ImageConfig) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "kubectl-crd")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	indent := func(file string) string {
		b, err := os.ReadFile(filepath.Join(root, "examples", "krm", file))
		if err != nil {
			t.Fatal(err)
		}
		return "  " + strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n  ")
	}
	list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " +
		strings.TrimPrefix(indent("crd.yaml"), "  ") + "\n- " + strings.TrimPrefix(indent("widget.yaml"), "  ") +
		"\nfunctionConfig:\n" + indent("check.yaml") + "\n"
	entry := config.Config.Entrypoint
	cmd := exec.Command(path, entry[1:]...)
	cmd.Env = config.Config.Env
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(list)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q with a ResourceList on stdin: %v\n%s\n%s", entry, err, stderr.String(), list)
	}
	out := stdout.String()
	for _, want := range []string{"kind: ResourceList", `message: pruned unknown field "spec.colour"`, "  size: 3 # three"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q: the ResourceList written has no %q:\n%s", entry, want, out)
		}
	}
	if strings.Contains(out, "colour: red") {
		t.Errorf("%q: spec.colour not pruned:\n%s", entry, out)
	}
}

func mustOutput(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return out
}
