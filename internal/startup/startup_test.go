package startup

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestFloorPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live  uint64
		base  int
		floor uint64
		want  int
	}{
		{live: 4 * mb, base: 100, floor: 128 * mb, want: 3100},
		{live: 60 * mb, base: 100, floor: 120 * mb, want: 100}, // GOGC's goal is the floor
		{live: 50 * mb, base: 100, floor: 120 * mb, want: 140},
		{live: 140 * mb, base: 100, floor: 128 * mb, want: 100},
		{live: 100 * mb, base: 50, floor: 128 * mb, want: 50},
		{live: 80 * mb, base: 50, floor: 128 * mb, want: 60},
		{live: 0, base: 100, floor: 128 * mb, want: 128*mb*100 - 100},
	} {
		if got := floorPercent(tc.live, tc.base, tc.floor); got != tc.want {
			t.Errorf("floorPercent(%d, %d, %d) = %d, want %d", tc.live, tc.base, tc.floor, got, tc.want)
		}
	}
}

// percent is the collector's percent now.
func percent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestDoneKeepsTheUsersSettings(t *testing.T) {
	defer func(p int) { gcPercent = p; debug.SetGCPercent(p) }(gcPercent)
	for _, env := range []struct{ gogc, memlimit string }{{"50", ""}, {"", "1GiB"}, {"100", "1GiB"}} {
		t.Setenv("GOGC", env.gogc)
		t.Setenv("GOMEMLIMIT", env.memlimit)
		gcPercent = 50
		debug.SetGCPercent(-1)
		Done()
		if got := percent(); got != 50 {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: the collector's percent is %d, want GOGC's (50)", env.gogc, env.memlimit, got)
		}
	}
}

// Unset, the goal is the floor while the heap is small, and GOGC's once
// the live heap is half the floor or more.
func TestDoneFloorsTheGoalWhileTheHeapIsSmall(t *testing.T) {
	defer func(p int) { gcPercent = p; debug.SetGCPercent(p) }(gcPercent)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	runtime.GC()
	gcPercent = 100
	debug.SetGCPercent(-1)
	Done()
	if got := percent(); got <= 100 {
		t.Fatalf("the collector's percent is %d with a small heap, want more than GOGC's (100)", got)
	}
	live := make([]byte, heapFloor/2+1<<20)
	for deadline := time.Now().Add(10 * time.Second); percent() != 100; {
		if time.Now().After(deadline) {
			t.Fatalf("the collector's percent is %d with a live heap over half the floor, want GOGC's (100)", percent())
		}
		runtime.GC() // the finalizer runs after it, on its own goroutine
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(live)
}
