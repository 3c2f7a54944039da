//go:build !linux

package source

func limitAddressSpace() {}
