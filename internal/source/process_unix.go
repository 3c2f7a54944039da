//go:build unix

package source

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts crd-helm in a process group of its own and makes
// its stop a SIGKILL of the group: whatever it started stops with it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
