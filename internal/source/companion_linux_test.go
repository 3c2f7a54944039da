package source

import "syscall"

// limitAddressSpace bounds the fake companion's address space to 2 GiB
// (its runtime maps some 1.3 at the start), as crd-helm bounds its own:
// an allocation past it is Go's "out of memory".
func limitAddressSpace() {
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 2 << 30, Max: 2 << 30})
}
