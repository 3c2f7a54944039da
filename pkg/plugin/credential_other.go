//go:build !unix

package plugin

import "os/exec"

// ownProcessGroup: the plugin alone is stopped (exec.CommandContext's kill).
func ownProcessGroup(*exec.Cmd) {}
