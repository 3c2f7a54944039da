package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// CheckUpdateOptions are the options of "kubectl crd check-update".
type CheckUpdateOptions struct {
	inputs inputFlags
	outputFlags
	Offline bool

	cluster *cluster
	catalog *catalog.Catalog
	genericiooptions.IOStreams
}

// NewCmdCheckUpdate returns "kubectl crd check-update".
func NewCmdCheckUpdate(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CheckUpdateOptions{IOStreams: streams, cluster: newCluster(configFlags),
		outputFlags: newOutputFlags("output format: text or json", "text", "json"),
		inputs: inputFlags{usage: inputUsage{
			Filename:  "files or directories with the new objects, - for stdin (repeatable)",
			Old:       "files or directories with the old objects (default: read them from the cluster)",
			Recursive: "read directories recursively",
			CRDFile:   "CustomResourceDefinition files or directories (repeatable)",
		}}}
	cmd := &cobra.Command{
		Use:   "check-update -f NEW [--old OLD] [--crd-file CRD]... [-o text|json]",
		Short: "Tell whether the API server, or the CRD's mutability markers, would refuse an update",
		Long: `Compare each new object with its old version, as the API server stores both (pruned and
defaulted), and report what would refuse the update:

  - the API server's own update validation, by its own code: the schema with ratcheting, CEL rules
    of x-kubernetes-validations including transition rules (self == oldSelf, optionalOldSelf),
    metadata and list types;
  - the mutability markers of KEP "Immutable fields" (x-kubernetes-mutability,
    x-kubernetes-key-mutability) in CRD files: the server ignores them, kubectl crd enforces them
    as the KEP specifies.

Old objects come from --old files (matched by group, kind, namespace and name), else from the
cluster; an object without an old version is a create, and is only pruned. CRDs come from
--crd-file and the inputs, else from the cluster (mutability markers only from files: the server
drops them). What the server would drop from the new objects is reported as warnings.
` + exitCodesHelp,
		Example: `  # Would applying these objects be refused by the cluster?
  kubectl crd check-update -f cr.yaml

  # Offline: against the previously applied objects and the CRD file
  kubectl crd check-update --offline --crd-file crd.yaml --old applied/ -f rendered/ -R

  # For CI: the verdict as JSON
  kubectl crd check-update --crd-file crd.yaml --old old.yaml -f new.yaml -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.inputs.AddFlags(cmd)
	o.outputFlags.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.Offline, "offline", false, "never contact a cluster: old objects from --old, schemas from --crd-file and the inputs")
	return cmd
}

// Complete builds the engine's catalog: the cluster unless --offline (old
// objects from it when --old gives none), and the namespace of -n or the
// kubeconfig's context.
func (o *CheckUpdateOptions) Complete(cmd *cobra.Command, args []string) error {
	o.catalog = newCatalog(o.cluster, o.Offline, len(o.inputs.Old) == 0)
	return nil
}

// Validate checks the flags.
func (o *CheckUpdateOptions) Validate() error {
	if len(o.inputs.Filenames) == 0 {
		return usageErrorf("no input: give the new objects with -f FILE|DIR|-")
	}
	if o.Offline && len(o.inputs.Old) == 0 {
		return usageErrorf("--offline needs the old objects: give them with --old FILE|DIR")
	}
	if err := o.inputs.Validate(); err != nil {
		return err
	}
	return o.outputFlags.Validate()
}

// updateReport is the -o json contract: fields are added, never renamed.
type updateReport struct {
	Items []updateItem `json:"items"`
}

type updateItem struct {
	Object     prune.ObjectRef  `json:"object"`
	Source     document.Source  `json:"source"`
	Status     string           `json:"status"`
	Violations []update.Finding `json:"violations"`
	Warnings   []prune.Change   `json:"warnings"`
}

// Run reads schemas, old and new objects, checks each new object with the
// engine, and reports.
func (o *CheckUpdateOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := o.inputs.Read(o.In)
	if err != nil {
		return err
	}
	cat := o.catalog
	if err := in.addCRDs(cat); err != nil {
		return err
	}
	in.warn(o.ErrOut)
	docs := in.Objects
	o.inputs.warnNoObjects(o.ErrOut, len(docs))
	// Objects that do not say what they are, and old objects the server
	// cannot have stored, would be skipped or match nothing: refuse them
	// all before anything is looked up.
	var errs []error
	for _, d := range docs {
		if _, _, err := prune.Identify(d); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range in.Old {
		if err := cat.AddOld(d); err != nil {
			errs = append(errs, err)
		}
	}
	if err := inputErrors(o.ErrOut, errs); err != nil {
		return err
	}
	if err := resolveKinds(ctx, cat, o.ErrOut, docs); err != nil {
		return err
	}

	var report updateReport
	refused := false
	for _, d := range docs {
		res, err := cat.Update(ctx, d)
		if err != nil {
			var ie *document.InputError
			if errors.As(err, &ie) {
				return inputError(err)
			}
			return err
		}
		if res.Status == catalog.UpdateSkipped {
			continue
		}
		report.Items = append(report.Items, updateItem{Object: res.Object, Source: d.Source, Status: string(res.Status), Violations: res.Refused, Warnings: res.Warnings})
		refused = refused || len(res.Refused) > 0
	}
	if err := o.print(report); err != nil {
		return err
	}
	if refused {
		return errFindings
	}
	return nil
}

// print writes the report in the -o format.
func (o *CheckUpdateOptions) print(report updateReport) error {
	if o.Output == "json" {
		if report.Items == nil {
			report.Items = []updateItem{}
		}
		b, err := marshalJSON(report, "  ")
		if err != nil {
			return err
		}
		_, err = o.Out.Write(b)
		return err
	}
	o.printText(report)
	return nil
}

func (o *CheckUpdateOptions) printText(report updateReport) {
	for _, it := range report.Items {
		if it.Status == string(catalog.UpdateMissingCRD) {
			fmt.Fprintf(o.ErrOut, "Warning: %s: %s: not checked (%s)\n", it.Object, finding.NoCRD(it.Object).Message, it.Source)
			continue
		}
		for _, w := range it.Warnings {
			fmt.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", it.Object, finding.FromChange(w, it.Object.Kind, "").Message, document.Source{File: it.Source.File, Line: w.Line})
		}
		if it.Status == string(catalog.UpdateCreate) {
			fmt.Fprintf(o.Out, "%s: no old object: a create, not an update (%s)\n", it.Object, it.Source)
			continue
		}
		if len(it.Violations) == 0 {
			fmt.Fprintf(o.Out, "%s: update allowed (%s)\n", it.Object, it.Source)
			continue
		}
		for _, v := range it.Violations {
			f := finding.FromUpdate(v)
			values := ""
			if f.Value != nil || f.NewValue != nil {
				values = fmt.Sprintf(" (%s -> %s)", jsonOrAbsent(f.Value), jsonOrAbsent(f.NewValue))
			}
			line := it.Source
			if f.Line > 0 {
				line.Line = f.Line
			}
			fmt.Fprintf(o.Out, "%s: refused: %s: %s%s (%s)\n", it.Object, f.Path, f.Message, values, line)
		}
	}
}

func jsonOrAbsent(v interface{}) string {
	if v == nil {
		return "absent"
	}
	return jsonString(v)
}
