// Command dist builds the release of kubectl crd (make dist): an archive per
// platform, the image of the linux builds (an OCI layout tarball),
// SHA256SUMS, and the krew manifest crd.yaml for the archives. The same
// commit, version and Go toolchain give the same bytes.
//
//	go run ./hack/dist [-version v1.2.3] [-out dist] [-platforms linux/amd64,...]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command with its arguments; progress and errors go to log.
// Exit codes: 0 done, 1 the build failed, 2 usage.
func run(ctx context.Context, args []string, log io.Writer) int {
	flags := flag.NewFlagSet("dist", flag.ContinueOnError)
	flags.SetOutput(log)
	var all []string
	for _, p := range release.Platforms {
		all = append(all, p.String())
	}
	o := release.Options{Log: log}
	flags.StringVar(&o.Version, "version", "", "release version, v-prefixed semver (default: from git describe, else a pseudo-version)")
	flags.StringVar(&o.Out, "out", "dist", "output directory")
	flags.StringVar(&o.Root, "root", ".", "repository root")
	platforms := flags.String("platforms", strings.Join(all, ","), "platforms to build; the krew manifest needs all of them")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(log, "dist: unexpected arguments %q\n", flags.Args())
		return 2
	}
	var err error
	if o.Platforms, err = release.ParsePlatforms(*platforms); err != nil {
		fmt.Fprintln(log, "dist:", err)
		return 2
	}
	if o.Version == "" {
		if o.Version, err = release.DefaultVersion(ctx, o.Root); err != nil {
			fmt.Fprintln(log, "dist:", err)
			return 2
		}
	} else if _, err := release.ParseVersion(o.Version); err != nil {
		fmt.Fprintln(log, "dist: -version:", err)
		return 2
	}
	if o.MTime, err = release.SourceDate(ctx, o.Root, os.Getenv); err != nil {
		fmt.Fprintln(log, "dist:", err)
		return 2
	}
	o.Revision = release.Revision(ctx, o.Root)
	fmt.Fprintf(log, "kubectl-crd %s, files dated %s, into %s\n", o.Version, o.MTime.Format("2006-01-02T15:04:05Z"), o.Out)
	res, err := release.Dist(ctx, o)
	if err != nil {
		fmt.Fprintln(log, "dist:", err)
		return 1
	}
	if res.Manifest != "" {
		fmt.Fprintln(log, "krew manifest:", res.Manifest)
	}
	if res.Image != "" {
		fmt.Fprintln(log, "image (OCI layout):", res.Image)
	}
	return 0
}
