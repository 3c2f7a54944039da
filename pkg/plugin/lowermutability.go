package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// LowerMutabilityOptions are the options of "kubectl crd lower-mutability".
type LowerMutabilityOptions struct {
	kubeVersion kubeVersionFlag
	inputs      inputFlags
	Output      string

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
	o.kubeVersion.AddFlags(cmd, "")
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
	return o.kubeVersion.Validate()
}

// Run lowers every CRD of the inputs (lower.Document) and prints all
// documents.
func (o *LowerMutabilityOptions) Run() error {
	if err := o.kubeVersion.Use(context.Background(), nil, o.ErrOut); err != nil {
		return err
	}
	in, err := o.inputs.Read(o.In)
	if err != nil {
		return err
	}
	in.warn(o.ErrOut)
	var errs []error
	for _, doc := range in.Documents {
		for _, l := range lower.Document(doc, strategy.Validators{}) {
			for _, f := range slices.Concat(l.CRD, l.Findings) {
				printable.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", document.Ref(l.Doc.Object), f.Message, l.Doc.Source)
			}
			if errors.As(l.Err, new(*lower.RefusedError)) {
				return &ExitError{Code: ExitInternal, Err: l.Err}
			}
			if l.Err != nil {
				errs = append(errs, l.Err)
			}
		}
	}
	// Nothing on stdout: a pipeline must not apply CRDs that protect less than they say.
	if err := inputErrors(o.ErrOut, errs); err != nil {
		return err
	}
	return writeDocuments(o.Out, o.ErrOut, in.Documents, o.Output)
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
