package plugin

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/source"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// inputFlags are the file inputs of a command: the objects (-f), the CRDs
// (--crd-file), the old objects (--old) and -R. Every input of a command is
// read here, so that standard input is read at most once per run.
type inputFlags struct {
	Filenames []string
	CRDFiles  []string
	Old       []string
	Recursive bool
	// remote are the flags of remote sources (registered with --crd-file
	// or --old); offline is the command's --offline: they are read only
	// from the cache.
	remote  sourceFlags
	offline bool
	// cluster is the command's, told when the remote sources are in the
	// cache (its errors then say that --offline reads them); nil for none.
	cluster *cluster

	usage inputUsage
	// command is the command's name, for the words of its messages.
	command string
	// replaces: the CRDs of -f replace the versions before them
	// (check-update's CRD upgrades), read by the catalog's Loader.Inputs (replaces).
	replaces bool
	// charts: -f takes Helm charts, whose CRDs, rendered, are its
	// documents (check-update's chart-to-chart upgrades); the other
	// commands refuse a chart in -f (formOf).
	charts bool
}

// inputUsage are the help texts of a command's input flags: each command
// says what its inputs are. A flag without one is not registered.
type inputUsage struct {
	Filename, CRDFile, Old, Recursive string
}

// inputDocs are what the input flags hold: the objects kubectl would send
// (the items of Lists one by one), and the documents of -f as read, to be
// printed back.
type inputDocs struct {
	CRDs    []*document.Document // --crd-file
	Objects []*document.Document // -f
	Old     []*document.Document // --old

	Documents []*document.Document // -f, as read: Lists whole

	// Warnings are what kubectl would pass in silence: duplicate keys,
	// lines its reader drops, a CRD defined twice.
	Warnings []inputWarning
}

// inputWarning is a warning about the inputs, in the --report contract.
type inputWarning struct {
	Object  document.ObjectRef `json:"object"`
	Source  document.Source    `json:"source"`
	Message string             `json:"message"`
	// Check is the finding's (CRDWarning, NonStructural, Update), "" for
	// the reader's warnings and a CRD defined twice: the rule of the CI
	// reports.
	Check finding.Check `json:"check,omitempty"`
	// Path is the field the finding is about, in the server's format.
	Path string `json:"path,omitempty"`
	// Fails: the gate's verdict on the finding fails the run.
	Fails bool `json:"fails,omitempty"`
	// severity is the finding's ("": a warning).
	severity finding.Severity
}

// indexWarning is a warning of the reader, as the index of a file keeps it.
func indexWarning(w crdindex.Warning) inputWarning {
	return inputWarning{Object: w.Object, Source: w.Source, Message: w.Message}
}

// inputSource is one input flag as it is read and named in messages.
type inputSource struct {
	flag  string
	names []string
	docs  *[]*document.Document
}

// sources are the registered input flags in the order they are read: the
// CRDs before the objects they describe.
func (f *inputFlags) sources(into *inputDocs) []inputSource {
	var out []inputSource
	if f.usage.CRDFile != "" {
		out = append(out, inputSource{"--crd-file", f.CRDFiles, &into.CRDs})
	}
	if f.usage.Filename != "" {
		out = append(out, inputSource{"-f", f.Filenames, &into.Objects})
	}
	if f.usage.Old != "" {
		out = append(out, inputSource{"--old", f.Old, &into.Old})
	}
	return out
}

// AddFlags registers the input flags the command has, with file completion.
func (f *inputFlags) AddFlags(cmd *cobra.Command) {
	f.command = cmd.Name()
	if f.usage.Filename != "" {
		cmd.Flags().StringSliceVarP(&f.Filenames, "filename", "f", nil, f.usage.Filename)
		completeFiles(cmd, "filename")
	}
	if f.usage.Old != "" {
		cmd.Flags().StringSliceVar(&f.Old, "old", nil, f.usage.Old)
		completeFiles(cmd, "old")
	}
	if f.usage.Recursive != "" {
		cmd.Flags().BoolVarP(&f.Recursive, "recursive", "R", false, f.usage.Recursive)
	}
	if f.usage.CRDFile != "" {
		cmd.Flags().StringSliceVar(&f.CRDFiles, "crd-file", nil, f.usage.CRDFile)
		completeFiles(cmd, "crd-file")
	}
	if f.usage.CRDFile != "" || f.usage.Old != "" {
		f.remote.AddFlags(cmd)
	}
}

// readsStdin says whether an input flag names standard input (-).
func (f *inputFlags) readsStdin() bool {
	for _, s := range f.sources(&inputDocs{}) {
		for _, name := range s.names {
			if name == "-" {
				return true
			}
		}
	}
	return false
}

// Validate refuses standard input named more than once, by one flag or by
// two: the first reader would take it all and the second get nothing.
func (f *inputFlags) Validate() error {
	if err := f.remote.Validate(f.offline); err != nil {
		return err
	}
	for _, name := range f.Filenames {
		if _, err := formOf("-f", f.command, name, f.charts); err != nil {
			return err
		}
	}
	first := ""
	for _, s := range f.sources(&inputDocs{}) {
		for _, name := range s.names {
			if name != "-" {
				continue
			}
			switch first {
			case "":
				first = s.flag
			case s.flag:
				return usageErrorf("standard input (-) is named twice by %s: it can be read only once", s.flag)
			default:
				return usageErrorf("standard input (-) is named by both %s and %s: it can be read only once", first, s.flag)
			}
		}
	}
	return nil
}

// Read reads every document of every input flag: files, directories (their
// .yaml, .yml and .json files; subdirectories with -R) and "-" for stdin.
// Errors name the file and line.
func (f *inputFlags) Read(stdin io.Reader) (*inputDocs, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	docs := &inputDocs{}
	for _, s := range f.sources(docs) {
		for _, name := range s.names {
			ds, err := readInput(name, f.Recursive, stdin)
			if err != nil {
				return nil, inputError(err)
			}
			*s.docs = append(*s.docs, objectsOf(ds)...)
			if s.docs == &docs.Objects {
				docs.Documents = append(docs.Documents, ds...)
			}
			for _, d := range ds {
				docs.Warnings = append(docs.Warnings, warningsOf(d)...)
			}
		}
	}
	return docs, nil
}

// inputForm is how an argument of -f is read.
type inputForm int

const (
	// pathInput is a file, a directory (its .yaml, .yml and .json files)
	// or - for standard input, read as YAML or JSON.
	pathInput inputForm = iota
	// chartInput is a Helm chart: its CRDs, rendered as a chart of --old
	// is (source.Fetch), named by the source and their path in the chart.
	chartInput
)

// formOf is how flag of command reads the argument name: a chart when the
// command takes charts (charts) and the argument may be one
// (source.MayBeChart: a directory with a Chart.yaml or a .tgz on disk, an
// https URL of an archive or of a repository's chart, an oci://
// reference, whose manifest tells), else a path. A URL that is no chart
// is refused (refuseURLs: objects are not fetched), as is a chart on disk
// where the command does not take charts (refuseChart): read as files,
// its templates are no objects, and its archive no YAML.
func formOf(flag, command, name string, charts bool) (inputForm, error) {
	switch {
	case name == "-":
		return pathInput, nil
	case charts && source.MayBeChart(name):
		return chartInput, nil
	case source.IsRemote(name):
		return pathInput, refuseURLs(flag, command, []string{name})
	case source.IsChart(name):
		return pathInput, refuseChart(flag, command, name)
	}
	return pathInput, nil
}

// chartInputs are the arguments of -f that are Helm charts (formOf).
func (f *inputFlags) chartInputs() []string {
	var out []string
	for _, name := range f.Filenames {
		if form, err := formOf("-f", f.command, name, f.charts); err == nil && form == chartInput {
			out = append(out, name)
		}
	}
	return out
}

// refuseChart refuses a Helm chart on disk given to a flag that reads
// files, directories and standard input, saying how to give it rendered.
func refuseChart(flag, command, name string) error {
	return usageErrorf("%[1]s %[2]s: a Helm chart: %[1]s reads files, directories and standard input (-), not charts: "+
		"give it the chart rendered, e.g. helm template --include-crds %[2]s | kubectl crd %[3]s %[1]s -",
		flag, name, command)
}

// refuseURLs refuses a URL among the names of a flag that reads files,
// directories and standard input (-f, --objects), saying how to give a
// remote object: kubectl reads one by URL, and we would otherwise say the
// path does not exist. Schemas are fetched (--crd-file, --old), objects
// are not: the objects checked are those of the repository or of a
// pipe.
func refuseURLs(flag, command string, names []string) error {
	for _, name := range names {
		if source.IsRemote(name) {
			return usageErrorf("%s %s: %s reads files, directories and standard input (-), not URLs: "+
				"give a remote object through standard input, e.g. curl -fsSL URL | kubectl crd %s %s -",
				flag, source.Redact(name), flag, command, flag)
		}
	}
	return nil
}

// warnNoObjects warns on w when the objects of -f are none: kubectl apply
// refuses such an input ("no objects passed to apply"), and a check of
// nothing must not look like a clean one. A warning, not an error: an empty
// stream is nothing the server would drop or refuse (docs/prune.md).
func (f *inputFlags) warnNoObjects(w io.Writer, objects int) {
	if objects == 0 {
		printable.Fprintf(w, "Warning: no objects in the input (%s): nothing was checked\n", strings.Join(f.Filenames, ", "))
	}
}

// inputFiles are the files of one path argument (its .yaml, .yml and
// .json files for a directory, subdirectories with recursive), or "-" for
// stdin; an error is an input error.
func inputFiles(name string, recursive bool) ([]string, error) {
	if name == "-" {
		return []string{"-"}, nil
	}
	files, err := document.Files(name, recursive)
	if err != nil {
		return nil, inputError(err)
	}
	return files, nil
}

// readInput reads one path argument, or stdin for "-".
func readInput(name string, recursive bool, stdin io.Reader) ([]*document.Document, error) {
	if name == "-" {
		return document.Read(stdin, "-")
	}
	files, err := document.Files(name, recursive)
	if err != nil {
		return nil, err
	}
	var docs []*document.Document
	for _, f := range files {
		ds, err := readFile(f)
		if err != nil {
			return nil, err
		}
		docs = append(docs, ds...)
	}
	return docs, nil
}

func readFile(name string) ([]*document.Document, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return document.Read(f, name)
}

// warningsOf are the warnings about a document as read: a List's, then
// its items'.
func warningsOf(d *document.Document) []inputWarning {
	var out []inputWarning
	for _, w := range crdindex.WarningsOf(d) {
		out = append(out, indexWarning(w))
	}
	return out
}

// objectsOf are the objects kubectl sends for docs: the items of Lists, one
// by one, and the other documents.
func objectsOf(docs []*document.Document) []*document.Document {
	var out []*document.Document
	for _, d := range docs {
		out = append(out, d.Objects()...)
	}
	return out
}

// warn prints the warnings about the inputs, kubectl-style.
func (in *inputDocs) warn(w io.Writer) { printWarnings(w, in.Warnings) }

// printWarnings prints the warnings about the inputs, a line each: "Error"
// when the gate's verdict on the finding fails the run, else "Warning".
func printWarnings(w io.Writer, warnings []inputWarning) {
	for _, x := range warnings {
		level := "Warning"
		if x.Fails {
			level = "Error"
		}
		if x.Path != "" {
			printable.Fprintf(w, "%s: %s: %s: %s (%s)\n", level, x.Object, x.Path, x.Message, x.Source)
			continue
		}
		printable.Fprintf(w, "%s: %s: %s (%s)\n", level, x.Object, x.Message, x.Source)
	}
}
