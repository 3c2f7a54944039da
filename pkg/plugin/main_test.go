package plugin

import (
	"os"
	"testing"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport"
)

// fakeHelmEnv makes the test binary a crd-helm that never ends.
const fakeHelmEnv = "KUBECTL_CRD_TEST_FAKE_HELM"

// TestMain keeps the cache of CRD indexes of the runs the tests make in a
// directory of the test binary's own, not in the user's. Run with
// $KUBECTL_CRD_TEST_FAKE_HELM, the test binary is a crd-helm that never
// ends.
func TestMain(m *testing.M) {
	if os.Getenv(fakeHelmEnv) != "" {
		time.Sleep(time.Hour)
		os.Exit(3)
	}
	os.Exit(testsupport.RunWithOwnCache(m))
}
