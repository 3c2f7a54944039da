package main

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// collectionsBeforeMain counts the garbage collections that ran while the
// packages initialised: the variables of package main are initialised after
// every package it imports.
var collectionsBeforeMain = func() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}()

// The packages the binary links allocate more in their initialisation than
// the collector's first goal (4 MB): internal/startup must switch it off
// before they run.
func TestNoCollectionBeforeMain(t *testing.T) {
	if collectionsBeforeMain != 0 {
		t.Errorf("%d garbage collections ran before main: internal/startup no longer initialises before the packages that allocate", collectionsBeforeMain)
	}
}

// A command runs with the collector on, as GOGC sets it when it is set
// (internal/startup's tests say what it does when it is not).
func TestCollectorOnWhenACommandRuns(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the percent internal/startup read is not known here")
	}
	t.Setenv("GOGC", "100") // the percent as the package read it, GOGC unset
	const percent = 100
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // off, as while the packages initialise
	var out, errOut bytes.Buffer
	if code := run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"version"}); code != 0 {
		t.Fatalf("version: exit %d, stderr %q", code, errOut.String())
	}
	if got := debug.SetGCPercent(-1); got != percent {
		t.Errorf("the command ran with the collector's percent at %d, want %d (GOGC's)", got, percent)
	}
}
