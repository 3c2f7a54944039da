// Package release builds the release of kubectl crd (make dist): a
// reproducible archive per platform, their checksums, and the krew manifest
// for them rendered from krew-manifest.yaml; and checks krew manifests.
package release

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Platform is a release target, named by GOOS/GOARCH, which are also the
// values of krew's selector labels os and arch.
type Platform struct {
	OS, Arch string
}

// Platforms are the platforms released, and the ones the manifest covers.
var Platforms = []Platform{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Binary is the plugin's executable on the platform.
func (p Platform) Binary() string {
	if p.OS == "windows" {
		return "kubectl-crd.exe"
	}
	return "kubectl-crd"
}

// Companion is the executable of crd-helm, the companion that renders
// Helm chart sources, on the platform: archives and the image hold it
// beside the plugin's, where kubectl-crd looks for it.
func (p Platform) Companion() string {
	if p.OS == "windows" {
		return "crd-helm.exe"
	}
	return "crd-helm"
}

// Archive is the file name of the platform's release archive.
func (p Platform) Archive() string {
	return fmt.Sprintf("kubectl-crd_%s_%s.tar.gz", p.OS, p.Arch)
}

// CompletionShim is the completion shim (kubectl ≥ 1.26 runs
// kubectl_complete-crd from PATH to complete "kubectl crd ..."), relative
// to the repository root; archives hold it at their top, beside the binary.
const CompletionShim = "completion/kubectl_complete-crd"

// ParsePlatforms parses "os/arch,os/arch"; each must be a released platform.
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	for _, f := range strings.Split(s, ",") {
		os, arch, _ := strings.Cut(strings.TrimSpace(f), "/")
		p := Platform{os, arch}
		if !slices.Contains(Platforms, p) {
			return nil, fmt.Errorf("platform %q is not one of %v", f, Platforms)
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("platform %q is named twice", f)
		}
		out = append(out, p)
	}
	return out, nil
}

func sortedPlatforms[V any](m map[Platform]V) []Platform {
	return slices.SortedFunc(maps.Keys(m), func(a, b Platform) int {
		return strings.Compare(a.String(), b.String())
	})
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
