package plugin

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// PruneOptions are the options of "kubectl crd prune".
type PruneOptions struct {
	kubeVersion kubeVersionFlag
	inputs      inputFlags
	outputFlags
	Report    string
	reportSet bool // --report was given, maybe empty
	Defaults  bool
	gateFlags // with --fail-on-prune (FailOnPrune)
	Offline   bool
	InPlace   bool
	Diff      bool

	cluster  *cluster
	catalog  *catalog.Catalog
	progress *progress
	genericiooptions.IOStreams
}

// NewCmdPrune returns "kubectl crd prune".
func NewCmdPrune(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PruneOptions{IOStreams: streams, cluster: newCluster(configFlags),
		outputFlags: newOutputFlags("output format: yaml (comments kept) or json (a List); sarif, junit or github: a report of the findings, for CI, instead of the objects",
			reportFormats("yaml", "json")...),
		inputs: inputFlags{usage: inputUsage{
			Filename:  "files or directories with the objects, - for stdin (repeatable)",
			Recursive: "read directories recursively (for -f and --crd-file)",
			CRDFile:   "CustomResourceDefinition files or directories (repeatable)",
		}}}
	cmd := &cobra.Command{
		Use:               "prune -f FILE|DIR|- [-R] [--crd-file FILE|DIR]... [-o yaml|json|sarif|junit|github] [--report FILE|-] [--defaults] [--fail-on-prune] [--in-place|--diff]",
		Short:             "Show what the API server stores: unknown fields pruned, with a report of every dropped field",
		Long:              pruneLong,
		Example:           pruneExample,
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
	o.inputs.cluster = o.cluster
	o.outputFlags.AddFlags(cmd)
	cmd.Flags().StringVar(&o.Report, "report", "", "write a JSON report of every change to this file, - for stdout")
	cmd.Flags().BoolVar(&o.Defaults, "defaults", false, "apply the schema's defaults as the server does (the output is what it stores)")
	cmd.Flags().BoolVar(&o.FailOnPrune, "fail-on-prune", false, "exit 1 if the server would change anything (adds Prune to --fail-on)")
	o.gateFlags.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.Offline, "offline", false, "never contact a cluster: schemas only from --crd-file and the inputs")
	o.kubeVersion.AddFlags(cmd, "without --offline")
	cmd.Flags().BoolVar(&o.InPlace, "in-place", false, "rewrite the files of -f that change with what the server would store (comments kept), print nothing")
	cmd.Flags().BoolVar(&o.Diff, "diff", false, "print what --in-place would change as a unified diff, change nothing; exit 1 if anything would")
	completeFiles(cmd, "report")
	return cmd
}

// pruneLong and pruneExample are the help of the command.
const (
	pruneLong = `Run the API server's request-path coercion on custom resources: pruning of fields the schema does
not specify, unknown metadata fields, nulls of non-nullable fields, metadata normalization and, with
--defaults, the schema's defaults. Prints the objects as the server would store them; YAML keeps your
comments, key order and formatting, minus the dropped fields. Every change is reported on stderr
with its reason and source line.

Then the server's own validation of a create runs on each object (schema, x-kubernetes-validations
CEL rules, metadata, list types): every reason it would refuse an object is an Error line on stderr,
in the server's words, and prune exits 1. Such an object is printed all the same.

Schemas come from the cluster of your kubeconfig (--context, --kubeconfig, ...), read once per run and
only when an object needs one; --crd-file adds or overrides CRDs, and CustomResourceDefinitions among
the inputs override both: you are about to apply them. A CRD among the inputs is printed as the
server stores it (its defaults, what its encoding drops: docs/crd-drift.md), each change a warning. An object of a
kind that no CRD defines and the cluster does not serve is refused, as kubectl apply would be.

With --offline the cluster is never contacted: schemas come only from --crd-file and the inputs. An
object of a kind that no CRD defines passes through unchecked, and is an error (exit 1: a typo in
its apiVersion would pass unchecked) unless --ignore-missing-crds makes it a warning.

-o sarif, -o junit and -o github print, instead of the objects (with --in-place, after writing the
files), a report of every finding for CI:
SARIF 2.1.0 for code scanning, JUnit XML for test reports, GitHub workflow commands for annotations
on the lines of the files (docs/reports.md). The exit code is the same.

--in-place rewrites each file of -f that changes with what the server would store, comments and
layout kept, and prints nothing; --diff prints what it would change as a unified diff and exits 1
if anything would. A file whose edits cannot keep its comments is refused, and then no file is
written.
` + exitCodesHelp

	pruneExample = `  # What will the cluster of the current context drop from these objects?
  kubectl crd prune -f cr.yaml

  # The same against another cluster, for objects without a namespace in "staging"
  kubectl crd prune --context staging -n staging -f manifests/ -R

  # Offline: schemas from files only
  kubectl crd prune --offline --crd-file examples/maintenance/crd.yaml -f examples/maintenance/job.yaml

  # The object the server stores, defaults included, as JSON
  kubectl crd prune --crd-file crds/ -f cr.yaml --defaults -o json

  # Clean a GitOps repository: see what would change, then rewrite the files
  kubectl crd prune --crd-file crds/ -R -f apps/ --diff
  kubectl crd prune --crd-file crds/ -R -f apps/ --in-place

  # A CI gate: fail when anything would be dropped; a JSON report for the build log
  kustomize build overlays/prod | kubectl crd prune --crd-file crds/ -R -f - --fail-on-prune --report report.json

  # The findings for CI: SARIF for code scanning, JUnit for test reports, GitHub annotations
  kubectl crd prune --offline --crd-file crds/ -R -f apps/ -o sarif > prune.sarif
  kubectl crd prune --offline --crd-file crds/ -R -f apps/ -o junit > prune.xml
  kubectl crd prune --offline --crd-file crds/ -R -f apps/ -o github`
)

// Complete builds the engine's catalog: the cluster unless --offline, and the
// namespace of -n or the kubeconfig's context.
func (o *PruneOptions) Complete(cmd *cobra.Command, args []string) error {
	o.catalog = newCatalog(o.cluster, o.Offline, false)
	o.inputs.offline = o.Offline
	o.reportSet = cmd.Flags().Changed("report")
	return o.gateFlags.Complete(cmd)
}

// Validate checks the flags.
func (o *PruneOptions) Validate() error {
	if len(o.inputs.Filenames) == 0 {
		return usageErrorf("no input: give objects with -f FILE|DIR|-")
	}
	if err := o.inputs.Validate(); err != nil {
		return err
	}
	if err := o.outputFlags.Validate(); err != nil {
		return err
	}
	if err := o.kubeVersion.Validate(); err != nil {
		return err
	}
	return o.validateWrites()
}

// Run reads schemas and objects, prunes, prints. It streams: a first pass
// over the inputs adds the CRDs to the catalog and collects the kinds of
// the objects, a second checks and prints one document at a time
// (objectStream). What it prints is held in spools until the last document
// is checked, so that nothing reaches a pipeline when a document is bad.
func (o *PruneOptions) Run(ctx context.Context) (err error) {
	defer func() { o.kubeVersion.warnUnknown(o.ErrOut, err) }()
	if err := o.kubeVersion.Use(ctx, liveCluster(o.cluster, !o.Offline), o.ErrOut); err != nil {
		return err
	}
	in, err := o.load(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := o.newPruneOutput()
	if err != nil {
		return err
	}
	defer out.Close()
	failed, errs, err := o.check(ctx, in, out)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		// Nothing on stdout: a pipeline must not apply a half-checked stream.
		return inputErrors(o.ErrOut, errs)
	}
	rewrote, err := out.Finish(in.Warnings)
	if err != nil {
		return err
	}
	// An object that fails the gate is printed all the same, pruned: the
	// output stays the input as the server sees it, and a pipeline that
	// applies it gets the server's own refusal rather than a stream with
	// an object silently missing.
	if failed || in.Failing() || (o.Diff && rewrote) {
		return errFindings
	}
	return nil
}

// load is the first pass: the CRDs added, the kinds of the objects
// resolved. Objects in another namespace than an explicit -n are refused,
// as kubectl apply refuses them.
func (o *PruneOptions) load(ctx context.Context) (*objectStream, error) {
	cat := o.catalog
	var nsErr error
	in, err := o.inputs.scanObjects(ctx, o.In, o.ErrOut, cat, o.gate, func(d *document.Document) error {
		if err := cat.Namespaces().Check(d); err != nil && nsErr == nil {
			nsErr = inputError(err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := in.Resolve(ctx, cat, o.ErrOut); err != nil {
		in.Close()
		return nil, err
	}
	if nsErr != nil {
		in.Close()
		return nil, nsErr
	}
	return in, nil
}

// check is the second pass: the documents checked on every core
// (catalog.Check), reported and written in their order. failed: a finding
// fails the gate; errs are the objects the server would not decode.
func (o *PruneOptions) check(ctx context.Context, in *objectStream, out *pruneOutput) (failed bool, errs []error, err error) {
	opts := catalog.CheckOptions{Defaults: o.Defaults, Gate: o.gate, StoredCRDs: true}
	o.progress = newProgress(o.ErrOut, in.Objects, "objects")
	defer o.progress.clear()
	done := 0
	err = ordered.Map(ordered.Workers(), in.Documents, func(d *document.Document) []verdict {
		objs := d.Objects()
		out := make([]verdict, len(objs))
		for i, obj := range objs {
			out[i].v, out[i].err = o.catalog.Check(ctx, obj, opts) // in the namespace where kubectl apply puts it
		}
		return out
	}, func(d *document.Document, checked []verdict) error {
		var results []*prune.Result
		for _, c := range checked {
			o.progress.step(done)
			done++
			if c.err != nil {
				errs = append(errs, c.err)
				continue
			}
			results = append(results, c.v.Result)
			failed = o.warn(c.v) || failed
			if err := out.AddVerdict(c.v); err != nil {
				return err
			}
		}
		if len(errs) > 0 {
			return nil // nothing more is written: the run fails
		}
		return out.Add(d, results)
	})
	return failed, errs, err
}

// verdict is what the catalog's Check says of an object.
type verdict struct {
	v   *catalog.Verdict
	err error
}

// warn prints a line per finding, kubectl-style: an error when the
// engine's verdict on it fails the run (failed), else a warning.
func (o *PruneOptions) warn(v *catalog.Verdict) (failed bool) {
	o.progress.clear()
	return printFindings(o.ErrOut, v.Result.Object, v.Result.Source, v.Findings)
}

// printFindings prints findings about obj of src, a line each: "Error"
// when the gate's verdict on the finding fails the run (failed), else
// "Warning".
func printFindings(w io.Writer, obj document.ObjectRef, src document.Source, findings []finding.Judged) (failed bool) {
	for _, f := range findings {
		level := "Warning"
		if f.Fails {
			level, failed = "Error", true
		}
		printable.Fprintf(w, "%s: %s: %s (%s)\n", level, obj, f.Message, document.Source{File: src.File, Line: f.Line})
	}
	return failed
}

// jsonString is v as compact JSON, for messages.
func jsonString(v interface{}) string { return finding.JSON(v) }
