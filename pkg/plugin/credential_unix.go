//go:build unix

package plugin

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the plugin in a process group of its own and makes
// its stop a SIGKILL of the group: a script's children (a sleep, a curl)
// stop with it, and hold no pipe open after it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
