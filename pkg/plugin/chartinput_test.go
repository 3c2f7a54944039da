package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/source"
)

// chartDir writes a chart directory: a Chart.yaml, and crd as its
// templates/crd.yaml when not "".
func chartDir(t *testing.T, dir, crd string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: app\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if crd != "" {
		if err := os.WriteFile(filepath.Join(dir, "templates", "crd.yaml"), []byte(crd), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The arguments of -f: with charts (check-update), a chart in every form
// is one, whatever else is a path, and a URL that is no chart's is refused
// as before; without (every other command), a chart on disk is refused
// too, saying how to give it rendered, and every URL.
func TestFormOf(t *testing.T) {
	dir := t.TempDir()
	chart := chartDir(t, filepath.Join(dir, "app"), "")
	tgz := filepath.Join(dir, "app-1.0.0.tgz")
	if err := os.WriteFile(tgz, []byte("an archive"), 0o600); err != nil {
		t.Fatal(err)
	}
	urlRefused := func(name, shown string) string {
		return "-f " + shown + ": -f reads files, directories and standard input (-), not URLs: give a remote object through standard input, e.g. curl -fsSL URL | kubectl crd check-update -f -"
	}
	chartRefused := func(name string) string {
		return "-f " + name + ": a Helm chart: -f reads files, directories and standard input (-), not charts: give it the chart rendered, e.g. helm template --include-crds " + name + " | kubectl crd check-update -f -"
	}
	for _, tc := range []struct {
		name   string
		charts bool
		want   inputForm
		err    string
	}{
		{"-", true, pathInput, ""},
		{exampleJob, true, pathInput, ""},
		{dir, true, pathInput, ""}, // a directory without Chart.yaml, charts in it or not
		{filepath.Join(dir, "missing.tgz"), true, pathInput, ""},
		{chart, true, chartInput, ""},
		{tgz, true, chartInput, ""},
		{"https://charts.example.com#app@1.0.0", true, chartInput, ""},
		{"https://charts.example.com/stable#app", true, chartInput, ""},
		{"https://example.com/app-1.0.0.tgz", true, chartInput, ""},
		{"oci://registry.example/charts/app:1.0.0", true, chartInput, ""},
		{"https://example.com/crds.yaml", true, pathInput, urlRefused("https://example.com/crds.yaml", "https://example.com/crds.yaml")},
		{"https://u:secret@example.com/crd.yaml#L3", true, pathInput, urlRefused("", "https://example.com/crd.yaml#L3")},
		{"http://example.com/objects", true, pathInput, urlRefused("", "http://example.com/objects")},
		{exampleJob, false, pathInput, ""},
		{dir, false, pathInput, ""},
		{chart, false, pathInput, chartRefused(chart)},
		{tgz, false, pathInput, chartRefused(tgz)},
		{"oci://registry.example/charts/app:1.0.0", false, pathInput, urlRefused("", "oci://registry.example/charts/app:1.0.0")},
		{"https://charts.example.com#app@1.0.0", false, pathInput, urlRefused("", "https://charts.example.com#app@1.0.0")},
	} {
		form, err := formOf("-f", "check-update", tc.name, tc.charts)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if form != tc.want || got != tc.err {
			t.Errorf("formOf(%s, charts %v) = %v, %q\nwant %v, %q", tc.name, tc.charts, form, got, tc.want, tc.err)
		}
	}
	f := inputFlags{command: "check-update", charts: true, Filenames: []string{exampleJob, chart, "-", tgz, "oci://r.example/c:1"}}
	if got, want := strings.Join(f.chartInputs(), " "), chart+" "+tgz+" oci://r.example/c:1"; got != want {
		t.Errorf("chartInputs = %s, want %s", got, want)
	}
}

// A chart on disk given where objects or CRD files are read, but to
// check-update's -f, is refused before anything is read, exit 2, saying how
// to give it rendered: read as files, its templates are no objects and
// its archive no YAML (prune said "Chart.yaml:1: not a Kubernetes object").
func TestChartRefusedWhereFilesAre(t *testing.T) {
	chart := chartDir(t, filepath.Join(t.TempDir(), "app"), "")
	refused := func(flag, cmd string) string {
		return "error: " + flag + " " + chart + ": a Helm chart: " + flag + " reads files, directories and standard input (-), not charts: give it the chart rendered, e.g. helm template --include-crds " + chart + " | kubectl crd " + cmd + " " + flag + " -\n"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", "--offline", "--crd-file", exampleCRD, "-f", chart}, refused("-f", "prune")},
		{[]string{"explain-structural", "-f", chart}, refused("-f", "explain-structural")},
		{[]string{"lower-mutability", "-f", chart}, refused("-f", "lower-mutability")},
		{[]string{"holes", "-f", chart}, refused("-f", "holes")},
		{[]string{"check-update", "--offline", "--old", exampleCRD, "--objects", chart, "-f", exampleCRD}, refused("--objects", "check-update")},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != ExitInput || r.stdout != "" || r.stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}

// check-update -f of a chart: its CRDs, rendered, are the new CRDs, named
// by the chart and their path in it with their lines, compared with those
// of the chart of --old; read again from the rendered files by the second
// pass (nothing kept). A chart that renders no CRD is warned of.
func TestCheckUpdateChartInput(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.CompanionEnv, exe)
	t.Setenv(fakeHelmEnv, "render")
	t.Setenv("KUBECTL_CRD_CACHE_DIR", t.TempDir())
	crd, err := os.ReadFile(exampleCRD)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	old := chartDir(t, filepath.Join(dir, "old"), string(crd))
	// The new release drops spec.command, which the example's job sets.
	dropped := strings.Replace(string(crd), "command:", "kommand:", 1)
	if dropped == string(crd) {
		t.Fatal("the example CRD has no command field")
	}
	updated := chartDir(t, filepath.Join(dir, "new"), dropped)
	for _, keep := range []int{keepBytes, 0} {
		withKeep(keep, func() {
			r := run(t, "", "check-update", "--offline", "--old", old, "--objects", exampleJob, "-f", updated)
			head := "CustomResourceDefinition maintenancenightlyjobs.operations.example.com (" + updated + " (templates/crd.yaml):"
			if r.code != 1 || !strings.HasPrefix(r.stdout, head) || !strings.Contains(r.stdout, "replacing "+old+" (templates/crd.yaml):") ||
				!strings.Contains(r.stdout, `MaintenanceNightlyJob ops/rotate-logs: loses "spec.command"`) {
				t.Errorf("keep %d: exit %d, stdout:\n%s\nstderr:\n%s", keep, r.code, r.stdout, r.stderr)
			}
		})
	}
	empty := chartDir(t, filepath.Join(dir, "empty"), "# no CRD\n")
	r := run(t, "", "check-update", "--offline", "--old", old, "-f", empty)
	want := "Warning: no objects in the input (" + empty + "): nothing was checked\n"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("a chart of no CRD: exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
}
