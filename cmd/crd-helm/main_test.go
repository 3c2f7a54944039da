package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
)

const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: as.example.com\n"

// A document that is not a CRD is blanked line for line: the CRDs stay
// at their lines of the rendered file; a file without a CRD is dropped.
func TestOnlyCRDs(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\n" + crd + "--- # next\nkind: Service\n"
	got, ok := onlyCRDs([]byte(in))
	want := "\n\n\n\n---\n" + crd + "--- # next\n\n"
	if !ok || string(got) != want {
		t.Errorf("onlyCRDs = %v %q, want %q", ok, got, want)
	}
	if _, ok := onlyCRDs([]byte("kind: ConfigMap\n")); ok {
		t.Errorf("a file without a CRD is kept")
	}
}

// render writes crds/ and the templates holding CRDs, gated by a value;
// another build is refused.
func TestRender(t *testing.T) {
	chart := writeChart(t, t.TempDir(), map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"values.yaml":         "on: false\n",
		"crds/a.yaml":         crd,
		"templates/b.yaml":    "{{- if .Values.on }}\n" + strings.ReplaceAll(crd, "as.", "bs.") + "{{- end }}\n",
		"templates/none.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
	})
	names := func(set ...string) []string {
		args := []string{"render", "--build", buildinfo.Version(), "--chart", chart, "--out", t.TempDir()}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("render: exit %d: %s", code, errb.String())
		}
		var res result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, f := range res.Files {
			n = append(n, f.Name)
		}
		return n
	}
	if got := strings.Join(names(), ","); got != "crds/a.yaml" {
		t.Errorf("defaults: %s", got)
	}
	if got := strings.Join(names("on=true"), ","); got != "crds/a.yaml,templates/b.yaml" {
		t.Errorf("on=true: %s", got)
	}
	for _, args := range [][]string{{"--chart", chart}, {"--a-flag-of-a-later-release", "--chart", chart}} {
		var errb bytes.Buffer
		if code := run(append([]string{"render", "--build", "other", "--out", t.TempDir()}, args...), &bytes.Buffer{}, &errb); code != exitInput || !strings.HasSuffix(errb.String(), "install both from the same release\n") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("another build, %s: exit %d: %s", args, code, errb.String())
		}
	}
}

// writeChart writes the files of a chart, by their path in it, into dir.
func writeChart(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for p, data := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// renderChart runs render on a chart: its exit code and what it wrote on
// stderr.
func renderChart(t *testing.T, chart string, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"render", "--build", buildinfo.Version(), "--chart", chart, "--out", t.TempDir()}, args...), &out, &errb)
	return code, errb.String()
}

// A chart whose dependencies are not all in charts/ is refused as helm
// install refuses it, in its words, whatever their conditions say (a
// template then failed on a nil value, or rendered without them); with
// them there, it renders.
func TestRenderMissingDependencies(t *testing.T) {
	sub := "apiVersion: v2\nname: %s\nversion: 4.0.0\n"
	deps := "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n" +
		"- name: redis-ha\n  version: 4.x\n  repository: https://charts.example.com\n" +
		"- name: extra\n  version: 4.x\n  repository: https://charts.example.com\n  condition: extra.enabled\n" +
		"- name: present\n  version: 4.x\n  repository: https://charts.example.com\n"
	chart := writeChart(t, t.TempDir(), map[string]string{
		"Chart.yaml":                deps,
		"crds/a.yaml":               crd,
		"charts/present/Chart.yaml": fmt.Sprintf(sub, "present"),
		"templates/uses-redis.yaml": "# {{ index .Values \"redis-ha\" \"image\" }}\n",
		"templates/also-crds.yaml":  "",
	})
	code, stderr := renderChart(t, chart)
	want := "found in Chart.yaml, but missing in charts/ directory: redis-ha, extra"
	if code != exitInput || !strings.Contains(stderr, want) || !strings.Contains(stderr, "helm dependency build") {
		t.Errorf("missing dependencies: exit %d: %s", code, stderr)
	}
	writeChart(t, chart, map[string]string{
		"charts/redis-ha/Chart.yaml":  fmt.Sprintf(sub, "redis-ha"),
		"charts/redis-ha/values.yaml": "image: redis\n",
		"charts/extra/Chart.yaml":     fmt.Sprintf(sub, "extra"),
	})
	if code, stderr := renderChart(t, chart); code != 0 {
		t.Errorf("with its dependencies: exit %d: %s", code, stderr)
	}
}

// A values file is read whole up to a bound (64 MiB, fileread's), a
// larger file or a device that never ends (/dev/zero) an error after the
// bound is read, exit 2: it filled the memory.
func TestValuesBounded(t *testing.T) {
	defer func(max int64) { maxValuesBytes = max }(maxValuesBytes)
	maxValuesBytes = 1 << 20
	chart := writeChart(t, t.TempDir(), map[string]string{"Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n", "crds/a.yaml": crd})
	large := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(large, bytes.Repeat([]byte("# a comment line of values\n"), 50000), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{large, "/dev/zero"} {
		if _, err := os.Stat(f); err != nil {
			continue // no /dev/zero on Windows
		}
		code, stderr := renderChart(t, chart, "--values", f)
		if code != exitInput || !strings.Contains(stderr, f+": larger than 1 MiB") {
			t.Errorf("--values %s: exit %d: %s", f, code, stderr)
		}
	}
}

// With --root (the KRM function's load restriction), a chart directory's
// symbolic link that leads out of the root is refused, exit 2, naming the
// link and where it leads, and nothing of the file it leads to is in any
// output: .Files.Get put it in the CRDs. Links inside the root are
// followed, as Helm follows them; without --root every link is (the
// plugin's, as helm's). A link to a directory that holds it is an error,
// not a walk without end.
func TestRenderRoot(t *testing.T) {
	if !symlinks(t) {
		t.Skip("no symbolic links here")
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	outside := writeChart(t, t.TempDir(), map[string]string{"secret.txt": "top-secret-token\n", "more/crd.yaml": crd})
	tmpl := strings.Replace(crd, "metadata:", "metadata:\n  annotations:\n    leak: {{ .Files.Get \"files/secret.txt\" | quote }}", 1)
	chart := writeChart(t, filepath.Join(root, "chart"), map[string]string{
		"Chart.yaml":       "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"templates/a.yaml": tmpl,
	})
	writeChart(t, filepath.Join(root, "shared"), map[string]string{"b.yaml": strings.ReplaceAll(crd, "as.", "bs."), "secret.txt": "shared\n"})
	link := func(target, name string) {
		t.Helper()
		os.RemoveAll(filepath.Join(chart, name))
		os.MkdirAll(filepath.Dir(filepath.Join(chart, name)), 0o755)
		if err := os.Symlink(target, filepath.Join(chart, name)); err != nil {
			t.Fatal(err)
		}
	}
	render := func(args ...string) (int, string, string) {
		t.Helper()
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"render", "--build", buildinfo.Version(), "--chart", chart, "--out", out}, args...), &stdout, &stderr)
		var all strings.Builder
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			data, _ := os.ReadFile(filepath.Join(out, e.Name()))
			all.Write(data)
		}
		return code, stderr.String(), all.String() + stdout.String()
	}
	hint := "outside the function's working directory (set loadRestrictor: LoadRestrictionsNone in the function config to read it)"

	link(filepath.Join(outside, "secret.txt"), "files/secret.txt")
	if code, stderr, out := render(); code != 0 || !strings.Contains(out, "top-secret-token") {
		t.Errorf("no --root: exit %d: %s", code, stderr)
	}
	code, stderr, out := render("--root", root)
	want := "files/secret.txt: a symbolic link to " + filepath.Join(outside, "secret.txt") + ", " + hint
	if code != exitInput || !strings.Contains(stderr, want) || strings.Contains(stderr+out, "top-secret") {
		t.Errorf("a file's link out of the root: exit %d: %s\nwant %s", code, stderr, want)
	}
	link(filepath.Join(outside, "more"), "crds")
	link(filepath.Join(root, "shared", "secret.txt"), "files/secret.txt")
	if code, stderr, _ := render("--root", root); code != exitInput || !strings.HasPrefix(stderr, "crds: a symbolic link to "+filepath.Join(outside, "more")) {
		t.Errorf("a directory's link out of the root: exit %d: %s", code, stderr)
	}
	link("../shared", "crds")
	if code, stderr, out := render("--root", root); code != 0 || !strings.Contains(out, "bs.example.com") || !strings.Contains(out, `leak: "shared\n"`) {
		t.Errorf("links inside the root: exit %d: %s\n%s", code, stderr, out)
	}
	t.Chdir(root) // the function names its charts relative to its directory
	var relErr bytes.Buffer
	if code := run([]string{"render", "--build", buildinfo.Version(), "--chart", "chart", "--out", t.TempDir(), "--root", "."}, &bytes.Buffer{}, &relErr); code != 0 {
		t.Errorf("relative to the root: exit %d: %s", code, relErr.String())
	}
	link("..", "crds")
	if code, stderr, _ := render("--root", root); code != exitInput || !strings.Contains(stderr, "a directory that holds it") {
		t.Errorf("a link to the chart: exit %d: %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(chart, "crds")); err != nil {
		t.Fatal(err)
	}
	if code, stderr, _ := render("--root", filepath.Join(root, "shared")); code != exitInput || !strings.HasPrefix(stderr, "in "+chart+", "+hint) {
		t.Errorf("a chart outside the root: exit %d: %s", code, stderr)
	}
}

// symlinks says whether this system lets the test make symbolic links
// (Windows needs a privilege for them).
func symlinks(t *testing.T) bool {
	dir := t.TempDir()
	return os.Symlink(dir, filepath.Join(dir, "link")) == nil
}

// The directory loader reads what Helm's reads: its .helmignore and
// default rules, a byte order mark dropped, subcharts, links followed.
func TestLoadDirAsHelm(t *testing.T) {
	dir := t.TempDir()
	top := writeChart(t, filepath.Join(dir, "c"), map[string]string{
		"Chart.yaml":                  "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		".helmignore":                 "*.bak\nignored/\n",
		"values.yaml":                 "\xEF\xBB\xBFa: 1\n",
		"crds/a.yaml":                 crd,
		"templates/b.yaml":            "{{ .Values.a }}\n",
		"templates/.hidden.yaml":      "{{ bad\n",
		"templates/c.yaml.bak":        "{{ bad\n",
		"ignored/x.yaml":              "x\n",
		"files/data.txt":              "data\n",
		"charts/sub/Chart.yaml":       "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
		"charts/sub/templates/s.yaml": "s\n",
	})
	writeChart(t, filepath.Join(dir, "linked"), map[string]string{"l.txt": "linked\n"})
	if symlinks(t) {
		if err := os.Symlink(filepath.Join(dir, "linked"), filepath.Join(top, "files", "linked")); err != nil {
			t.Fatal(err)
		}
	}
	want, err := loader.LoadDir(top)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadChart(top, dir)
	if err != nil {
		t.Fatal(err)
	}
	files := func(c *chart.Chart) []string {
		var out []string
		for _, f := range c.Raw {
			out = append(out, f.Name+"="+string(f.Data))
		}
		for _, d := range c.Dependencies() {
			for _, f := range d.Raw {
				out = append(out, d.Name()+":"+f.Name+"="+string(f.Data))
			}
		}
		return out
	}
	if g, w := strings.Join(files(got), "\n"), strings.Join(files(want), "\n"); g != w {
		t.Errorf("loaded:\n%s\nwant Helm's:\n%s", g, w)
	}
	if len(files(got)) < 7 {
		t.Errorf("loaded %d files", len(files(got)))
	}
}

// tgzEntry is an entry of a test archive.
type tgzEntry struct {
	name, data, link string
	kind             byte
}

// writeTgz writes a chart archive of the entries (regular files unless
// kind says otherwise).
func writeTgz(t *testing.T, entries ...tgzEntry) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: e.kind, Linkname: e.link}
		if e.kind == 0 {
			h.Typeflag = tar.TypeReg
		} else {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(e.data))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	p := filepath.Join(t.TempDir(), "c-1.0.0.tgz")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// An archive (a remote chart is one) is read in memory by Helm's loader:
// a symbolic or hard link in it is an empty file, never the file it
// names, and a name out of the archive's directory is refused. (Helm's
// behaviour, which the function's load restriction relies on: a guard.)
func TestArchiveLinks(t *testing.T) {
	get := strings.Replace(crd, "metadata:", "metadata:\n  annotations:\n    s: {{ .Files.Get \"files/s\" | quote }}\n    h: {{ .Files.Get \"files/h\" | quote }}", 1)
	head := []tgzEntry{{name: "c/Chart.yaml", data: "apiVersion: v2\nname: c\nversion: 1.0.0\n"}, {name: "c/templates/a.yaml", data: get}}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("top-secret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	tgz := writeTgz(t, append(head, tgzEntry{name: "c/files/s", kind: tar.TypeSymlink, link: secret},
		tgzEntry{name: "c/files/h", kind: tar.TypeLink, link: secret})...)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"render", "--build", buildinfo.Version(), "--chart", tgz, "--out", out, "--root", t.TempDir()}, &stdout, &stderr)
	data, _ := os.ReadFile(filepath.Join(out, "0.yaml"))
	if code != 0 || strings.Contains(string(data)+stderr.String(), "top-secret") || !strings.Contains(string(data), `s: ""`) || !strings.Contains(string(data), `h: ""`) {
		t.Errorf("links in an archive: exit %d: %s\n%s", code, stderr.String(), data)
	}
	for _, name := range []string{"c/../../escape.yaml", "c//abs.yaml"} {
		code, stderr := renderChart(t, writeTgz(t, append(head, tgzEntry{name: name, data: crd})...))
		if code != exitInput || !strings.Contains(stderr, "chart illegally") {
			t.Errorf("%s: exit %d: %s", name, code, stderr)
		}
	}
}

// A chart is bounded as it is loaded, archive or directory, its
// subcharts' archives included: the number of its files, the size of one
// and their size in all, decompressed. Past a bound, exit 2 naming it;
// Helm's loader held them all (a million empty files took 1.1 GB).
func TestChartBounds(t *testing.T) {
	defer func(files int, chart, file int64) { maxChartFiles, maxChartBytes, maxFileBytes = files, chart, file }(maxChartFiles, maxChartBytes, maxFileBytes)
	maxChartFiles, maxChartBytes, maxFileBytes = 20, 2<<20, 1<<20
	head := []tgzEntry{{name: "c/Chart.yaml", data: "apiVersion: v2\nname: c\nversion: 1.0.0\n"}, {name: "c/crds/a.yaml", data: crd}}
	many := func(prefix string, n int) []tgzEntry {
		var out []tgzEntry
		for i := range n {
			out = append(out, tgzEntry{name: fmt.Sprintf("%sfiles/%d.txt", prefix, i)})
		}
		return out
	}
	data := func(name string, size int) tgzEntry { return tgzEntry{name: name, data: strings.Repeat("#\n", size/2)} }
	var sub bytes.Buffer
	subArchive, err := os.ReadFile(writeTgz(t, append([]tgzEntry{{name: "sub/Chart.yaml", data: "apiVersion: v2\nname: sub\nversion: 1.0.0\n"}}, many("sub/", 25)...)...))
	if err != nil {
		t.Fatal(err)
	}
	sub.Write(subArchive)
	for _, tc := range []struct {
		name    string
		entries []tgzEntry
		want    string
	}{
		{"fits", append(head, append(many("c/", 10), data("c/files/big", 900<<10), data("c/files/big2", 900<<10))...), ""},
		{"too many files", append(head, many("c/", 25)...), "more than 20 files and directories, the most a chart may hold"},
		{"a file too large", append(head, data("c/files/big", 3<<19)), "files/big: larger than 1 MiB, the most a file of a chart may be"},
		{"too large in all", append(head, data("c/files/a", 900<<10), data("c/files/b", 900<<10), data("c/files/c", 900<<10)), "more than 2 MiB decompressed, the most a chart may be"},
		{"a subchart's archive", append(head, tgzEntry{name: "c/charts/sub-1.0.0.tgz", data: sub.String()}), "charts/sub-1.0.0.tgz: more than 20 files and directories"},
	} {
		tgz := writeTgz(t, tc.entries...)
		dir := t.TempDir()
		for _, e := range tc.entries {
			_, name, _ := strings.Cut(e.name, "/")
			writeChart(t, dir, map[string]string{name: e.data})
		}
		for _, chart := range []string{tgz, dir} {
			code, stderr := renderChart(t, chart)
			if tc.want == "" && code != 0 || tc.want != "" && (code != exitInput || !strings.HasPrefix(stderr, tc.want)) {
				t.Errorf("%s, %s: exit %d: %s", tc.name, chart, code, stderr)
			}
		}
	}
	// An archive made on Windows names its subchart's archive c\charts\sub.tgz, which Helm opens.
	windows := writeTgz(t, append(head, tgzEntry{name: `c\charts\sub-1.0.0.tgz`, data: sub.String()})...)
	if code, stderr := renderChart(t, windows); code != exitInput || !strings.HasPrefix(stderr, "charts/sub-1.0.0.tgz: more than 20 files") {
		t.Errorf("a subchart's archive named on Windows: exit %d: %s", code, stderr)
	}
}

// crd-helm's own errors are one line each: a chart's message cannot pass
// for the trace of a goroutine that kubectl-crd reads as a crash.
func TestErrorsOneLine(t *testing.T) {
	chart := writeChart(t, t.TempDir(), map[string]string{"Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"templates/t.yaml": `{{ fail "a\n\ngoroutine 1 [running]:\nmain.main()" }}`})
	code, stderr := renderChart(t, chart)
	if code != exitInput || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `a\n\ngoroutine 1 [running]:\nmain.main()`) {
		t.Errorf("exit %d: %q", code, stderr)
	}
}
