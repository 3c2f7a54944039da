// Package startup holds the garbage collector off while the program's
// packages initialise, and gives it back to main: as GOGC and GOMEMLIMIT
// set it, or, when neither is set, with a floor under the heap's goal
// while the live heap is small.
//
// The server's code the binary links (apiextensions-apiserver, apiserver's
// registry and metrics, client-go's scheme) allocates some 5 MB as its
// packages initialise, mostly tables kept for the whole run. With the
// collector on, two collections ran before main, and one began as main
// turned it back on: a fifth of the CPU time of "kubectl crd --help".
// Go initialises a package once the packages it imports are, the first
// ready one in the order of import paths; this one imports os and
// runtime's packages only, so it runs before the heavy ones, and
// cmd/kubectl-crd's TestNoCollectionBeforeMain fails when it no longer
// does.
package startup

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcPercent is GOGC's setting (100 when unset, -1 for off), read as the
// collector is switched off.
var gcPercent = debug.SetGCPercent(-1)

// heapFloor is the least heap goal while the live heap is small. A run
// against a hundred CRDs lives on some 5 MB while it reads its inputs,
// then grows to 140 MB as it builds their validators: with GOGC=100 the
// collector ran 56 times in the first 0.7 s, and 70 times before the
// heap reached its size, each a cycle of marking, assists and write
// barriers. Under the floor the heap grows to it before a collection;
// past half of it, GOGC's percent holds and the peak is as it was.
const heapFloor = 128 << 20

// Done turns the collector back on. main has it called before a command
// runs; --help, which allocates little, exits without it.
func Done() {
	if gcPercent < 0 || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		// The user's settings, as they set them.
		debug.SetGCPercent(gcPercent)
		return
	}
	// No collection has run: what is allocated is what the packages'
	// initialisation keeps, nearly all of it live.
	if percent := floorPercent(heapBytes("/memory/classes/heap/objects:bytes"), gcPercent, heapFloor); percent > gcPercent {
		debug.SetGCPercent(percent)
		watch()
		return
	}
	debug.SetGCPercent(gcPercent)
}

// floorPercent is the percent that puts the heap's goal at floor for a
// live heap of live bytes (goal = live + live*percent/100), or base when
// that goal is already floor or more.
func floorPercent(live uint64, base int, floor uint64) int {
	if live == 0 {
		live = 1
	}
	if live*uint64(100+base)/100 >= floor {
		return base
	}
	return int(floor*100/live) - 100
}

// watch sets the percent again after each collection, for the live heap
// it leaves, until the floor is the goal GOGC would give: then GOGC's
// percent holds, and the watch ends. A finalizer runs once its object is
// found unreachable, after a collection: the collector's own hook.
func watch() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		percent := floorPercent(heapBytes("/gc/heap/live:bytes"), gcPercent, heapFloor)
		debug.SetGCPercent(percent)
		if percent > gcPercent {
			watch()
		}
	})
}

// sentinel is large enough not to share the tiny allocator's blocks,
// whose finalizers may never run.
type sentinel struct{ _ [16]byte }

// heapBytes reads one of runtime/metrics' heap sizes.
func heapBytes(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
