//go:build !unix

package safewrite

import (
	"io/fs"
	"os"
)

// keepOwner: file ownership is not a mode bit here.
func keepOwner(*os.File, fs.FileInfo) {}

// dieOf exits with the code a shell gives an interrupted command.
func dieOf(os.Signal) { os.Exit(130) }
