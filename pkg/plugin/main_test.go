package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport"
)

// fakeHelmEnv makes the test binary a crd-helm that never ends.
const fakeHelmEnv = "KUBECTL_CRD_TEST_FAKE_HELM"

// TestMain keeps the cache of CRD indexes of the runs the tests make in a
// directory of the test binary's own, not in the user's. Run with
// $KUBECTL_CRD_TEST_FAKE_HELM, the test binary is a crd-helm that never
// ends.
func TestMain(m *testing.M) {
	switch os.Getenv(fakeHelmEnv) {
	case "":
	case "render":
		os.Exit(fakeRender(os.Args[1:]))
	default:
		time.Sleep(time.Hour)
		os.Exit(3)
	}
	os.Exit(testsupport.RunWithOwnCache(m))
}

// fakeRender is a crd-helm that renders a chart directory's
// templates/crd.yaml as it is, and nothing else: "render --chart DIR
// --out OUT ...".
func fakeRender(args []string) int {
	var chart, out string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--chart":
			chart = args[i+1]
		case "--out":
			out = args[i+1]
		}
	}
	data, err := os.ReadFile(filepath.Join(chart, "templates", "crd.yaml"))
	if err == nil {
		err = os.WriteFile(filepath.Join(out, "crd.yaml"), data, 0o600)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf(`{"build": %q, "files": [{"name": "templates/crd.yaml", "file": "crd.yaml"}]}`+"\n", buildinfo.Version())
	return 0
}
