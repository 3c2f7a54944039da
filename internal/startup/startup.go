// Package startup holds the garbage collector off while the program's
// packages initialise, and gives it back to main as GOGC sets it.
//
// The server's code the binary links (apiextensions-apiserver, apiserver's
// registry and metrics, client-go's scheme) allocates some 5 MB as its
// packages initialise, mostly tables kept for the whole run. With the
// collector on, two collections ran before main, and one began as main
// turned it back on: a fifth of the CPU time of "kubectl crd --help".
// Go initialises a package once the packages it imports are, the first
// ready one in the order of import paths; this one imports runtime/debug
// only, so it runs before the heavy ones, and cmd/kubectl-crd's
// TestNoCollectionBeforeMain fails when it no longer does.
package startup

import "runtime/debug"

// gcPercent is GOGC's setting (100 when unset, -1 for off), read as the
// collector is switched off.
var gcPercent = debug.SetGCPercent(-1)

// Done turns the collector back on as GOGC sets it. main has it called
// before a command runs; --help, which allocates little, exits without it.
func Done() { debug.SetGCPercent(gcPercent) }
