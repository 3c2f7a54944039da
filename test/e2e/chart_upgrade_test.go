package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The widgets chart (examples/helm) in three versions: 1.1.0 adds an
// optional field (safe), 2.0.0 renames color to paint and caps size
// (DataLoss for every widget, Invalid for the large one); its CRD is a
// template behind crds.enabled, so that --set must reach both charts.
const (
	widgetsV1  = "examples/helm/widgets"
	widgetsV11 = "examples/helm/widgets-1.1"
	widgetsV2  = "examples/helm/widgets-2.0"
	widgets    = "examples/helm/objects"
)

// exampleChart is a chart directory of the repository, its files by path.
func exampleChart(t *testing.T, dir string) helmChart {
	t.Helper()
	c := helmChart{}
	root := filepath.Join(repoRoot(), dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		c[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hurtObjects are the objects of check-update's "Objects hurt:" lines.
func hurtObjects(stdout string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^    (Widget \S+): `).FindAllStringSubmatch(stdout, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// chartUpgrade runs check-update of a chart pair and fails unless it exits
// code naming exactly the objects hurt.
func chartUpgrade(t *testing.T, x *Test, what string, code int, hurt []string, args ...string) Result {
	t.Helper()
	r := x.Run("kubectl-crd", append([]string{"check-update"}, args...)...)
	if r.Code != code || !strings.HasPrefix(r.Stdout, "CustomResourceDefinition widgets.example.com (") {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.Code, code, r.Stdout, r.Stderr)
	}
	if diff := cmp.Diff(hurt, hurtObjects(r.Stdout)); diff != "" {
		t.Fatalf("%s: the objects hurt (-want +got):\n%s\nstdout:\n%s", what, diff, r.Stdout)
	}
	return r
}

// sameUpgrade fails unless a run of a chart pair prints what the run of
// the same charts as directories printed, once the sources are named
// alike.
func sameUpgrade(t *testing.T, what string, got, want Result, old, new string) {
	t.Helper()
	norm := strings.NewReplacer(old+" (", widgetsV1+" (", new+" (", "NEW (").Replace
	wantNorm := strings.NewReplacer(widgetsV2+" (", "NEW (", widgetsV11+" (", "NEW (").Replace
	if got.Code != want.Code || norm(got.Stdout) != wantNorm(want.Stdout) || norm(got.Stderr) != wantNorm(want.Stderr) {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s\nwant stdout:\n%s\nwant stderr:\n%s",
			what, got.Code, want.Code, got.Stdout, got.Stderr, want.Stdout, want.Stderr)
	}
}

// Chart to chart, in every form of chart: --old CHART@X -f CHART@Y with
// the values applied to both, against the widgets of --objects. The
// breaking pair exits 1 naming both widgets, the safe one exits 0; a
// directory, a .tgz on disk, an OCI chart (locked, then read from the
// cache with the registry stopped), a chart repository and a .tgz by
// https URL print the same. A plain OCI artifact is no chart: refused.
func TestCheckUpdateChartToChart(t *testing.T) {
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	on := []string{"--set", "crds.enabled=true", "--objects", widgets}
	both := []string{"Widget team-a/small", "Widget team-b/large"}
	pair := func(old, new string, extra ...string) []string {
		return append(append([]string{"--old", old, "-f", new}, on...), extra...)
	}
	breaking := chartUpgrade(t, x, "directories, 1.0.0 to 2.0.0", 1, both, pair(widgetsV1, widgetsV2)...)
	safe := chartUpgrade(t, x, "directories, 1.0.0 to 1.1.0", 0, nil, pair(widgetsV1, widgetsV11)...)
	if !strings.Contains(safe.Stdout, "2 objects checked, 0 hurt") {
		t.Fatalf("the safe pair checked no object:\n%s", safe.Stdout)
	}
	// Without the value neither chart renders its CRD: nothing to compare
	// the objects of --objects with is an error, not a pass.
	off := x.Run("kubectl-crd", "check-update", "--old", widgetsV1, "-f", widgetsV2, "--objects", widgets)
	if off.Code != 2 || !strings.Contains(off.Stderr, "Warning: -f "+widgetsV2+": the chart renders no CustomResourceDefinition") {
		t.Fatalf("no value: exit %d\n%s\n%s", off.Code, off.Stdout, off.Stderr)
	}

	tmp := t.TempDir()
	charts := map[string]helmChart{"1.0.0": exampleChart(t, widgetsV1), "1.1.0": exampleChart(t, widgetsV11), "2.0.0": exampleChart(t, widgetsV2)}
	archives := map[string][]byte{}
	for v, c := range charts {
		archives[v] = c.tgz(t, "widgets")
		if err := os.WriteFile(filepath.Join(tmp, "widgets-"+v+".tgz"), archives[v], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tgz := func(v string) string { return filepath.Join(tmp, "widgets-"+v+".tgz") }
	sameUpgrade(t, ".tgz on disk, breaking", x.Run("kubectl-crd", append([]string{"check-update"}, pair(tgz("1.0.0"), tgz("2.0.0"))...)...), breaking, tgz("1.0.0"), tgz("2.0.0"))
	sameUpgrade(t, ".tgz on disk, safe", x.Run("kubectl-crd", append([]string{"check-update"}, pair(tgz("1.0.0"), tgz("1.1.0"))...)...), safe, tgz("1.0.0"), tgz("1.1.0"))

	reg := newOCIRegistry(t, false)
	oci := map[string]string{}
	for v, a := range archives {
		oci[v] = reg.pushChart(t, "charts/widgets:"+v, a)
	}
	lock := filepath.Join(tmp, "kubectl-crd.lock")
	locked := []string{"--lock", lock, "--update-lock"}
	got := x.Run("kubectl-crd", append([]string{"check-update"}, pair(oci["1.0.0"], oci["2.0.0"], locked...)...)...)
	sameUpgrade(t, "OCI, breaking", got, breaking, oci["1.0.0"], oci["2.0.0"])
	got = x.Run("kubectl-crd", append([]string{"check-update"}, pair(oci["1.0.0"], oci["1.1.0"], locked...)...)...)
	sameUpgrade(t, "OCI, safe", got, safe, oci["1.0.0"], oci["1.1.0"])
	data, err := os.ReadFile(lock)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		if err != nil || !strings.Contains(string(data), "source: "+oci[v]+"\n") {
			t.Fatalf("the lock (%v) does not pin %s:\n%s", err, oci[v], data)
		}
	}
	plain, _ := reg.push(t, "crds/widgets:2.0.0", []ociFile{{"crd.yaml", charts["2.0.0"]["templates/crd.yaml"]}})
	r := x.Run("kubectl-crd", append([]string{"check-update"}, pair(oci["1.0.0"], plain)...)...)
	if want := "error: -f " + plain + ": not a Helm chart (a plain OCI artifact)"; r.Code != 2 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, want) {
		t.Fatalf("a plain artifact: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %s", r.Code, r.Stdout, r.Stderr, want)
	}
	reg.Close() // the cache answers, by the lock
	got = x.Run("kubectl-crd", append([]string{"check-update", "--offline"}, pair(oci["1.0.0"], oci["2.0.0"], "--lock", lock)...)...)
	sameUpgrade(t, "OCI offline, by the lock", got, breaking, oci["1.0.0"], oci["2.0.0"])

	srv := newFileServer(t)
	urls := map[string]string{}
	for v, a := range archives {
		urls[v] = srv.put("/charts/widgets-"+v+".tgz", a)
	}
	srv.put("/charts/index.yaml", repoIndex("widgets", archives, urls))
	ca := "--source-certificate-authority=" + srv.caFile
	repo := func(v string) string { return srv.URL + "/charts#widgets@" + v }
	got = x.Run("kubectl-crd", append([]string{"check-update"}, pair(repo("1.0.0"), repo("2.0.0"), ca)...)...)
	sameUpgrade(t, "a chart repository, breaking", got, breaking, repo("1.0.0"), repo("2.0.0"))
	got = x.Run("kubectl-crd", append([]string{"check-update"}, pair(urls["1.0.0"], urls["1.1.0"], ca)...)...)
	sameUpgrade(t, ".tgz by URL, safe", got, safe, urls["1.0.0"], urls["1.1.0"])
}

// Chart to chart against the live cluster's objects: the widgets created
// with the chart's 1.0.0 CRD, the 2.0.0 chart from the OCI registry hurts
// both, whether the old CRD is the 1.0.0 chart's or the cluster's own; the
// 1.1.0 chart hurts none. Then the 2.0.0 CRD applied: the server does what
// the report said (small has lost its color, large's manifest is refused).
func TestCheckUpdateChartToChartLive(t *testing.T) {
	requireOwnCluster(t) // it creates a CRD
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	k := kubectls[0].Path
	kubectl := func(args ...string) Result {
		t.Helper()
		r := x.Run(k, args...)
		if r.Code != 0 {
			t.Fatalf("kubectl %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r
	}
	crd := filepath.Join(repoRoot(), widgetsV1, "templates", "crd.yaml") // YAML as it is: its template lines are comments
	kubectl("apply", "-f", crd)
	t.Cleanup(func() { x.Run(k, "delete", "--ignore-not-found", "crd/widgets.example.com") })
	kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/widgets.example.com")
	kubectl("create", "-f", filepath.Join(repoRoot(), widgets)) // the test API server has no namespaces to create first

	reg := newOCIRegistry(t, false)
	oci := map[string]string{}
	for _, v := range []struct{ version, dir string }{{"1.0.0", widgetsV1}, {"1.1.0", widgetsV11}, {"2.0.0", widgetsV2}} {
		oci[v.version] = reg.pushChart(t, "charts/widgets:"+v.version, exampleChart(t, v.dir).tgz(t, "widgets"))
	}
	set := []string{"--set", "crds.enabled=true"}
	both := []string{"Widget team-a/small", "Widget team-b/large"}
	chartUpgrade(t, x, "OCI 1.0.0 to 2.0.0, the cluster's objects", 1, both, append([]string{"--old", oci["1.0.0"], "-f", oci["2.0.0"]}, set...)...)
	r := chartUpgrade(t, x, "the cluster's CRD to OCI 2.0.0", 1, both, append([]string{"-f", oci["2.0.0"]}, set...)...)
	if !strings.Contains(r.Stdout, "replacing the cluster's): ") || !strings.Contains(r.Stdout, "2 objects checked, 2 hurt") {
		t.Fatalf("the cluster's CRD: %s", r.Stdout)
	}
	chartUpgrade(t, x, "OCI 1.0.0 to 1.1.0, the cluster's objects", 0, nil, append([]string{"--old", oci["1.0.0"], "-f", oci["1.1.0"]}, set...)...)
	chartUpgrade(t, x, "the cluster's CRD to 1.1.0, a directory", 0, nil, append([]string{"-f", widgetsV11}, set...)...)

	// The upgrade, really.
	kubectl("apply", "-f", filepath.Join(repoRoot(), widgetsV2, "templates", "crd.yaml"))
	kubectl("wait", "--for=jsonpath={.spec.paint}=blue", "--timeout=60s", "-n", "team-a", "widget/small")
	if got := kubectl("get", "-n", "team-a", "widget/small", "-o", "jsonpath={.spec}").Stdout; strings.Contains(got, "color") {
		t.Errorf("small kept its color under the 2.0.0 CRD: %s", got)
	}
	refused := x.Run(k, "create", "--dry-run=server", "-f", filepath.Join(repoRoot(), widgets, "large.yaml"))
	if refused.Code == 0 || !strings.Contains(refused.Stderr, "spec.size") {
		t.Errorf("large's manifest under the 2.0.0 CRD: exit %d\n%s", refused.Code, refused.Stderr)
	}
}
