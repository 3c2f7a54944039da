//go:build !unix

package source

import "os/exec"

// ownProcessGroup: crd-helm alone is stopped (exec.CommandContext's kill).
func ownProcessGroup(*exec.Cmd) {}
