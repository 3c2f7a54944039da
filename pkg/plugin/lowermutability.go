package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// LowerMutabilityOptions are the options of "kubectl crd lower-mutability".
type LowerMutabilityOptions struct {
	inputs inputFlags
	Output string

	genericiooptions.IOStreams
}

// NewCmdLowerMutability returns "kubectl crd lower-mutability".
func NewCmdLowerMutability(streams genericiooptions.IOStreams) *cobra.Command {
	o := &LowerMutabilityOptions{IOStreams: streams, inputs: inputFlags{usage: inputUsage{
		Filename:  "files or directories with the CRDs, - for stdin (repeatable)",
		Recursive: "read directories recursively",
	}}}
	cmd := &cobra.Command{
		Use:   "lower-mutability -f FILE|DIR|- [-R] [-o yaml|json]",
		Short: "Turn x-kubernetes-mutability markers into CEL rules the API server enforces",
		Long: `Rewrite the markers of KEP "Immutable fields" (x-kubernetes-mutability,
x-kubernetes-key-mutability), which the API server refuses under kubectl's strict validation and
drops otherwise, into x-kubernetes-validations transition rules, which it enforces: the same
verdicts as check-update's emulation of the markers (docs/mutability.md). Adding and removing a
field, or its optional parent, are caught: each rule sits on the root of the schema or on the item
of a list-type map or value of a map that holds the field.

Prints the inputs ready to apply: in CustomResourceDefinitions the markers are removed and the
rules added after the existing ones, comments and layout kept; other documents pass through
unchanged. The rules need an API server of Kubernetes ` + lower.MinServerVersion + ` or later.

The lowered CRD goes through the API server's own CRD validation, which estimates the cost of
every rule: a rule over the budget is refused here, naming the field and the maxItems,
maxProperties or maxLength to add. Nothing is printed when any CRD is refused.
` + exitCodesHelp,
		Example: `  # Install CRDs whose markers the cluster enforces
  kubectl crd lower-mutability -f examples/lower/crd.yaml | kubectl apply -f -

  # See the rules the markers become
  kubectl crd lower-mutability -f examples/lower/crd.yaml

  # The markers and their rules in the schema's tree
  kubectl crd explain-structural -f examples/lower/mapping.yaml

  # Every CRD under a directory, as a JSON List
  kubectl crd lower-mutability -R -f examples/lower -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.inputs.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "output format: yaml (comments kept) or json (a List)")
	completeOutput(cmd, "yaml", "json")
	return cmd
}

// Validate checks the flags.
func (o *LowerMutabilityOptions) Validate() error {
	if len(o.inputs.Filenames) == 0 {
		return usageErrorf("no input: give CRDs with -f FILE|DIR|-")
	}
	if err := o.inputs.Validate(); err != nil {
		return err
	}
	switch o.Output {
	case "yaml", "json":
	default:
		return usageErrorf("unknown output format %q: use yaml or json", o.Output)
	}
	return nil
}

// Run lowers every CRD of the inputs and prints all documents.
func (o *LowerMutabilityOptions) Run() error {
	in, err := o.inputs.Read(o.In)
	if err != nil {
		return err
	}
	in.warn(o.ErrOut)
	var errs []error
	for _, d := range in.Objects {
		if err := o.lower(d); err != nil {
			var refused *lower.RefusedError
			if errors.As(err, &refused) {
				return &ExitError{Code: ExitInternal, Err: fmt.Errorf("%s: %w", d.Source, err)}
			}
			errs = append(errs, err)
		}
	}
	// Nothing on stdout: a pipeline must not apply CRDs that protect less than they say.
	if err := inputErrors(o.ErrOut, errs); err != nil {
		return err
	}
	return writeDocuments(o.Out, o.ErrOut, in.Documents, o.Output)
}

// lower edits one document when it is a CRD with markers.
func (o *LowerMutabilityOptions) lower(d *document.Document) error {
	crd, ok, err := schema.FromObject(d.Object, strategy.Validators{})
	if err != nil {
		return &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
	}
	if !ok {
		return nil
	}
	for _, f := range finding.OfCRD(crd) {
		printable.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", prune.Ref(d.Object), f.Message, d.Source)
	}
	res, err := lower.CRD(d.Object, strategy.Validators{})
	var cost *lower.CostError
	var unreachable *lower.UnreachableError
	var markers *lower.MarkerError
	switch {
	case errors.As(err, &cost) || errors.As(err, &unreachable):
		rule := unreachable
		src := d.Source
		path := fieldpathOf(cost, rule)
		if l := d.Line(path); l > 0 {
			src.Line = l
		}
		return &document.InputError{Source: src, Msg: err.Error()}
	case errors.As(err, &markers):
		src := d.Source
		if len(markers.Errs) > 0 {
			if l := prune.LineOfPath(d, markers.Errs[0].Field); l > 0 {
				src.Line = l
			}
		}
		return &document.InputError{Source: src, Msg: err.Error()}
	case err != nil:
		var invalid *schema.InvalidError
		if errors.As(err, &invalid) {
			return &document.InputError{Source: d.Source, Msg: err.Error()}
		}
		return err
	}
	for _, w := range res.Warnings {
		printable.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", prune.Ref(d.Object), w, d.Source)
	}
	if len(res.Edits) == 0 {
		return nil
	}
	note, err := d.Apply(res.Edits, res.Object)
	if err != nil {
		return err
	}
	if note != "" {
		printable.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", prune.Ref(d.Object), note, d.Source)
	}
	return nil
}

// fieldpathOf is where the marker of a rule that cannot be lowered is.
func fieldpathOf(cost *lower.CostError, unreachable *lower.UnreachableError) fieldpath.Path {
	if cost != nil {
		return cost.Rule.MarkerPath()
	}
	return unreachable.Rule.MarkerPath()
}

// writeDocuments writes docs as prune prints them, -o yaml or json,
// after the warnings about Lists written again without their comments.
func writeDocuments(out, errOut io.Writer, docs []*document.Document, output string) error {
	var buf bytes.Buffer
	dw := newDocumentWriter(&buf, output)
	for _, d := range docs {
		if err := dw.Add(d); err != nil {
			return err
		}
	}
	if err := dw.Close(); err != nil {
		return err
	}
	for _, n := range dw.Notes {
		fmt.Fprint(errOut, n)
	}
	_, err := io.Copy(out, &buf)
	return err
}
