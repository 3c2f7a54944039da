package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bombChart is the keda corpus chart (crdsChart) with a template that is
// code without end: it holds more and more memory, or takes ever longer.
func bombChart(t *testing.T, tmpl string) string {
	local := t.TempDir()
	files, _ := ociCorpus(t, "keda@v2.21.0", local)
	c := crdsChart("1.0.0", files)
	c["templates/bomb.yaml"] = []byte(tmpl)
	return c.dir(t, filepath.Join(t.TempDir(), "keda"))
}

// Templates doubling a string forty times, or ranging to 2000000000, ran
// the machine out of memory and died with a goroutine dump. With a bound
// of 64 MiB ($KUBECTL_CRD_HELM_MEMORY), both end within seconds, in one
// line of ours, exit 2, from the plugin and the function; a chart of the
// same CRDs without the template renders within it.
func TestSourceHelmMemoryBound(t *testing.T) {
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir(), "KUBECTL_CRD_HELM_MEMORY=64")
	widget := filepath.Join(repoRoot(), "examples", "krm", "widget.yaml")
	for _, tmpl := range []string{
		`{{- $s := "x" }}{{- range until 40 }}{{- $s = printf "%s%s" $s $s }}{{- end }}{{ $s }}`,
		`{{- range until 2000000000 }}x{{- end }}`,
	} {
		chart := bombChart(t, tmpl)
		want := chart + ": rendering the chart used more than 64 MiB of memory, the bound: it was stopped"
		start := time.Now()
		r := x.Run("kubectl-crd", "prune", "--offline", "--crd-file", chart, "-f", widget)
		if r.Code != 2 || r.Stdout != "" || r.Stderr != "error: "+want+"\n" {
			t.Errorf("%s: exit %d\n%s\n%.3000s\nwant: %s", tmpl, r.Code, r.Stdout, r.Stderr, want)
		}
		config := standaloneConfig(t, t.TempDir(), "check.yaml", chart, "")
		r = x.Run("kubectl-crd", "krm", config, widget)
		if r.Code != 2 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, want) {
			t.Errorf("%s, the function: exit %d\n%s\n%.3000s\nwant: %s", tmpl, r.Code, r.Stdout, r.Stderr, want)
		}
		if d := time.Since(start); d > time.Minute {
			t.Errorf("%s: stopped after %v", tmpl, d)
		}
	}
	r := x.Run("kubectl-crd", "prune", "--offline", "--crd-file", bombChart(t, "# none\n"), "-f", widget)
	if r.Code == 2 || strings.Contains(r.Stderr, "rendering the chart") {
		t.Errorf("within the bound: exit %d\n%s", r.Code, r.Stderr)
	}
}

// A chart whose Chart.yaml names dependencies missing from its charts/
// is refused as helm install refuses it, naming them and `helm
// dependency build`, exit 2: it was rendered without them.
func TestSourceHelmMissingDependencies(t *testing.T) {
	local := t.TempDir()
	files, crs := ociCorpus(t, "keda@v2.21.0", local)
	c := crdsChart("1.0.0", files)
	c["Chart.yaml"] = []byte("apiVersion: v2\nname: keda\nversion: 1.0.0\ndependencies:\n- name: redis-ha\n  version: 4.x\n  repository: https://dandydeveloper.github.io/charts\n")
	chart := c.dir(t, filepath.Join(t.TempDir(), "keda"))
	r := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir()).Run("kubectl-crd", pruneArgs(chart, crs, "--offline")...)
	want := "error: " + chart + ": the chart's dependencies: found in Chart.yaml, but missing in charts/ directory: redis-ha; 'helm dependency build' fetches them\n"
	if r.Code != 2 || r.Stderr != want {
		t.Errorf("exit %d\n%s\nwant: %s", r.Code, r.Stderr, want)
	}
}
