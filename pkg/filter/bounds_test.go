package filter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/source"
)

// A values file of chartValuesFiles is read bounded, as the plugin's
// --values: /dev/zero fails the run naming it, after 64 MiB.
func TestChartValuesFilesBounded(t *testing.T) {
	chart := t.TempDir()
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: app\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.CompanionEnv, "/bin/false") // never run: the values are read first
	t.Setenv("KUBECTL_CRD_CACHE_DIR", t.TempDir())
	config, err := yaml.Parse("apiVersion: " + APIVersion + "\nkind: " + Kind + "\nloadRestrictor: LoadRestrictionsNone\ncrdPaths: [" + chart + "]\nchartValuesFiles: [/dev/zero]\n")
	if err != nil {
		t.Fatal(err)
	}
	err = (Processor{}).Process(&framework.ResourceList{FunctionConfig: config})
	var results framework.Results
	if err == nil || errors.As(err, &results) || !strings.Contains(err.Error(), "/dev/zero: larger than 64 MiB, the most kubectl crd reads of a file") {
		t.Fatalf("chartValuesFiles: [/dev/zero]: %v", err)
	}
}
