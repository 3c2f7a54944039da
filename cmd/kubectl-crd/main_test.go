package main

import (
	"os"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/startup"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport"
)

// TestMain keeps the cache of CRD indexes of the runs the tests make in a
// directory of the test binary's own, not in the user's, and turns the
// garbage collector back on (internal/startup), as main does before a
// command runs.
func TestMain(m *testing.M) {
	startup.Done()
	os.Exit(testsupport.RunWithOwnCache(m))
}
