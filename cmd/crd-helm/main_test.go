package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	var errb bytes.Buffer
	if code := run([]string{"render", "--build", "other", "--chart", chart, "--out", t.TempDir()}, &bytes.Buffer{}, &errb); code != exitInput || !strings.Contains(errb.String(), "install both from the same release") {
		t.Errorf("another build: exit %d: %s", code, errb.String())
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
