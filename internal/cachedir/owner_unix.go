//go:build unix

package cachedir

import (
	"io/fs"
	"os"
	"syscall"
)

// owner is the uid that owns st's file and the effective uid running.
func owner(st fs.FileInfo) (uid, me int, ok bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(sys.Uid), os.Geteuid(), true
}

// othersWrite says whether the group or others may write st's file.
func othersWrite(st fs.FileInfo) bool { return st.Mode().Perm()&0o022 != 0 }
