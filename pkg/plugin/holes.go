package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/holes"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// HolesOptions are the options of "kubectl crd holes".
type HolesOptions struct {
	kubeVersion kubeVersionFlag
	inputs      inputFlags
	Output      string

	genericiooptions.IOStreams
}

// NewCmdHoles returns "kubectl crd holes".
func NewCmdHoles(streams genericiooptions.IOStreams) *cobra.Command {
	o := &HolesOptions{IOStreams: streams, inputs: inputFlags{usage: inputUsage{
		Filename:  "files or directories with the CRDs, - for stdin (repeatable)",
		Recursive: "read directories recursively",
	}}}
	cmd := &cobra.Command{
		Use:   "holes -f FILE|DIR|- [-R] [-o text|json|yaml]",
		Short: "Find the updates that change a field its rules are meant to keep immutable",
		Long: `Search every rule meant to make a field immutable (self == oldSelf and its variants,
controller-gen's +k8s:immutable, a parent's !has(oldSelf.x) || self.x == oldSelf.x, optionalOldSelf's
forms, the x-kubernetes-mutability: Immutable markers as emulated) for a sequence of updates the API
server accepts that changes the field. A transition rule runs only where its field is in both the
old and the new object: unsetting the field or an optional parent, or removing a list-type map's
entry or a map's key, and then setting it again with another value, goes through.

Every step is decided by the API server's own update validation, the one check-update runs, from
a minimal valid object built from the schema (a field for which none can be built is reported as
not analysed). Each hole comes with what closes it: the rules lower-mutability writes for
x-kubernetes-mutability: Immutable on the field (and x-kubernetes-key-mutability: AddOnly on the
lists and maps on its path), checked to make the server refuse the hole.

-o yaml prints the holes as a kubectl crd test suite, each step a case, expecting what the CRD with
the fix does; -o json the fields and their holes.

Exit codes:
  0  no hole
  1  holes found
  2  usage error or bad input (file and line are named)
  3  internal error`,
		Example: `  # Which fields of a CRD leak, and how
  kubectl crd holes -f examples/holes/crd.yaml

  # The holes as a test suite, to keep and run with kubectl crd test
  kubectl crd holes -f examples/holes/crd.yaml -o yaml > holes.test.yaml

  # Every CRD under a directory, as JSON
  kubectl crd holes -R -f config/crd -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.inputs.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "text", "output format: text, json, or yaml (a kubectl crd test suite)")
	completeOutput(cmd, "text", "json", "yaml")
	o.kubeVersion.AddFlags(cmd, "")
	return cmd
}

// Validate checks the flags.
func (o *HolesOptions) Validate() error {
	if len(o.inputs.Filenames) == 0 {
		return usageErrorf("no input: give CRDs with -f FILE|DIR|-")
	}
	if err := o.inputs.Validate(); err != nil {
		return err
	}
	switch o.Output {
	case "text", "json", "yaml":
	default:
		return usageErrorf("unknown output format %q: use text, json or yaml", o.Output)
	}
	return o.kubeVersion.Validate()
}

// holesReport is one CRD's report, with its source: what -o json prints.
type holesReport struct {
	Source document.Source `json:"source"`
	*holes.Report
}

// Run searches every CRD of the inputs and prints the reports.
func (o *HolesOptions) Run(ctx context.Context) error {
	if err := o.kubeVersion.Use(ctx, nil, o.ErrOut); err != nil {
		return err
	}
	in, err := o.inputs.Read(o.In)
	if err != nil {
		return err
	}
	in.warn(o.ErrOut)
	var reports []holesReport
	var errs []error
	for _, d := range in.Objects {
		if !schema.IsCRD(stringOf(d.Object["apiVersion"]), stringOf(d.Object["kind"])) {
			continue
		}
		rep, err := holes.Analyze(d.Object, strategy.Validators{})
		if err != nil {
			errs = append(errs, &document.InputError{Source: d.Source, Err: err})
			continue
		}
		reports = append(reports, holesReport{Source: d.Source, Report: rep})
	}
	if err := inputErrors(o.ErrOut, errs); err != nil {
		return err
	}
	if len(reports) == 0 {
		return inputError(fmt.Errorf("no CustomResourceDefinition in the input"))
	}
	if err := o.print(reports); err != nil {
		return err
	}
	for _, r := range reports {
		if r.Leaky() > 0 {
			return errFindings
		}
	}
	return nil
}

func stringOf(v interface{}) string { s, _ := v.(string); return s }

func (o *HolesOptions) print(reports []holesReport) error {
	switch o.Output {
	case "json":
		if reports == nil {
			reports = []holesReport{}
		}
		b, err := json.MarshalIndent(struct {
			Kubernetes kubeversion.Stamp `json:"kubernetes"`
			CRDs       []holesReport     `json:"crds"`
		}{kubeversion.Current().Stamp(), reports}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.Out, "%s\n", b)
		return err
	case "yaml":
		return writeHoleSuites(o.Out, reports)
	}
	for _, r := range reports {
		printHoles(o.Out, r)
	}
	return nil
}

// printHoles prints one CRD's fields, their holes and fixes.
func printHoles(w io.Writer, r holesReport) {
	printable.Fprintf(w, "%s (%s)\n", r.CRD, r.Source)
	var immutable, leaky, notAnalysed, count int
	for _, f := range r.Fields {
		at := ""
		if f.RuleAt != f.Field {
			at = " on " + orRoot(f.RuleAt)
		}
		switch f.Verdict {
		case holes.Immutable:
			immutable++
			printable.Fprintf(w, "  %s %s: immutable (%s%s)\n", f.Version, f.Field, f.Rule, at)
		case holes.NotAnalysed:
			notAnalysed++
			printable.Fprintf(w, "  %s %s: not analysed (%s%s): %s\n", f.Version, f.Field, f.Rule, at, f.Reason)
		case holes.Leaks:
			leaky++
			count += len(f.Holes)
			printable.Fprintf(w, "  %s %s: LEAKS (%s%s)\n", f.Version, f.Field, f.Rule, at)
			for _, h := range f.Holes {
				printHole(w, f, h)
			}
		}
	}
	printable.Fprintf(w, "%s: %d rules and markers: %d hold, %d leak (%d holes), %d not analysed\n", r.CRD, len(r.Fields), immutable, leaky, count, notAnalysed)
}

func orRoot(field string) string {
	if field == "" {
		return "the root"
	}
	return field
}

func printHole(w io.Writer, f holes.Field, h holes.Hole) {
	from, _ := json.Marshal(h.From)
	to, _ := json.Marshal(h.To)
	printable.Fprintf(w, "    %s: %s, then set %s again: %s -> %s, %d updates the server accepts\n", h.Kind, holeVerb(h), f.Field, from, to, len(h.Steps))
	if h.Fix == nil {
		return
	}
	if h.Fix.Err != "" && len(h.Fix.Rules) == 0 {
		printable.Fprintf(w, "      no rule checked to close it: %s\n", h.Fix.Err)
		return
	}
	printable.Fprintf(w, "      closed by %s, as lower-mutability writes it:\n", strings.Join(h.Fix.Markers, ", "))
	for _, r := range h.Fix.Rules {
		printable.Fprintf(w, "        on %s: %s\n", orRoot(r.At), r.Rule)
	}
	if h.Fix.Err != "" {
		printable.Fprintf(w, "      which does not close it: %s\n", h.Fix.Err)
	}
}

func holeVerb(h holes.Hole) string {
	switch h.Kind {
	case holes.Changed:
		return "changed in one update"
	case holes.RemoveEntry:
		return "remove the entry " + h.Via
	case holes.RemoveKey:
		return "remove the key " + h.Via
	}
	return "unset " + h.Via
}

// writeHoleSuites writes each CRD's holes as a kubectl crd test suite: a
// case per step, expecting what the server does with the fix.
func writeHoleSuites(w io.Writer, reports []holesReport) error {
	for i, r := range reports {
		var cases []yamlv2.MapSlice
		for _, f := range r.Fields {
			for _, h := range f.Holes {
				for j, s := range h.Steps {
					expect := "allowed"
					if s.FixRefuses {
						expect = "refused"
					}
					name := fmt.Sprintf("%s %s: %s, step %d of %d", f.Version, f.Field, holeVerb(h), j+1, len(h.Steps))
					cases = append(cases, yamlv2.MapSlice{{Key: "name", Value: name}, {Key: "oldObject", Value: s.Old}, {Key: "object", Value: s.New}, {Key: "expect", Value: expect}})
				}
			}
		}
		if len(cases) == 0 {
			continue
		}
		b, err := yamlv2.Marshal(yamlv2.MapSlice{{Key: "crds", Value: r.Source.File}, {Key: "cases", Value: cases}})
		if err != nil {
			return err
		}
		sep := ""
		if i > 0 {
			sep = "---\n"
		}
		if _, err := fmt.Fprintf(w, "%s# The holes of %s: each case expects what the server does once the fix is added.\n# crds is the path as given: relative to the suite's directory when run.\n%s", sep, r.CRD, b); err != nil {
			return err
		}
	}
	return nil
}
