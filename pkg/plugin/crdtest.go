package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdtest"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin/report"
)

// TestOptions are the options of "kubectl crd test".
type TestOptions struct {
	Files    []string
	Lower    bool
	Record   bool
	Coverage string
	Output   string
	// RunCases selects the cases by name (--run, as go test -run); run is
	// it compiled by Validate.
	RunCases string
	run      *regexp.Regexp
	// kubeVersions are the minors that each run the suites (--kube-version).
	kubeVersions kubeVersionsFlag

	genericiooptions.IOStreams
}

const testLong = `Run test suites of CRDs: each case an object sent to the API server (a create, an
update of an old object, or an existing object under an upgrade of its CRD), with what the server
is expected to do: allow or refuse it, and why; what it prunes and defaults. The server's own code
decides, offline: pruning, defaulting, the schema, CEL rules with their runtime cost limit, list
types, metadata, ratcheting; the mutability markers of KEP "Immutable fields" emulated, or with
--lower turned into the rules lower-mutability writes (both give the same verdicts).

Arguments are test files, or directories whose *.test.yaml files are read (recursively).
Test files: docs/test.md.

--kube-version runs the suites as the API server of each Kubernetes minor given answers, one
after the other (1.31,1.37, 1.31-1.37): a case expects of each what its expectByVersion says of
it, else its expect; the run fails if a case fails on any of them. The default is the minor of
the server code linked.

--run REGEX runs only the cases whose name the regular expression matches (Go's syntax,
unanchored, as go test -run); the others are not run, and counted as not selected.

--record writes what each case without an expectation observed into its file (comments kept);
an expectation already written is never changed. --coverage lists the CEL rules and mutability
markers of the CRDs that no case's object was refused by, with the server's estimate of each
rule's cost; --coverage=error fails the run on them.

-o json is the run for programs; -o junit, sarif and github the reports CI systems show
(docs/reports.md): a testcase per case, a failure or an error result at the line of each case
that fails.

Exit codes:
  0  every case passes
  1  a case fails (or, with --coverage=error, a rule no case exercises)
  2  usage error or a bad test file (file and line are named)
  3  internal error`

// NewCmdTest returns "kubectl crd test".
func NewCmdTest(streams genericiooptions.IOStreams) *cobra.Command {
	o := &TestOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "test FILE|DIR...",
		Short: "Run test suites of a CRD's validation, with the API server's own code",
		Long:  testLong,
		Example: `  # Run the suites of a directory (its *.test.yaml files)
  kubectl crd test examples/test

  # The same, with the mutability markers lowered to CEL rules
  kubectl crd test --lower examples/test

  # Fail on the rules no case exercises
  kubectl crd test --coverage=error examples/test/volume.test.yaml

  # Only the cases whose name says "immutable"
  kubectl crd test --run immutable examples/test

  # The suites as the API servers of Kubernetes 1.34 and 1.37 answer them (a range: 1.34-1.37)
  kubectl crd test --kube-version 1.34,1.37 examples/min-kube-version`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Lower, "lower", false, "lower the mutability markers to CEL rules (as lower-mutability) rather than emulate them")
	f.BoolVar(&o.Record, "record", false, "write the observed outcome into the cases without an expectation")
	f.StringVar(&o.Coverage, "coverage", "", "list the rules no case was refused by: list, or error to fail on them")
	f.Lookup("coverage").NoOptDefVal = "list"
	f.StringVar(&o.RunCases, "run", "", "run only the cases whose name this regular expression matches (as go test -run)")
	f.StringVarP(&o.Output, "output", "o", "", "output format: json, or a report for CI: "+strings.Join(report.Formats, ", "))
	completeOutput(cmd, append([]string{"json"}, report.Formats...)...)
	o.kubeVersions.AddFlags(cmd)
	return cmd
}

// Validate checks the flags.
func (o *TestOptions) Validate() error {
	switch o.Coverage {
	case "", "list", "error":
	default:
		return usageErrorf("--coverage must be list or error, not %q", o.Coverage)
	}
	if o.Output != "" && o.Output != "json" && !report.IsFormat(o.Output) {
		return usageErrorf("-o must be json, %s, not %q", strings.Join(report.Formats, ", "), o.Output)
	}
	if err := o.kubeVersions.Validate(); err != nil {
		return err
	}
	if o.RunCases != "" {
		re, err := regexp.Compile(o.RunCases)
		if err != nil {
			return usageErrorf("--run: %v", err)
		}
		o.run = re
	}
	if o.Record && o.several() {
		return usageErrorf("--record writes what one Kubernetes minor observed: give --kube-version one minor")
	}
	return nil
}

// several reports whether more than one minor runs the suites: the
// results then name theirs.
func (o *TestOptions) several() bool { return len(o.kubeVersions.minors) > 1 }

// testFiles are the test files of the arguments: a directory's *.test.yaml.
func testFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if !info.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".test.yaml") || strings.HasSuffix(p, ".test.yml")) {
				found = append(found, p)
			}
			return err
		})
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if len(found) == 0 {
			return nil, usageErrorf("no *.test.yaml files in directory %q", a)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// Run runs the suites, then records and reports.
func (o *TestOptions) Run(ctx context.Context) error {
	files, err := testFiles(o.Files)
	if err != nil {
		return err
	}
	results, observed, err := o.runMinors(ctx, files)
	if err != nil {
		return err
	}
	if o.Record {
		if err := o.record(observed); err != nil {
			return err
		}
	}
	summary := crdtest.Summarize(results)
	if o.run != nil && len(summary.Cases) == 0 {
		// As go test -run, no case is no failure; but a CI gate must not
		// pass silently on a pattern that names nothing.
		printable.Fprintf(o.ErrOut, "warning: --run %q selects none of the %d cases: no tests to run\n", o.RunCases, summary.NotSelected)
	}
	switch {
	case o.Output == "json":
		err = writeTestJSON(o.Out, summary)
	case report.IsFormat(o.Output):
		err = o.writeTestReport(summary)
	default:
		err = o.printTests(summary)
	}
	if err != nil {
		return err
	}
	if summary.Fails(o.Coverage == "error") {
		return errFindings
	}
	return nil
}

// runMinors runs the suites as the linked code answers, or as each minor
// of --kube-version answers, oldest first, with a fresh runner (and so
// fresh catalogs) for each; the minor that answered before answers again
// afterwards. An emulated minor is said on stderr, as every command says
// it; an input error names the minor it is of.
func (o *TestOptions) runMinors(ctx context.Context, files []string) ([]*crdtest.SuiteResult, []fileResults, error) {
	if len(o.kubeVersions.minors) == 0 {
		return o.runSuites(ctx, files, 0)
	}
	var results []*crdtest.SuiteResult
	var observed []fileResults
	err := kubeversion.Each(o.kubeVersions.minors, func(m kubeversion.Minor) error {
		noteAnswer(o.ErrOut, kubeversion.Current())
		res, obs, err := o.runSuites(ctx, files, m)
		if err != nil {
			return atMinor(err, m)
		}
		results, observed = append(results, res...), append(observed, obs...)
		return nil
	})
	return results, observed, err
}

// runSuites runs the suites of the files as the minor m answers (zero:
// none was asked for).
func (o *TestOptions) runSuites(ctx context.Context, files []string, m kubeversion.Minor) ([]*crdtest.SuiteResult, []fileResults, error) {
	runner := crdtest.NewRunner(crdtest.Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}, Costs: strategy.Validators{}, Lower: o.Lower, Minor: m, Run: o.run})
	var results []*crdtest.SuiteResult
	var observed []fileResults
	for _, f := range files {
		suites, err := crdtest.ReadFile(f)
		if err != nil {
			return nil, nil, inputError(err)
		}
		of := fileResults{file: f}
		for _, s := range suites {
			res, err := runner.Run(ctx, s)
			if err != nil {
				return nil, nil, inputError(err)
			}
			of.results = append(of.results, res)
		}
		observed = append(observed, of)
		results = append(results, of.results...)
	}
	return results, observed, nil
}

// writeTestJSON writes the report of -o json: the run's, and which minor
// answered.
func writeTestJSON(w io.Writer, r *crdtest.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		*crdtest.Report
		Kubernetes kubeversion.Stamp `json:"kubernetes"`
	}{r, kubeversion.Current().Stamp()})
}

// writeTestReport writes the run as a CI report: a testcase per case, at
// its file and line, failing with what differs when it fails, skipped
// when it has no expectation; with --coverage the rules no case exercised
// as notes on the inputs, errors with --coverage=error.
func (o *TestOptions) writeTestReport(r *crdtest.Report) error {
	out, err := newReportOutput(o.Output, "test")
	if err != nil {
		return err
	}
	defer out.Close()
	for _, c := range r.Cases {
		if err := out.Add(caseObject(c, o.several())); err != nil {
			return err
		}
	}
	if o.Coverage != "" {
		for _, rule := range r.Uncovered {
			if err := out.Add(uncoveredObject(rule, o.Coverage == "error")); err != nil {
				return err
			}
		}
	}
	return out.Finish(o.Out)
}

// caseObject is a case as a report's object: named by the case, and by
// the minor that answered it when several did ("name (1.31)"), its Ref
// the case's object.
func caseObject(c crdtest.CaseReport, several bool) report.Object {
	obj := report.Object{Name: c.Name, Location: report.Location{File: c.Source.File, Line: c.Source.Line}}
	if several && c.KubeVersion != "" {
		obj.Name += " (" + c.KubeVersion + ")"
	}
	if c.Case != nil && c.Case.Object != nil {
		obj.Ref, _, _ = document.Identify(c.Case.Object) // what it has of apiVersion, kind and name
	}
	if f, ok := c.Finding(); ok {
		obj.Findings = []report.Item{f}
		if !f.Fails {
			obj.Status = report.Skipped // a case without an expectation
		}
	}
	return obj
}

// uncoveredObject is a rule no case exercised: a note on the inputs at
// the rule's line, an error with --coverage=error (failUncovered).
func uncoveredObject(r crdtest.CoveredRule, failUncovered bool) report.Object {
	return report.Object{
		Name:     r.CRD + "/" + r.Version,
		Location: report.Location{File: r.Source.File, Line: r.Source.Line},
		Status:   report.InputNote,
		Findings: []report.Item{r.Finding(failUncovered)},
	}
}

// printTests prints a line per case, what differs under a failing one
// and the server's text of each error it observed, the counts, and with
// --coverage the rules no case exercised.
func (o *TestOptions) printTests(r *crdtest.Report) error {
	var b strings.Builder
	for _, c := range r.Cases {
		o.printCase(&b, c)
	}
	if o.several() {
		printable.Fprintf(&b, "on Kubernetes %s: ", o.kubeVersions.words())
	}
	printable.Fprintf(&b, "%d passed, %d failed, %d without expectation", r.Passed, r.Failed, r.Unexpected)
	if o.run != nil {
		printable.Fprintf(&b, ", %d not selected by --run", r.NotSelected)
	}
	if o.Coverage != "" || len(r.Uncovered) > 0 && o.Coverage != "" {
		printable.Fprintf(&b, "; %d of %d rules exercised\n", len(r.Rules)-len(r.Uncovered), len(r.Rules))
		for _, rule := range r.Rules {
			switch {
			case !rule.Exercised:
				printable.Fprintf(&b, "not exercised: %s\n", describeRule(rule))
			case rule.Cost > 0:
				printable.Fprintf(&b, "exercised: %s\n", describeRule(rule))
			}
		}
	} else {
		b.WriteString("\n")
	}
	_, err := io.WriteString(o.Out, b.String())
	return err
}

// printCase prints a case's line; under a failing one, what differs and
// the server's text of each error observed (as kubectl apply prints it).
func (o *TestOptions) printCase(b *strings.Builder, c crdtest.CaseReport) {
	status := "PASS"
	switch {
	case !c.Pass:
		status = "FAIL"
	case c.Unexpected:
		status = "NONE"
	}
	on := ""
	if o.several() {
		on = " on " + c.KubeVersion
	}
	printable.Fprintf(b, "%s %s %s%s (%s)\n", status, c.Source, c.Name, on, c.Observed.Result)
	for _, m := range c.Mismatches {
		printable.Fprintf(b, "    %s\n", m)
	}
	if c.Pass {
		return
	}
	for _, e := range c.Observed.Errors {
		printable.Fprintf(b, "    the server: %s\n", e.Text)
	}
}

func describeRule(r crdtest.CoveredRule) string {
	s := printable.Sprintf("%s %s", r.Source, r.CRD+"/"+r.Version)
	if r.Field != "" {
		s += " " + r.Field
	}
	s += ": " + r.Rule.Rule
	if r.Cost > 0 {
		s += printable.Sprintf(" (cost %d of %d)", r.Cost, r.CostLimit)
	}
	return s
}

// fileResults are the results of a test file's suites.
type fileResults struct {
	file    string
	results []*crdtest.SuiteResult
}

// record writes the observed outcomes into the cases of the files that
// have no expectation, by prune --in-place's rules: each file replaced
// atomically, and none written when one that would change is read-only or
// has hard links (every such file named, exit 2). A file named twice is
// recorded once.
func (o *TestOptions) record(files []fileResults) error {
	var plans []rewrite
	var counts []int
	var errs []error
	var seen []os.FileInfo
	for _, f := range files {
		info, err := os.Stat(f.file)
		if err != nil {
			return inputError(err)
		}
		if sameAsAny(info, seen) {
			continue
		}
		seen = append(seen, info)
		data, err := os.ReadFile(f.file)
		if err != nil {
			return inputError(err)
		}
		out, n, err := crdtest.Record(data, f.results)
		if err != nil {
			return inputError(err)
		}
		if n == 0 {
			continue
		}
		if why := unwritable(info); why != "" {
			errs = append(errs, fmt.Errorf("%s: not rewritten: %s", f.file, why))
			continue
		}
		plans = append(plans, rewrite{name: f.file, old: data, new: out})
		counts = append(counts, n)
	}
	if len(errs) > 0 {
		return inputErrors(o.ErrOut, append(errs[:len(errs)-1:len(errs)-1], fmt.Errorf("%w; --record changed no file", errs[len(errs)-1])))
	}
	for i, p := range plans {
		if err := safewrite.WriteFile(p.name, p.new); err != nil {
			return &ExitError{Code: ExitInternal, Err: fmt.Errorf("--record: %w: %s", err, stoppedAt(plans, i))}
		}
		printable.Fprintf(o.ErrOut, "%s: recorded %d case(s)\n", p.name, counts[i])
	}
	return nil
}
