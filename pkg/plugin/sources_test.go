package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/source"
)

// --request-timeout bounds the rendering of a chart (and each fetch) when
// it is given: a crd-helm that never ends is stopped after it, exit 2.
// (Without it, the bound is source.DefaultTimeout, 2 minutes.)
func TestSourcesRequestTimeout(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.CompanionEnv, exe)
	t.Setenv(fakeHelmEnv, "1")
	chart := filepath.Join(t.TempDir(), "chart")
	os.MkdirAll(chart, 0o755)
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := run(t, "", "prune", "--offline", "--request-timeout", "1s", "--crd-file", chart, "-f", exampleJob)
	if r.code != 2 || !strings.Contains(r.stderr, chart+": rendering the chart took longer than 1s, the bound: it was stopped") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("stopped after %v", d)
	}
}
