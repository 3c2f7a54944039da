package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// helmChart is a chart's files by their path in it.
type helmChart map[string][]byte

// crdsChart is a chart with the corpus CRDs in crds/, as Helm installs
// them before the templates.
func crdsChart(version string, files []ociFile) helmChart {
	c := helmChart{"Chart.yaml": []byte("apiVersion: v2\nname: keda\nversion: " + version + "\n"),
		"templates/service.yaml": []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n")}
	for _, f := range files {
		c["crds/"+f.title] = f.data
	}
	return c
}

// gatedChart is a chart with the CRDs in a template behind a value, as
// cert-manager's crds.enabled: off by default.
func gatedChart(bundle []byte) helmChart {
	return helmChart{"Chart.yaml": []byte("apiVersion: v2\nname: gated\nversion: 1.0.0\n"),
		"values.yaml":         []byte("crds:\n  enabled: false\n"),
		"files/crds.yaml":     bundle,
		"templates/crds.yaml": []byte(`{{- if .Values.crds.enabled }}{{ .Files.Get "files/crds.yaml" }}{{- end }}`)}
}

// dir writes the chart into a directory.
func (c helmChart) dir(t *testing.T, dir string) string {
	for p, data := range c {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tgz is the chart's archive, as helm package writes it: every file
// under a directory of the chart's name.
func (c helmChart) tgz(t *testing.T, chartName string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	var paths []string
	for p := range c {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := tw.WriteHeader(&tar.Header{Name: chartName + "/" + p, Mode: 0o644, Size: int64(len(c[p])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(c[p])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

// pushChart pushes a chart's archive as helm push does (Helm's config
// media type, a layer of the archive), and returns its oci:// reference.
func (r *ociRegistry) pushChart(t *testing.T, repoTag string, archive []byte) string {
	t.Helper()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), "application/vnd.cncf.helm.config.v1+json")
	mt := types.MediaType("application/vnd.cncf.helm.chart.content.v1.tar+gzip")
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(archive, mt), MediaType: mt})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, r.auth); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return "oci://" + ref.String()
}

// repoIndex is a chart repository's index.yaml for the archives of a
// chart by version, at the URLs given, with their digests.
func repoIndex(chart string, archives map[string][]byte, urls map[string]string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n  " + chart + ":\n")
	for v, data := range archives {
		sum := sha256.Sum256(data)
		b.WriteString("  - name: " + chart + "\n    version: " + v + "\n    digest: " + hex.EncodeToString(sum[:]) + "\n    urls:\n    - " + urls[v] + "\n")
	}
	return []byte(b.String())
}

// sameChartRun fails unless two runs print the same, once the names of
// the chart's files are those of the local files: "src (crds/a.yaml)"
// is local/a.yaml, "src (templates/crds.yaml)" is the local bundle.
func sameChartRun(t *testing.T, what string, got, want Result, src, local string, bundle bool) {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(src) + ` \(crds/([^)]*)\)`)
	norm := func(s string) string {
		if bundle {
			return strings.ReplaceAll(s, src+" (templates/crds.yaml)", local)
		}
		return re.ReplaceAllString(s, strings.ReplaceAll(local, "$", "$$")+"/$1")
	}
	if got.Code != want.Code || norm(got.Stdout) != want.Stdout || norm(got.Stderr) != want.Stderr {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s\nwant stdout:\n%s\nwant stderr:\n%s",
			what, got.Code, want.Code, got.Stdout, got.Stderr, want.Stdout, want.Stderr)
	}
}

// Helm charts of corpus CRDs, in each form: a directory and a .tgz on
// disk, a .tgz by https URL, a chart repository (index.yaml over HTTPS)
// and an OCI registry. Each gives the verdicts of the same CRDs as local
// files (-o json); a rerun with the servers stopped gives the same bytes
// from the cache; the lock holds the version the repository resolved.
func TestSourceHelm(t *testing.T) {
	local := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", local)
	var bundle []byte
	for _, f := range files {
		bundle = append(append(bundle, "---\n"...), f.data...)
	}
	bundleFile := filepath.Join(t.TempDir(), "crds.yaml")
	if err := os.WriteFile(bundleFile, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	json := []string{"-o", "json"}
	want := NewTest(t).Run("kubectl-crd", pruneArgs(local, crs, json...)...)
	wantBundle := NewTest(t).Run("kubectl-crd", pruneArgs(bundleFile, crs, json...)...)
	if want.Code > 1 || want.Stdout == "" || wantBundle.Stdout == "" {
		t.Fatalf("local: exit %d\n%s", want.Code, want.Stderr)
	}
	tmp := t.TempDir()
	chartDir := crdsChart("1.1.0", files).dir(t, filepath.Join(tmp, "keda"))
	gatedTgz := filepath.Join(tmp, "gated-1.0.0.tgz")
	if err := os.WriteFile(gatedTgz, gatedChart(bundle).tgz(t, "gated"), 0o600); err != nil {
		t.Fatal(err)
	}
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	sameChartRun(t, "a chart directory", x.Run("kubectl-crd", pruneArgs(chartDir, crs, json...)...), want, chartDir, local, false)
	on := append([]string{"--set", "crds.enabled=true"}, json...)
	sameChartRun(t, "a .tgz, --set", x.Run("kubectl-crd", pruneArgs(gatedTgz, crs, on...)...), wantBundle, gatedTgz, bundleFile, true)

	// Off by default: no CRD, and the objects are missing theirs (offline:
	// the test cluster, which other tests give keda's CRDs at times, is
	// not asked for them), which fails the run closed.
	off := x.Run("kubectl-crd", pruneArgs(gatedTgz, crs, append([]string{"--offline"}, json...)...)...)
	if off.Code != 1 || !strings.Contains(off.Stderr, "no CustomResourceDefinition for keda.sh/v1alpha1") || strings.Contains(off.Stderr, "would refuse") {
		t.Fatalf("gated off: exit %d\n%s\n%s", off.Code, off.Stdout, off.Stderr)
	}

	srv := newFileServer(t)
	old := crdsChart("1.0.0", files).tgz(t, "keda")
	newest := crdsChart("1.1.0", files).tgz(t, "keda")
	tgzURL := srv.put("/archives/keda-1.1.0.tgz", newest)
	srv.put("/charts/keda-1.0.0.tgz", old)
	srv.put("/charts/keda-1.1.0.tgz", newest)
	srv.put("/charts/index.yaml", repoIndex("keda", map[string][]byte{"1.0.0": old, "1.1.0": newest},
		map[string]string{"1.0.0": "keda-1.0.0.tgz", "1.1.0": srv.URL + "/charts/keda-1.1.0.tgz"}))
	repo := srv.URL + "/charts#keda"
	reg := newOCIRegistry(t, false)
	ociRef := reg.pushChart(t, "charts/gated:1.0.0", gatedChart(bundle).tgz(t, "gated"))
	values := filepath.Join(tmp, "values.yaml")
	if err := os.WriteFile(values, []byte("crds:\n  enabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	lock := filepath.Join(tmp, "kubectl-crd.lock")
	ca := "--source-certificate-authority=" + srv.caFile
	locked := []string{ca, "--lock", lock, "--update-lock", "--values", values, "-o", "json"}
	byURL := x.Run("kubectl-crd", pruneArgs(tgzURL, crs, locked...)...)
	sameChartRun(t, "a .tgz by URL", byURL, want, tgzURL, local, false)
	byRepo := x.Run("kubectl-crd", pruneArgs(repo, crs, locked...)...)
	sameChartRun(t, "a chart repository", byRepo, want, repo, local, false)
	byOCI := x.Run("kubectl-crd", pruneArgs(ociRef, crs, locked...)...)
	sameChartRun(t, "an OCI chart, --values", byOCI, wantBundle, ociRef, bundleFile, true)
	data, err := os.ReadFile(lock)
	sum := sha256.Sum256(newest)
	pin := "- digest: sha256:" + hex.EncodeToString(sum[:]) + "\n  resolved: " + srv.URL + "/charts/keda-1.1.0.tgz\n  source: " + repo + "\n  version: 1.1.0\n"
	if err != nil || !strings.Contains(string(data), pin) || !strings.Contains(string(data), "source: "+ociRef+"\n") {
		t.Fatalf("lock (%v):\n%s\nwant:\n%s", err, data, pin)
	}
	pinned := x.Run("kubectl-crd", pruneArgs(repo+"@1.0.0", crs, ca, "-o", "json")...)
	if pinned.Code > 1 {
		t.Fatalf("version 1.0.0: exit %d\n%s", pinned.Code, pinned.Stderr)
	}

	srv.Close() // the network cut: the cache answers, the charts render again
	reg.Close()
	for _, run := range []struct {
		src  string
		want Result
	}{{tgzURL, byURL}, {repo, byRepo}, {ociRef, byOCI}} {
		r := x.Run("kubectl-crd", pruneArgs(run.src, crs, "--lock", lock, "--values", values, "-o", "json")...)
		sameRun(t, run.src+" by the lock", r, run.want, run.src, run.src)
		r = x.Run("kubectl-crd", pruneArgs(run.src, crs, "--offline", "--values", values, "-o", "json")...)
		if r.Stdout != run.want.Stdout || r.Code != run.want.Code {
			t.Fatalf("%s offline: exit %d\n%s\n%s", run.src, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// The chart of a version is replaced in the repository under the lock:
// exit 2, naming the source; an index.yaml whose digest is not the
// archive's is refused.
func TestSourceHelmChangedDigest(t *testing.T) {
	local := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", local)
	srv := newFileServer(t)
	first := crdsChart("1.0.0", files).tgz(t, "keda")
	srv.put("/keda-1.0.0.tgz", first)
	srv.put("/index.yaml", repoIndex("keda", map[string][]byte{"1.0.0": first}, map[string]string{"1.0.0": "keda-1.0.0.tgz"}))
	repo := srv.URL + "#keda@1.0.0"
	lock := filepath.Join(t.TempDir(), "kubectl-crd.lock")
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	ca := "--source-certificate-authority=" + srv.caFile
	if r := x.Run("kubectl-crd", pruneArgs(repo, crs, ca, "--lock", lock, "--update-lock")...); r.Code > 1 {
		t.Fatalf("first: exit %d\n%s", r.Code, r.Stderr)
	}
	second := crdsChart("1.0.0", files[1:]).tgz(t, "keda")
	srv.put("/keda-1.0.0.tgz", second)
	srv.put("/index.yaml", repoIndex("keda", map[string][]byte{"1.0.0": second}, map[string]string{"1.0.0": "keda-1.0.0.tgz"}))
	cold := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	r := cold.Run("kubectl-crd", pruneArgs(repo, crs, ca, "--lock", lock)...)
	if r.Code != 2 || !strings.Contains(r.Stderr, repo+": digest sha256:") || !strings.Contains(r.Stderr, "the source changed") {
		t.Fatalf("changed: exit %d\n%s", r.Code, r.Stderr)
	}
	srv.put("/index.yaml", repoIndex("keda", map[string][]byte{"1.0.0": first}, map[string]string{"1.0.0": "keda-1.0.0.tgz"}))
	r = cold.Run("kubectl-crd", pruneArgs(repo, crs, ca)...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "of the repository's index.yaml") {
		t.Fatalf("index digest: exit %d\n%s", r.Code, r.Stderr)
	}
}

// Without crd-helm beside kubectl-crd nor in PATH, a chart is an error
// (exit 2) naming where it was looked for; $KUBECTL_CRD_HELM finds it.
func TestSourceHelmCompanion(t *testing.T) {
	x := NewTest(t)
	local := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", local)
	chartDir := crdsChart("1.0.0", files).dir(t, filepath.Join(t.TempDir(), "keda"))
	alone := filepath.Join(t.TempDir(), "kubectl-crd")
	data, err := os.ReadFile(filepath.Join(binDir, "kubectl-crd"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	x.WithEnv("PATH=" + filepath.Dir(alone))
	r := x.Run(alone, pruneArgs(chartDir, crs)...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "crd-helm") || !strings.Contains(r.Stderr, filepath.Join(filepath.Dir(alone), "crd-helm")+" nor in PATH") {
		t.Fatalf("no companion: exit %d\n%s", r.Code, r.Stderr)
	}
	r = x.WithEnv("KUBECTL_CRD_HELM="+filepath.Join(binDir, "crd-helm")).Run(alone, pruneArgs(chartDir, crs)...)
	if r.Code > 1 {
		t.Fatalf("$KUBECTL_CRD_HELM: exit %d\n%s", r.Code, r.Stderr)
	}
}

// The KRM function with a chart directory among crdPaths and its gate in
// chartValues: the results of the same CRDs as a file; without the value,
// the objects miss their CRDs.
func TestSourceHelmKRM(t *testing.T) {
	bundle, crs := sourceBundle(t, "keda@v2.21.0")
	dir := t.TempDir()
	local := filepath.Join(dir, "crds.yaml")
	if err := os.WriteFile(local, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	chartDir := gatedChart(bundle).dir(t, filepath.Join(dir, "gated"))
	config := func(name, crdPath, extra string) string { return standaloneConfig(t, dir, name, crdPath, extra) }
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	want := x.Run("kubectl-crd", append([]string{"krm", config("local.yaml", local, "")}, crs...)...)
	if want.Stdout == "" && want.Stderr == "" {
		t.Fatalf("local: exit %d, no output", want.Code)
	}
	got := x.Run("kubectl-crd", append([]string{"krm", config("chart.yaml", chartDir, "chartValues: {crds: {enabled: true}}\n")}, crs...)...)
	sameRun(t, "a chart", got, want, chartDir+" (templates/crds.yaml)", local)
	off := x.Run("kubectl-crd", append([]string{"krm", config("off.yaml", chartDir, "")}, crs...)...)
	if off.Code == 0 || !strings.Contains(off.Stdout+off.Stderr, "no CustomResourceDefinition for") || strings.Contains(off.Stdout+off.Stderr, "invalid") {
		t.Fatalf("gated off: exit %d\n%s\n%s", off.Code, off.Stdout, off.Stderr)
	}
}

// A chart repository behind basic authentication and a certificate
// authority of its own, as `helm repo add --username --password
// --ca-file` records it in Helm's repository configuration: the source
// takes both from the entry of its URL (HELM_REPOSITORY_CONFIG), as
// helm does; the password is in no output. Without the entry the
// repository refuses the source (exit 2, the server's 401).
func TestSourceHelmRepositoryConfig(t *testing.T) {
	local := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", local)
	want := NewTest(t).Run("kubectl-crd", pruneArgs(local, crs, "-o", "json")...)
	if want.Code > 1 || want.Stdout == "" {
		t.Fatalf("local: exit %d\n%s", want.Code, want.Stderr)
	}
	srv := newFileServer(t)
	archive := crdsChart("1.0.0", files).tgz(t, "keda")
	srv.put("/private/keda-1.0.0.tgz", archive)
	srv.put("/private/index.yaml", repoIndex("keda", map[string][]byte{"1.0.0": archive}, map[string]string{"1.0.0": "keda-1.0.0.tgz"}))
	repo := srv.URL + "/private#keda@1.0.0"
	config := filepath.Join(t.TempDir(), "repositories.yaml")
	entry := fmt.Sprintf("apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n"+
		"- name: other\n  url: https://example.invalid/charts\n  username: nobody\n  password: nothing\n"+
		"- name: private\n  url: %s/private/\n  username: user\n  password: secret\n  caFile: %s\n"+
		"  certFile: \"\"\n  keyFile: \"\"\n  insecure_skip_tls_verify: false\n  pass_credentials_all: false\n", srv.URL, srv.caFile)
	if err := os.WriteFile(config, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir(), "HELM_REPOSITORY_CONFIG="+config)
	r := x.Run("kubectl-crd", pruneArgs(repo, crs, "-o", "json")...)
	sameChartRun(t, "a repository of Helm's configuration", r, want, repo, local, false)
	if strings.Contains(r.Stdout+r.Stderr, "user:secret") { // (the samples hold "secret" of their own)
		t.Errorf("the password is in the output:\n%s\n%s", r.Stdout, r.Stderr)
	}
	none := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir(), "HELM_REPOSITORY_CONFIG="+filepath.Join(t.TempDir(), "none.yaml"))
	r = none.Run("kubectl-crd", pruneArgs(repo, crs, "--source-certificate-authority", srv.caFile)...)
	if r.Code != 2 || !strings.Contains(r.Stderr, repo+": the server answered 401 Unauthorized") {
		t.Errorf("without the entry: exit %d\n%s", r.Code, r.Stderr)
	}
	if err := os.WriteFile(config, []byte("repositories: {"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = x.Run("kubectl-crd", pruneArgs(repo, crs)...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "Helm's repository configuration "+config) {
		t.Errorf("a configuration that cannot be read: exit %d\n%s", r.Code, r.Stderr)
	}
}
