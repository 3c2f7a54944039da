package filter

import (
	"os"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport"
)

// TestMain keeps the cache of CRD indexes of the runs the tests make in a
// directory of the test binary's own, not in the user's. Run with
// $KUBECTL_CRD_TEST_FAKE_HELM, the test binary is crd-helm (fakeHelm).
func TestMain(m *testing.M) {
	if record := os.Getenv(fakeHelmEnv); record != "" {
		os.Exit(fakeHelm(record))
	}
	os.Exit(testsupport.RunWithOwnCache(m))
}
