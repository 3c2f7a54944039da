package source

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The forms of a chart: on disk by its Chart.yaml or its .tgz, by URL as
// an archive or a repository's chart named by the fragment.
func TestChartForms(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, "app")
	os.MkdirAll(chart, 0o755)
	os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("name: app\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "app-1.0.0.tgz"), []byte("x"), 0o600)
	for arg, want := range map[string]bool{chart: true, filepath.Join(dir, "app-1.0.0.tgz"): true, dir: false,
		filepath.Join(dir, "missing.tgz"): false, "https://example.com/app.tgz": false} {
		if got := IsChart(arg); got != want {
			t.Errorf("IsChart(%s) = %v", arg, got)
		}
	}
	for arg, want := range map[string]any{"https://example.com/crds.yaml": httpsKind{}, "https://example.com/app-1.0.0.tgz": helmArchiveKind{},
		"https://charts.example.com#app@1.0.0": helmRepoKind{}, "https://charts.example.com/stable#app": helmRepoKind{}, "oci://r.example/app:1": ociKind{},
		// A file's fragment, a line of a repository's web view, names no chart.
		"https://raw.githubusercontent.com/org/repo/v1/crd.yaml#L10": httpsKind{}, "https://example.com/crds.JSON#x": httpsKind{},
		"https://example.com/v1/crds.yml#L1-L9": httpsKind{}} {
		if got, err := kindOf(arg); err != nil || got != want {
			t.Errorf("kindOf(%s) = %T %v, want %T", arg, got, err, want)
		}
	}
	// What may be a chart by its form: an oci:// reference is one or a plain
	// artifact, as its manifest says; a URL of a file is none.
	for arg, want := range map[string]bool{chart: true, filepath.Join(dir, "app-1.0.0.tgz"): true, dir: false,
		"https://example.com/app-1.0.0.tgz": true, "https://charts.example.com#app@1.0.0": true, "https://u:p@charts.example.com/stable#app": true,
		"oci://r.example/charts/app:1.0.0": true, "oci://r.example/crds@sha256:" + strings.Repeat("0", 64): true,
		"https://example.com/crds.yaml": false, "https://example.com/crd.yaml#L10": false, "https://example.com/objects": false,
		"ftp://example.com/app.tgz": false, "-": false} {
		if got := MayBeChart(arg); got != want {
			t.Errorf("MayBeChart(%s) = %v", arg, got)
		}
	}
	u, _ := url.Parse("https://charts.example.com/stable#app@v1.2.0")
	if !isChartURL(u) {
		t.Errorf("a repository's chart is not a chart")
	}
	repo, user, chartName, version, err := repoChart("https://u:p@charts.example.com/stable#app@v1.2.0")
	if err != nil || repo.String() != "https://charts.example.com/stable" || user.String() != "u:p" || chartName != "app" || version != "v1.2.0" {
		t.Errorf("repoChart = %v %v %q %q %v", repo, user, chartName, version, err)
	}
	if _, _, _, _, err := repoChart("https://charts.example.com#@1.0.0"); err == nil {
		t.Errorf("a repository without a chart's name is taken")
	}
}
