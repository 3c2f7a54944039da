package testsupport

import (
	"fmt"
	"os"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
)

// RunWithOwnCache runs a package's tests with the cache of CRD indexes of
// the runs they make in a directory of the test binary's own, removed
// afterwards, not in the user's cache directory: a TestMain's body.
func RunWithOwnCache(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kubectl-crd-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer os.RemoveAll(dir)
	os.Setenv(crdindex.CacheDirEnv, dir)
	return m.Run()
}
