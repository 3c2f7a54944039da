package main

import (
	"os"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport"
)

// TestMain keeps the cache of CRD indexes of the runs the tests make in a
// directory of the test binary's own, not in the user's.
func TestMain(m *testing.M) { os.Exit(testsupport.RunWithOwnCache(m)) }
