// Package buildinfo is the build a binary of this repository belongs to,
// which kubectl-crd and its companion crd-helm compare before they work
// together: a release stamps the same version into both.
package buildinfo

import "runtime/debug"

// version is stamped at release build time with -ldflags -X (Variable).
var version = ""

// Variable is the variable a release build stamps its version into.
const Variable = "github.com/kubectl-crd/kubectl-crd/internal/buildinfo.version"

// Version is the stamped version, else "dev" with the commit and the
// state of the tree Go recorded at the build (both binaries of one tree
// agree on it).
func Version() string {
	if version != "" {
		return version
	}
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				v += "+" + s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				v += "-dirty"
			}
		}
	}
	return v
}
