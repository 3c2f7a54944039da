// Command crd-helm is kubectl-crd's companion for Helm charts: it renders a
// chart with the Helm SDK and writes back the files that hold its CRDs.
// It is a binary apart so that kubectl-crd does not link the Helm SDK (its
// start-up work would cost every run of kubectl crd); kubectl-crd finds it
// beside itself, in PATH or at $KUBECTL_CRD_HELM (internal/source).
//
// The protocol is kubectl-crd's own, not for people:
//
//	crd-helm version
//	crd-helm render --build VERSION --chart PATH [--set k=v]... [--values FILE]... [--root DIR] [--max-memory MIB] --out DIR
//
// render refuses a --build that is not its own. With --root (the KRM
// function's load restriction), a chart directory whose symbolic links
// lead out of DIR is refused. With --max-memory, rendering that holds
// more is stopped, exit 2 (limitMemory). It writes each source file
// of the chart that holds CRDs (crds/ of the chart and its subcharts as
// they are, then the templates rendered as `helm install` would, release
// kubectl-crd in namespace default) to DIR, every document that is not a
// CustomResourceDefinition blanked line for line so that lines stay those
// of the file, and prints {"build":..., "files":[{"name":"templates/crds.yaml","file":"1.yaml"}]}.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
)

// Exit codes as kubectl-crd's: 2 for a chart or values that cannot be
// used, 3 for anything else.
const (
	exitInput    = 2
	exitInternal = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type multi []string

func (m *multi) String() string     { return fmt.Sprint(*m) }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "crd-helm: kubectl-crd's companion for Helm charts, run by kubectl crd (docs/sources.md); usage: crd-helm version | render ...")
		return exitInput
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, buildinfo.Version())
		return 0
	case "render":
	default:
		fmt.Fprintf(stderr, "crd-helm: unknown command %q\n", args[0])
		return exitInput
	}
	// kubectl-crd names its build first: one of another release is refused
	// before a flag this one does not know is.
	if len(args) > 2 && args[1] == "--build" && args[2] != buildinfo.Version() {
		fmt.Fprintf(stderr, "crd-helm is of build %s, kubectl-crd of build %s: install both from the same release\n", buildinfo.Version(), args[2])
		return exitInput
	}
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o renderOptions
	fs.StringVar(&o.build, "build", "", "the build of kubectl-crd that runs crd-helm")
	fs.StringVar(&o.chart, "chart", "", "the chart: a directory or a .tgz")
	fs.StringVar(&o.out, "out", "", "the directory of the files written")
	fs.StringVar(&o.root, "root", "", "the KRM function's load restriction: every file of a chart directory, its symbolic links followed, is inside this directory")
	fs.Var((*multi)(&o.set), "set", "a value, as helm's --set")
	fs.Var((*multi)(&o.values), "values", "a values file, as helm's --values")
	maxMemory := fs.Int64("max-memory", 0, "the most memory rendering may use, in MiB (0: no bound)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitInput
	}
	if own := buildinfo.Version(); o.build != own {
		fmt.Fprintf(stderr, "crd-helm is of build %s, kubectl-crd of build %s: install both from the same release\n", own, o.build)
		return exitInput
	}
	if o.chart == "" || o.out == "" {
		fmt.Fprintln(stderr, "crd-helm render: --chart and --out are required")
		return exitInput
	}
	if *maxMemory < 0 {
		fmt.Fprintln(stderr, "crd-helm render: --max-memory: want 0 or more MiB")
		return exitInput
	}
	if *maxMemory > 0 {
		limitMemory(*maxMemory<<20, stderr)
	}
	files, err := render(o)
	if err != nil {
		fmt.Fprintln(stderr, oneLine(err.Error()))
		var ie inputError
		if errors.As(err, &ie) {
			return exitInput
		}
		return exitInternal
	}
	if err := json.NewEncoder(stdout).Encode(result{Build: buildinfo.Version(), Files: files}); err != nil {
		fmt.Fprintln(stderr, err)
		return exitInternal
	}
	return 0
}

// result is what render prints.
type result struct {
	Build string       `json:"build"`
	Files []outputFile `json:"files"`
}

// outputFile is a file of the chart (Name, its path in the chart) written
// to File in the output directory.
type outputFile struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// oneLine is a message on one line, its line breaks written \n: a chart's
// message (its fail, a file's name) cannot pass for the trace that Go's
// runtime writes when the process dies, which kubectl-crd tells apart.
func oneLine(msg string) string {
	return strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`).Replace(msg)
}

// inputError is the chart's or the values' fault.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }
