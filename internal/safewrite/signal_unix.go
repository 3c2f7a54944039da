//go:build unix

package safewrite

import (
	"io/fs"
	"os"
	"os/signal"
	"syscall"
)

// keepOwner gives the new file the old one's owner and group: as root, a
// rename would otherwise hand a user's file to root. Others may not, and
// then own the file they wrote, as with any editor.
func keepOwner(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}

// dieOf ends the process by sig, with the default action restored, so that
// its parent sees the signal and not an exit code.
func dieOf(sig os.Signal) {
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	// Delivery is asynchronous: never return to a writer that would rename.
	select {}
}
