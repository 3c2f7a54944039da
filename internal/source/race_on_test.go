//go:build race

package source

// raceEnabled: the race detector needs more address space than a fake
// crd-helm that dies of out of memory leaves it.
const raceEnabled = true
