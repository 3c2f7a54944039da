//go:build !linux

package main

// limitAddressSpace: only Linux bounds the address space as we need
// (RLIMIT_AS); elsewhere the watchdog alone ends a render past its bound.
func limitAddressSpace(int64) {}
