package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/release"
)

const (
	root        = "../.."
	testVersion = "v0.0.0-test.1"
)

// allPlatforms builds the whole release, as make dist builds it, before
// the tests that read it: make test-dist, CI's release step. Without it
// (the README's test command) nothing is built and those tests are skipped:
// a release build compiles every package again (-trimpath, no cgo), the
// Helm SDK of crd-helm too, some 6 minutes of two cores with an empty build
// cache for one platform alone (issue 44: the README's test command under
// 15 minutes cold); CI's release step builds all six, and checks them all.
var allPlatforms = flag.Bool("all-platforms", false, "build every release platform, as make dist does, and run the tests that read the release")

// dists are two runs of the program with the same arguments, made before
// the tests run, for the platforms built; distLog is what they printed.
// Cold builds take minutes: go test kills a test binary after its -timeout
// (plus a minute), so make test-dist gives one.
var (
	built   []release.Platform
	dists   [2]string
	distLog bytes.Buffer
	// hostDist is a release of the host's platform (hostOf), ""
	// when there is none.
	hostDist string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !releaseBuilt() {
		os.Exit(m.Run())
	}
	built = release.Platforms
	var names []string
	for _, p := range built {
		names = append(names, p.String())
	}
	os.Exit(func() int {
		tmp, err := os.MkdirTemp("", "kubectl-crd-dist-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		defer os.RemoveAll(tmp)
		for i := range dists {
			dists[i] = filepath.Join(tmp, strconv.Itoa(i))
			start := time.Now()
			args := []string{"-root", root, "-out", dists[i], "-version", testVersion, "-platforms", strings.Join(names, ",")}
			if code := run(context.Background(), args, &distLog); code != 0 {
				fmt.Fprintf(os.Stderr, "dist run %d: exit %d\n%s", i, code, distLog.String())
				return 3
			}
			fmt.Fprintf(&distLog, "run %d took %s\n", i, time.Since(start).Round(time.Second))
		}
		hostDist = hostOf(dists[0])
		return m.Run()
	}())
}

// hostOf is the runs' output when they built the host's platform (the
// Action's test installs from it, and the image test runs the function from
// its image on a linux host), else "".
func hostOf(dir string) string {
	if slices.Contains(built, release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}) {
		return dir
	}
	return ""
}

// hasLinux is whether platforms has a linux one, and so a run of them
// writes the image.
func hasLinux(platforms []release.Platform) bool {
	return slices.ContainsFunc(platforms, func(p release.Platform) bool { return p.OS == "linux" })
}

// releaseBuilt is whether the tests build the release and read it: with
// -all-platforms, and not with -short.
func releaseBuilt() bool { return *allPlatforms && !testing.Short() }

func skipShort(t *testing.T) {
	t.Helper()
	if !releaseBuilt() {
		t.Skip("reads the release, built with -all-platforms (make test-dist, CI's release step)")
	}
}

// entry is a file of an archive.
type entry struct {
	hdr  *tar.Header
	data []byte
}

// readArchive reads a tar.gz the way krew extracts it.
func readArchive(t *testing.T, path string) []entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []entry
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, entry{hdr, data})
	}
}

// sourceDate is the mtime the archives' files must have: SOURCE_DATE_EPOCH,
// else the commit time, else the epoch.
func sourceDate(t *testing.T) time.Time {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%ct").Output()
		if err != nil {
			return time.Unix(0, 0)
		}
		s = strings.TrimSpace(string(out))
	}
	secs, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(secs, 0)
}

func TestArchives(t *testing.T) {
	skipShort(t)
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	shim, err := os.ReadFile(filepath.Join(root, release.CompletionShim))
	if err != nil {
		t.Fatal(err)
	}
	mtime := sourceDate(t)
	for _, p := range built {
		helmPlugin := map[string][]byte{}
		for _, name := range release.HelmPluginFiles {
			tmpl, err := os.ReadFile(filepath.Join(root, release.HelmPluginDir, name))
			if err != nil {
				t.Fatal(err)
			}
			if helmPlugin[name], err = release.RenderHelmPlugin(name, tmpl, testVersion, p); err != nil {
				t.Fatal(err)
			}
		}
		entries := readArchive(t, filepath.Join(dists[0], p.Archive()))
		var names []string
		for _, e := range entries {
			names = append(names, e.hdr.Name)
			if e.hdr.Typeflag != tar.TypeReg || e.hdr.Uid != 0 || e.hdr.Gid != 0 || e.hdr.Uname != "" || e.hdr.Gname != "" || !e.hdr.ModTime.Equal(mtime) {
				t.Errorf("%s: %s: type %c, owner %d:%d (%q:%q), mtime %v; want a regular file of 0:0 dated %v",
					p.Archive(), e.hdr.Name, e.hdr.Typeflag, e.hdr.Uid, e.hdr.Gid, e.hdr.Uname, e.hdr.Gname, e.hdr.ModTime, mtime)
			}
			want := map[string]struct {
				mode int64
				data []byte
			}{p.Binary(): {0o755, nil}, p.Companion(): {0o755, nil}, "LICENSE": {0o644, license}, "kubectl_complete-crd": {0o755, shim},
				"plugin.yaml": {0o644, helmPlugin["plugin.yaml"]}, "crd-check-post-renderer/plugin.yaml": {0o644, helmPlugin["crd-check-post-renderer/plugin.yaml"]},
			}[e.hdr.Name]
			if e.hdr.Mode != want.mode || (want.data != nil && !bytes.Equal(e.data, want.data)) {
				t.Errorf("%s: %s: mode %o, want %o; or not the repository's file", p.Archive(), e.hdr.Name, e.hdr.Mode, want.mode)
			}
		}
		// The Helm plugin's files: the unpacked archive is the plugin crd-check's directory (docs/upgrades.md).
		want := []string{"LICENSE", "crd-check-post-renderer/plugin.yaml", p.Companion(), p.Binary(), "kubectl_complete-crd", "plugin.yaml"}
		if !slices.Equal(names, want) {
			t.Errorf("%s holds %q, want %q in this order", p.Archive(), names, want)
		}
	}
}

// TestManifest checks SHA256SUMS and the krew manifest against the archives
// built. With every platform built, the manifest is the crd.yaml the run
// wrote; with fewer, the run writes none (it would name archives not built),
// so the test renders the template itself with the archives' sha256 and
// stand-ins for the others, and checks the entries of the archives built.
func TestManifest(t *testing.T) {
	skipShort(t)
	sums := map[release.Platform]string{}
	var lines []string // of SHA256SUMS, sorted by archive name
	for _, p := range built {
		archive, err := os.ReadFile(filepath.Join(dists[0], p.Archive()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(archive)
		sums[p] = hex.EncodeToString(sum[:])
		lines = append(lines, sums[p]+"  "+p.Archive()+"\n")
	}
	if hasLinux(built) {
		image, err := os.ReadFile(filepath.Join(dists[0], release.ImageFile))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(image)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+release.ImageFile+"\n")
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[64:], b[64:]) })
	if got, err := os.ReadFile(filepath.Join(dists[0], release.SumsFile)); err != nil || string(got) != strings.Join(lines, "") {
		t.Errorf("%s:\n%s\nwant:\n%s(%v)", release.SumsFile, got, strings.Join(lines, ""), err)
	}

	path := filepath.Join(dists[0], "crd.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := release.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if errs := release.ValidateManifest(path, plugin, release.Platforms); len(errs) > 0 {
		t.Fatalf("%s:\n%v", path, errs.ToAggregate())
	}
	if plugin.Spec.Version != testVersion {
		t.Errorf("version %q, want %q", plugin.Spec.Version, testVersion)
	}
	// The entries of the archives built: uri, sha256, bin, and files
	// that are in the archive.
	builtOnly := *plugin
	builtOnly.Spec.Platforms = nil
	for _, pl := range plugin.Spec.Platforms {
		p := release.Platform{OS: pl.Selector.MatchLabels["os"], Arch: pl.Selector.MatchLabels["arch"]}
		if _, ok := sums[p]; !ok {
			continue
		}
		builtOnly.Spec.Platforms = append(builtOnly.Spec.Platforms, pl)
		if !strings.HasSuffix(pl.URI, "/download/"+testVersion+"/"+p.Archive()) {
			t.Errorf("%s: uri %s does not end in /download/%s/%s", p, pl.URI, testVersion, p.Archive())
		}
		var names []string
		for _, e := range readArchive(t, filepath.Join(dists[0], p.Archive())) {
			names = append(names, e.hdr.Name)
		}
		for _, op := range pl.Files {
			if !slices.Contains(names, op.From) {
				t.Errorf("%s: files: %s is not in the archive %q", p, op.From, names)
			}
		}
		if want := map[bool]string{true: "kubectl-crd.exe", false: "kubectl-crd"}[p.OS == "windows"]; pl.Bin != want || !slices.Contains(names, want) {
			t.Errorf("%s: bin %s, want %s, in the archive", p, pl.Bin, want)
		}
	}
	if len(builtOnly.Spec.Platforms) != len(built) {
		t.Errorf("the manifest has entries for %d of the %d archives built", len(builtOnly.Spec.Platforms), len(built))
	}
	if errs := release.ManifestFor(&builtOnly, sums); len(errs) > 0 {
		t.Errorf("%s:\n%v", path, errs.ToAggregate())
	}
}

func TestBinaryRuns(t *testing.T) {
	skipShort(t)
	host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	if !slices.Contains(built, host) {
		if slices.Contains(release.Platforms, host) {
			t.Skipf("the release for %s is built with -all-platforms (make test-dist)", host)
		}
		t.Skipf("no release for %s", host)
	}
	dir := t.TempDir()
	// Unpacked as tar does: the Helm post-renderer plugin is a directory.
	for _, e := range readArchive(t, filepath.Join(dists[0], host.Archive())) {
		path := filepath.Join(dir, filepath.FromSlash(e.hdr.Name))
		if e.hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, e.data, os.FileMode(e.hdr.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(filepath.Join(dir, host.Binary()), "version").CombinedOutput()
	if first, _, _ := strings.Cut(string(out), "\n"); err != nil || first != "kubectl-crd "+testVersion {
		t.Errorf("kubectl-crd version: %v\n%s\nwant the first line kubectl-crd %s", err, out, testVersion)
	}
	// crd-helm, of the same build, renders a chart of examples/krm's CRD
	// for the plugin beside it.
	out, err = exec.Command(filepath.Join(dir, host.Companion()), "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != testVersion {
		t.Errorf("crd-helm version: %v\n%s\nwant %s", err, out, testVersion)
	}
	chart := filepath.Join(t.TempDir(), "chart")
	crd, err := os.ReadFile(filepath.Join(root, "examples", "krm", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(chart, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: widgets\nversion: 1.0.0\n"), 0o644)
	os.WriteFile(filepath.Join(chart, "crds", "crd.yaml"), crd, 0o644)
	run := exec.Command(filepath.Join(dir, host.Binary()), "prune", "--offline", "--crd-file", chart, "-f", filepath.Join(root, "examples", "krm", "widget.yaml"))
	run.Env = append(os.Environ(), "KUBECTL_CRD_CACHE_DIR=off")
	out, _ = run.CombinedOutput()
	if !strings.Contains(string(out), `pruned unknown field "spec.colour"`) {
		t.Errorf("prune with a chart of examples/krm's CRD:\n%s", out)
	}
	// The completion shim runs the plugin it is installed with.
	if host.OS != "windows" {
		shim := exec.Command(filepath.Join(dir, "kubectl_complete-crd"), "prune", "--crd-")
		shim.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := shim.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--crd-file") {
			t.Errorf("kubectl_complete-crd prune --crd-: %v\n%s", err, out)
		}
	}
}

func TestReproducible(t *testing.T) {
	skipShort(t)
	t.Log(distLog.String())
	list := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	names := list(dists[0])
	want := len(built) + 2 // the archives, SHA256SUMS, crd.yaml
	if hasLinux(built) {
		want++ // the image
	}
	if len(names) != want {
		t.Errorf("%d files, want %d: %q", len(names), want, names)
	}
	if other := list(dists[1]); !slices.Equal(names, other) {
		t.Fatalf("two runs wrote %q and %q", names, other)
	}
	for _, name := range names {
		a, errA := os.ReadFile(filepath.Join(dists[0], name))
		b, errB := os.ReadFile(filepath.Join(dists[1], name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of the same commit (%v, %v)", name, errA, errB)
		}
	}
}

// TestSources reads every file the runs built from: go test reuses a
// passing result while the test binary and the files the test process
// itself opened are unchanged, and the builds happen in other processes.
// Without it, a change that breaks the build for the other platform would
// pass as "(cached)". Files of every GOOS, not only the host's.
func TestSources(t *testing.T) {
	skipShort(t)
	list := exec.Command("go", "list", "-deps", "-f", "{{if and .Module .Module.Main}}{{.Dir}}{{end}}", "./cmd/kubectl-crd", "./cmd/crd-helm")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	for _, dir := range strings.Fields(string(out)) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() && !strings.HasSuffix(e.Name(), "_test.go") {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d source files: %q", len(files), files)
	}
	for _, f := range files {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-version", "1.2.3"},
		{"-version", "v1.2"},
		{"-platforms", "linux/386"},
		{"-unknown"},
		{"extra"},
	} {
		var log bytes.Buffer
		if code := run(context.Background(), append([]string{"-root", root, "-out", t.TempDir()}, args...), &log); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, log.String())
		}
	}
}
