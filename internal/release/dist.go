package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
)

// VersionVariable is the variable the release version is stamped into.
const VersionVariable = "github.com/kubectl-crd/kubectl-crd/pkg/plugin.version"

// SumsFile lists the archives' sha256, in the format of sha256sum.
const SumsFile = "SHA256SUMS"

// Options of a release build.
type Options struct {
	// Root is the repository root: the module, LICENSE, the shim and the
	// manifest template.
	Root string
	// Out receives the archives, SumsFile and the manifest.
	Out     string
	Version string
	// Platforms to build; the manifest is rendered only when they are all
	// of Platforms, since it names every archive.
	Platforms []Platform
	// Revision is the commit built, for the image's labels; "" when unknown.
	Revision string
	// MTime is the modification time of every file in the archives and
	// the image.
	MTime time.Time
	// Log receives progress.
	Log io.Writer
}

// Result is what a release build wrote.
type Result struct {
	// Archives are the archives' paths, Sums their sha256, by platform.
	Archives, Sums map[Platform]string
	// Manifest is the rendered krew manifest, "" when not all platforms were built.
	Manifest string
	// Image is the OCI image layout tarball of the linux platforms built,
	// ImageSum its sha256; "" when none was built.
	Image, ImageSum string
}

// Dist builds the plugin for each platform with the version stamped in,
// archives each build reproducibly, writes the image of the linux builds,
// writes the checksums of the archives and the image, and renders and
// checks the krew manifest for the archives.
func Dist(ctx context.Context, o Options) (*Result, error) {
	if _, err := ParseVersion(o.Version); err != nil {
		return nil, fmt.Errorf("version: %v", err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kubectl-crd-dist-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	res := &Result{Archives: map[Platform]string{}, Sums: map[Platform]string{}}
	linux := map[Platform]string{}
	for _, p := range o.Platforms {
		start := time.Now()
		bin := filepath.Join(tmp, p.OS+"_"+p.Arch, p.Binary())
		if err := build(ctx, o.Root, p, o.Version, bin); err != nil {
			return nil, err
		}
		archive := filepath.Join(o.Out, p.Archive())
		helm, err := helmPluginFiles(o.Root, filepath.Join(filepath.Dir(bin), "helm-plugin"), o.Version, p)
		if err != nil {
			return nil, err
		}
		sum, err := writeArchiveFile(archive, append([]ArchiveFile{
			{Name: p.Binary(), Source: bin, Mode: 0o755},
			{Name: p.Companion(), Source: filepath.Join(filepath.Dir(bin), p.Companion()), Mode: 0o755},
			{Name: "LICENSE", Source: filepath.Join(o.Root, "LICENSE"), Mode: 0o644},
			{Name: filepath.Base(CompletionShim), Source: filepath.Join(o.Root, CompletionShim), Mode: 0o755},
		}, helm...), o.MTime)
		if err != nil {
			return nil, err
		}
		res.Archives[p], res.Sums[p] = archive, sum
		if p.OS == "linux" {
			linux[p] = bin
		}
		fmt.Fprintf(o.Log, "%s  %s  (%s)\n", sum, p.Archive(), time.Since(start).Round(time.Second))
	}
	byName := map[string]string{}
	for p, sum := range res.Sums {
		byName[p.Archive()] = sum
	}
	if len(linux) > 0 {
		start := time.Now()
		res.Image = filepath.Join(o.Out, ImageFile)
		if res.ImageSum, err = writeImageFile(res.Image, ImageOptions{Version: o.Version, Revision: o.Revision, Binaries: linux, MTime: o.MTime}); err != nil {
			return nil, err
		}
		byName[ImageFile] = res.ImageSum
		fmt.Fprintf(o.Log, "%s  %s  (%s)\n", res.ImageSum, ImageFile, time.Since(start).Round(time.Second))
	}
	var sums bytes.Buffer
	for _, name := range sortedKeys(byName) {
		fmt.Fprintf(&sums, "%s  %s\n", byName[name], name)
	}
	if err := os.WriteFile(filepath.Join(o.Out, SumsFile), sums.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if len(res.Sums) != len(Platforms) {
		fmt.Fprintf(o.Log, "not all platforms built: no krew manifest\n")
		return res, nil
	}
	res.Manifest, err = writeManifest(o, res.Sums)
	return res, err
}

// build cross-compiles the plugin and its companion crd-helm (into the
// directory of out, in one go build: they share most of their packages),
// the version stamped in both (the companion refuses another build's
// kubectl-crd). Everything that changes the bytes is
// fixed here: no cgo, no paths (-trimpath), no VCS stamp (a dirty tree
// would differ from its commit), baseline CPU levels, no GOFLAGS from the
// caller; -s -w drop the symbol table and DWARF.
func build(ctx context.Context, root string, p Platform, version, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X "+VersionVariable+"="+version+" -X "+buildinfo.Variable+"="+version,
		"-o", filepath.Dir(out)+string(filepath.Separator), "./cmd/kubectl-crd", "./cmd/crd-helm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch,
		"GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=", "GOEXPERIMENT=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building for %s: %v\n%s", p, err, b)
	}
	return nil
}

// writeArchiveFile writes the archive and returns its sha256.
func writeArchiveFile(path string, files []ArchiveFile, mtime time.Time) (string, error) {
	var buf bytes.Buffer
	if err := WriteArchive(&buf, files, mtime); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// writeImageFile writes the image, checks it by reading it back, and
// returns its sha256.
func writeImageFile(path string, o ImageOptions) (string, error) {
	var buf bytes.Buffer
	if err := WriteImage(&buf, o); err != nil {
		return "", err
	}
	if _, err := ReadImage(bytes.NewReader(buf.Bytes())); err != nil {
		return "", fmt.Errorf("the image written does not read back: %v", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// writeManifest renders the template for the archives built, checks the
// result, and writes it as NAME.yaml, the file name krew-index requires.
func writeManifest(o Options, sums map[Platform]string) (string, error) {
	tmpl, err := os.ReadFile(filepath.Join(o.Root, ManifestTemplate))
	if err != nil {
		return "", err
	}
	byArchive := map[string]string{}
	for p, sum := range sums {
		byArchive[p.Archive()] = sum
	}
	rendered, err := RenderManifest(ManifestTemplate, tmpl, o.Version, byArchive)
	if err != nil {
		return "", err
	}
	plugin, err := ParseManifest(rendered)
	if err != nil {
		return "", fmt.Errorf("%s, rendered: %v", ManifestTemplate, err)
	}
	path := filepath.Join(o.Out, plugin.Name+".yaml")
	errs := append(ValidateManifest(path, plugin, Platforms), ManifestFor(plugin, sums)...)
	if len(errs) > 0 {
		return "", fmt.Errorf("%s, rendered: %v", ManifestTemplate, errs.ToAggregate())
	}
	return path, os.WriteFile(path, rendered, 0o644)
}

// DefaultVersion is the version of the checkout at root: the nearest
// v-tag as git describe gives it (v1.2.0, or v1.2.0-3-gabcdef123456 past
// it), else a Go-style pseudo-version v0.0.0-YYYYMMDDhhmmss-abcdef123456;
// "-dirty" is appended when files differ from the commit.
func DefaultVersion(ctx context.Context, root string) (string, error) {
	if v, err := git(ctx, root, "describe", "--tags", "--match=v[0-9]*", "--abbrev=12", "--dirty"); err == nil {
		if _, err := ParseVersion(v); err != nil {
			return "", fmt.Errorf("git describe gives %q, not a release version: %v", v, err)
		}
		return v, nil
	}
	head, err := git(ctx, root, "log", "-1", "--format=%ct %H")
	if err != nil {
		return "", fmt.Errorf("no version given, and none from git: %v", err)
	}
	secs, hash, _ := strings.Cut(head, " ")
	t, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || len(hash) < 12 {
		return "", fmt.Errorf("git log: unexpected %q", head)
	}
	v := "v0.0.0-" + time.Unix(t, 0).UTC().Format("20060102150405") + "-" + hash[:12]
	if status, err := git(ctx, root, "status", "--porcelain", "--untracked-files=no"); err != nil {
		return "", err
	} else if status != "" {
		v += "-dirty"
	}
	return v, nil
}

// SourceDate is the time stamped on the archives' files: SOURCE_DATE_EPOCH
// (the reproducible-builds convention) when set, else the time of the
// commit at root, else the Unix epoch.
func SourceDate(ctx context.Context, root string, getenv func(string) string) (time.Time, error) {
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil || secs < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a count of seconds", s)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	if s, err := git(ctx, root, "log", "-1", "--format=%ct"); err == nil {
		if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(secs, 0).UTC(), nil
		}
	}
	return time.Unix(0, 0).UTC(), nil
}

// Revision is the commit checked out at root, "" outside git.
func Revision(ctx context.Context, root string) string {
	rev, err := git(ctx, root, "rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	return rev
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(string(out)), nil
}
