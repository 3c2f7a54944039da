//go:build !unix

package cachedir

import "io/fs"

// owner is unknown: Windows' owners and permissions are ACLs, which the
// mode does not show.
func owner(fs.FileInfo) (uid, me int, ok bool) { return 0, 0, false }

// othersWrite is unknown, as owner.
func othersWrite(fs.FileInfo) bool { return false }
