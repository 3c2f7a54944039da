package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
)

// asProcessEnv makes the test binary crd-helm itself (TestMain): for what
// only a process shows, its memory and how it ends.
const asProcessEnv = "KUBECTL_CRD_TEST_CRD_HELM"

func TestMain(m *testing.M) {
	if os.Getenv(asProcessEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// renderProcess runs the test binary as crd-helm render on a chart, with
// args: its exit code and stderr.
func renderProcess(t *testing.T, chart string, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, append([]string{"render", "--build", buildinfo.Version(), "--chart", chart, "--out", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), asProcessEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("crd-helm render %s did not end within a minute", chart)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

// Templates are code: a string doubled forty times, or range until
// 2000000000, ran the machine out of memory and died with a goroutine
// dump. Under --max-memory, rendering past the bound is stopped: the
// watchdog's one line, exit 2; an allocation at a stroke past it (Linux:
// the address space is bounded) is Go's "out of memory", which
// kubectl-crd words as the bound. A real chart renders within it.
func TestMemoryBound(t *testing.T) {
	chart := func(tmpl string) string {
		return writeChart(t, t.TempDir(), map[string]string{"Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n", "crds/a.yaml": crd, "templates/t.yaml": tmpl})
	}
	start := time.Now()
	doubled := chart(`{{- $s := "x" }}{{- range until 40 }}{{- $s = printf "%s%s" $s $s }}{{- end }}{{ $s }}`)
	// Which of the two ends it depends on the moment the watchdog looks:
	// the string's next copy may be allocated at once past the address
	// space's bound (TestRenderDeaths: kubectl-crd words both alike).
	code, stderr := renderProcess(t, doubled, "--max-memory", "64")
	if want := "rendering the chart used more than 64 MiB of memory, the bound: it was stopped\n"; code != exitInput || stderr != want && !strings.Contains(stderr, "fatal error: out of memory") {
		t.Errorf("a string doubled forty times: exit %d, stderr:\n%.2000s\nwant:\n%s", code, stderr, want)
	}
	code, stderr = renderProcess(t, chart(`{{- range until 2000000000 }}x{{- end }}`), "--max-memory", "64")
	if code != exitInput || !strings.Contains(stderr, "out of memory") && !strings.Contains(stderr, "used more than 64 MiB") {
		t.Errorf("range until 2000000000: exit %d, stderr:\n%.2000s", code, stderr)
	}
	if code, stderr := renderProcess(t, chart(strings.Repeat("# {{ .Release.Name }}\n", 1000)), "--max-memory", "64"); code != 0 {
		t.Errorf("a chart within the bound: exit %d: %s", code, stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the bound was reached in %v", d)
	}
}
