package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// limitMemory bounds the memory of the process to max bytes: a chart's
// templates are code (a string doubled forty times, range until
// 2000000000), and without a bound they ran the machine out of memory
// and died with a goroutine dump. The garbage collector is set to keep
// below most of max (GOMEMLIMIT), a watchdog ends the process cleanly,
// with our message and exit 2, once it holds more than max, and where
// the system allows it (Linux) the address space is bounded far above
// max, so that one allocation that would pass it at a stroke fails at
// once: Go's runtime then dies of "out of memory", which kubectl-crd
// words as the bound.
func limitMemory(max int64, stderr io.Writer) {
	debug.SetMemoryLimit(max / 8 * 7)
	limitAddressSpace(max)
	go watchMemory(max, stderr)
}

// memoryMessage is what crd-helm says when rendering passed its bound;
// kubectl-crd says the same when the runtime died of it.
func memoryMessage(max int64) string {
	return fmt.Sprintf("rendering the chart used more than %d MiB of memory, the bound: it was stopped", max>>20)
}

// watchInterval is how often the watchdog reads what the process holds:
// at a few GB/s of allocation, some tens of MB past the bound.
const watchInterval = 10 * time.Millisecond

// watchMemory ends the process, exit 2, once the memory the runtime
// holds from the system (mapped and not released) is more than max.
func watchMemory(max int64, stderr io.Writer) {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	for range time.Tick(watchInterval) {
		metrics.Read(samples)
		if used := samples[0].Value.Uint64() - samples[1].Value.Uint64(); used > uint64(max) {
			fmt.Fprintln(stderr, memoryMessage(max))
			os.Exit(exitInput)
		}
	}
}
