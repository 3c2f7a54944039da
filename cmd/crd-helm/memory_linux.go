package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// addressSpaceRoom is how far above what is mapped at the start the
// address space may grow, in bounds of memory: rendering the largest
// chart we measured grew it by 1.9 times what it held, so that a chart
// within the bound never meets this limit, only one allocation far past
// it does.
const addressSpaceRoom = 4

// limitAddressSpace bounds the address space (RLIMIT_AS) to what is
// mapped now (some 1.3 GB, the runtime's reservations, most never used)
// plus addressSpaceRoom times max, unless it is bounded lower already.
func limitAddressSpace(max int64) {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return
	}
	pages, err := strconv.ParseUint(strings.Fields(string(statm))[0], 10, 64)
	if err != nil {
		return
	}
	limit := pages*uint64(os.Getpagesize()) + addressSpaceRoom*uint64(max)
	var old syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &old) != nil || old.Cur <= limit {
		return
	}
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: old.Max})
}
