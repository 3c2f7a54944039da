package filter

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
	"github.com/kubectl-crd/kubectl-crd/internal/source"
)

// fakeHelmEnv names the file where the test binary, run as crd-helm
// (fakeHelm), writes the arguments it was given.
const fakeHelmEnv = "KUBECTL_CRD_TEST_FAKE_HELM"

// fakeHelm is crd-helm for the tests: it writes its arguments, one a
// line, to the file $KUBECTL_CRD_TEST_FAKE_HELM names, and renders no CRD.
func fakeHelm(record string) int {
	if err := os.WriteFile(record, []byte(strings.Join(os.Args[1:], "\n")), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"build": buildinfo.Version(), "files": []any{}})
	return 0
}

// The function hands its load restriction to crd-helm, which reads the
// chart: --root, the working directory with its links resolved, unless
// loadRestrictor is LoadRestrictionsNone (a chart's link to /etc/passwd
// was followed, and .Files.Get put it in the CRDs).
func TestChartRoot(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "args")
	t.Setenv(source.CompanionEnv, exe)
	t.Setenv(fakeHelmEnv, record)
	dir := t.TempDir()
	t.Chdir(dir)
	root, _ := filepath.EvalSymlinks(dir)
	if err := os.MkdirAll("chart", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("chart", "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for restrictor, want := range map[string][]string{"": {"--root", root}, LoadRestrictionsRootOnly: {"--root", root}, LoadRestrictionsNone: nil} {
		os.Remove(record)
		check := &CRDCheck{CRDPaths: Paths{"chart"}, LoadRestrictor: restrictor, IgnoreMissingCRDs: true}
		if _, err := check.Filter([]*yaml.RNode{}); err != nil {
			t.Fatalf("%s: %v", restrictor, err)
		}
		data, err := os.ReadFile(record)
		if err != nil {
			t.Fatalf("%s: crd-helm was not run: %v", restrictor, err)
		}
		args := strings.Split(string(data), "\n")
		i := slices.Index(args, "--root")
		switch {
		case want == nil && i >= 0:
			t.Errorf("%s: crd-helm %s", restrictor, args)
		case want != nil && (i < 0 || i+1 >= len(args) || args[i+1] != want[1]):
			t.Errorf("%s: crd-helm %s, want --root %s", restrictor, args, want[1])
		}
	}
}

// A run of the function leaves nothing of its charts in $TMPDIR: their
// rendered files and the file of chartValues. The rendered files were
// left on every run (the Set was closed before it was fetched).
func TestChartsLeaveNothing(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.CompanionEnv, exe)
	t.Setenv(fakeHelmEnv, filepath.Join(t.TempDir(), "args"))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("chart", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("chart", "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := &CRDCheck{CRDPaths: Paths{"chart"}, ChartValues: map[string]any{"crds": map[string]any{"enabled": true}}, IgnoreMissingCRDs: true}
	if _, err := check.Filter([]*yaml.RNode{}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in $TMPDIR: %v", entries)
	}
}
