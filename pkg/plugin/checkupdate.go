package plugin

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin/report"
)

// CheckUpdateOptions are the options of "kubectl crd check-update".
type CheckUpdateOptions struct {
	kubeVersion kubeVersionFlag
	inputs      inputFlags
	outputFlags
	Offline bool
	// Objects, Strict and ChunkSize are for a CRD upgrade: the existing
	// objects' files, exit 1 on any harmful change, the list page size.
	Objects   []string
	Strict    bool
	ChunkSize int64
	// MigrationPlan: the plan of the storage-version migration of each
	// upgrade that moves the storage version (text and json).
	MigrationPlan bool
	gateFlags

	cluster *cluster
	catalog *catalog.Catalog
	genericiooptions.IOStreams
}

// NewCmdCheckUpdate returns "kubectl crd check-update".
func NewCmdCheckUpdate(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := newCheckUpdateOptions(configFlags, streams)
	cmd := &cobra.Command{
		Use:               "check-update -f NEW [--old OLD] [--crd-file CRD]... [--objects OBJECTS]... [-o text|json|sarif|junit|github]",
		Short:             "Tell whether the API server, or the CRD's mutability markers, would refuse an update; what a CRD upgrade breaks",
		Long:              checkUpdateLong,
		Example:           checkUpdateExample,
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
	cmd.Flags().BoolVar(&o.Offline, "offline", false, "never contact a cluster: old objects from --old, schemas from --crd-file and the inputs")
	o.kubeVersion.AddFlags(cmd, "without --offline")
	cmd.Flags().StringSliceVar(&o.Objects, "objects", nil, "CRD upgrade: files or directories with the existing objects (default: offline, the old objects of --old; else list them from the cluster)")
	completeFiles(cmd, "objects")
	o.addUpgradeFlags(cmd)
	cmd.Flags().BoolVar(&o.MigrationPlan, "migration-plan", false, "CRD upgrade that moves the storage version: the plan of the storage-version migration (the StorageVersionMigration to apply, what each object's rewrite loses or why it is refused, whether status.storedVersions may then be trimmed)")
	return cmd
}

// newCheckUpdateOptions are check-update's options, on the cluster of
// configFlags: the command's, and those of the Helm plugin's commands,
// which run the same check on what Helm renders (helm.go).
func newCheckUpdateOptions(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *CheckUpdateOptions {
	return &CheckUpdateOptions{IOStreams: streams, cluster: newCluster(configFlags),
		outputFlags: newOutputFlags("output format: text or json; sarif, junit or github: a report of the findings, for CI", reportFormats("text", "json")...),
		inputs: inputFlags{replaces: true, charts: true, usage: inputUsage{
			Filename:  "files or directories with the new objects or CRDs, - for stdin, or Helm charts whose CRDs are the new ones (a directory with Chart.yaml, a .tgz, https://repo#chart@version, oci://...) (repeatable)",
			Old:       "files or directories with the old objects and CRDs (default: read them from the cluster)",
			Recursive: "read directories recursively",
			CRDFile:   "CustomResourceDefinition files or directories (repeatable)",
		}}}
}

// addUpgradeFlags registers what decides a CRD upgrade's verdict against
// the cluster: --strict, the gate's flags, --chunk-size.
func (o *CheckUpdateOptions) addUpgradeFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.Strict, "strict", false, "CRD upgrade: exit 1 on any Breaking, DataLoss or Invalid change, whether or not it hurts an object")
	o.gateFlags.AddFlags(cmd)
	cmd.Flags().Int64Var(&o.ChunkSize, "chunk-size", 500, "CRD upgrade: list the cluster's objects this many at a time (0: all in one request)")
}

// checkUpdateLong and checkUpdateExample are the help of the command.
const (
	checkUpdateLong = `Compare each new object with its old version, as the API server stores both (pruned and
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

CRD upgrades: when -f holds CustomResourceDefinitions, each is compared with the version it
replaces (of --old, else the cluster's): the server's own CRD update validation, versions, names,
scope, and per version the fields removed, types changed, required fields added, enum, pattern,
format and bounds tightened, list types, defaults and rules, each with a severity (Breaking,
DataLoss, Invalid, Warning, Info). Then every existing object (of --objects; else, offline, the
objects of --old; else listed from the cluster in every served version, --chunk-size at a time) is
run through the new CRD as the server runs it: what it loses when read (pruning), why a create of
it again, or even an unchanged update (ratcheting), would be refused. -f also takes Helm charts,
as --old does: a chart's CRDs, rendered with --set and --values, are the new CRDs, so that
--old CHART@X -f CHART@Y checks a chart's upgrade. Exit 1 when a Breaking,
DataLoss or Invalid change hurts at least one object or the server refuses the CRD update
(--strict: when one exists at all); with --fail-on naming CRDChange, on any change that loses
nothing.

--migration-plan adds, for an upgrade that moves the storage version, the plan of the migration:
the StorageVersionMigration to apply (the API of the Kubernetes minor answering) or how to rewrite
every object without it, what each object's rewrite loses or why the server refuses it, and
whether status.storedVersions may then be trimmed, with the patch.

-o sarif, -o junit and -o github print every finding, of the objects and of CRD upgrades, for CI:
SARIF 2.1.0 for code scanning, JUnit XML for test reports, GitHub workflow commands for annotations
(docs/reports.md). The exit code is the same.
` + exitCodesHelp

	checkUpdateExample = `  # Would applying these objects be refused by the cluster?
  kubectl crd check-update -f cr.yaml

  # Offline: against the previously applied objects and the CRD file
  kubectl crd check-update --offline --crd-file crd.yaml --old applied/ -f rendered/ -R

  # For CI: the verdict as JSON
  kubectl crd check-update --crd-file crd.yaml --old old.yaml -f new.yaml -o json

  # A CRD upgrade: what does the new CRD do to the cluster's objects?
  kubectl crd check-update -f crds/new.yaml

  # Offline: the old CRD and the objects from files
  kubectl crd check-update --offline --old crds/old.yaml --objects backup/ -R -f crds/new.yaml

  # Chart to chart: the CRDs of a chart's next version against the cluster's objects
  kubectl crd check-update --old oci://registry.example/charts/app:1.0.0 -f oci://registry.example/charts/app:2.0.0 --set crds.enabled=true

  # The findings for CI: SARIF for code scanning, JUnit for test reports, GitHub annotations
  kubectl crd check-update --offline --crd-file crd.yaml --old applied/ -f rendered/ -R -o sarif > check-update.sarif
  kubectl crd check-update --offline --old crds/old.yaml --objects backup/ -R -f crds/new.yaml -o junit > upgrade.xml
  kubectl crd check-update --offline --crd-file crd.yaml --old applied/ -f rendered/ -R -o github`
)

// Complete builds the engine's catalog: the cluster unless --offline (old
// objects from it when --old gives none), and the namespace of -n or the
// kubeconfig's context.
func (o *CheckUpdateOptions) Complete(cmd *cobra.Command, args []string) error {
	o.catalog = newCatalog(o.cluster, o.Offline, len(o.inputs.Old) == 0)
	o.inputs.offline = o.Offline
	return o.gateFlags.Complete(cmd)
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
	if o.ChunkSize < 0 {
		return usageErrorf("--chunk-size must be 0 or more, not %d", o.ChunkSize)
	}
	for _, name := range o.Objects {
		if _, err := formOf("--objects", "check-update", name, false); err != nil {
			return err
		}
		if name == "-" && o.inputs.readsStdin() {
			return usageErrorf("standard input (-) is named by both --objects and another input: it can be read only once")
		}
	}
	if err := o.kubeVersion.Validate(); err != nil {
		return err
	}
	if o.MigrationPlan && report.IsFormat(o.Output) {
		return usageErrorf("--migration-plan is for -o text and json: -o %s reports findings, and the plan is none", o.Output)
	}
	return o.outputFlags.Validate()
}

// updateItem is an item of the -o json contract, {"items": [...]}: fields
// are added, never renamed. It is the engine's outcome of the update
// (catalog.Verdict.Update); findings are the verdict's, judged.
type updateItem struct {
	Object     document.ObjectRef `json:"object"`
	Source     document.Source    `json:"source"`
	Status     string             `json:"status"`
	Violations []update.Finding   `json:"violations"`
	Warnings   []prune.Change     `json:"warnings"`
	// Deprecated is the server's warning on the object's version, which
	// its CRD deprecates.
	Deprecated string `json:"deprecated,omitempty"`
	// Unserved is the object's version, when its CRD's upgrade removes it
	// or no longer serves it (status Unserved).
	Unserved *crdupgrade.VersionUse `json:"unserved,omitempty"`

	findings []finding.Judged
}

// Run reads schemas, old and new objects, checks each new object with the
// engine, and reports. It streams as prune does (objectStream): a first
// pass adds the CRDs and the old objects to the catalog and collects the
// kinds of the new objects, a second checks one object at a time; the
// report is held in a spool until the last object is checked.
func (o *CheckUpdateOptions) Run(ctx context.Context) (err error) {
	defer func() { o.kubeVersion.warnUnknown(o.ErrOut, err) }()
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.kubeVersion.Use(ctx, liveCluster(o.cluster, !o.Offline), o.ErrOut); err != nil {
		return err
	}
	var findings *reportOutput // -o sarif, junit, github
	if report.IsFormat(o.Output) {
		var err error
		if findings, err = newReportOutput(o.Output, "check-update"); err != nil {
			return err
		}
		defer findings.Close()
	}
	upgrade := newUpgradeCheck(o.Output == "json", findings, o.gate)
	defer upgrade.Close()
	in, err := o.load(ctx, upgrade)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := newUpdateOutput(o.Output, o.gate, findings)
	if err != nil {
		return err
	}
	defer out.Close()
	if in.loader.Replacing() {
		if err := out.addUpgrades(upgrade, o.Strict); err != nil {
			return err
		}
	}
	failed := upgrade.failed(o.Strict, o.gate)
	refused, err := o.check(ctx, in, out)
	if err != nil {
		return err // nothing printed: the report of some objects is no verdict
	}
	if err := out.Finish(o.Out, o.ErrOut, in.Warnings); err != nil {
		return err
	}
	if failed || refused || in.Failing() {
		return errFindings
	}
	return nil
}

// load is the first pass, then the CRD upgrade of -f if any. Objects that
// do not say what they are, and old objects the server cannot have stored,
// would be skipped or match nothing: they are refused all before anything
// is looked up.
func (o *CheckUpdateOptions) load(ctx context.Context, upgrade *upgradeCheck) (*objectStream, error) {
	var errs []error
	in, err := o.inputs.scanObjects(ctx, o.In, o.ErrOut, o.catalog, o.gate, func(d *document.Document) error {
		if _, _, err := document.Identify(d); err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = inputErrors(o.ErrOut, append(errs, in.OldErrors...))
	var run *catalog.Resolved
	if err == nil {
		run, err = in.Resolve(ctx, o.catalog, o.ErrOut)
	}
	if err == nil {
		err = o.checkUpgrades(ctx, upgrade, in.loader.Replacing(), run)
	}
	if err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// check is the second pass: the documents checked on every core (the
// engine's verdict, catalog.Check with UpdateOnly), reported in their
// order. refused: the verdict on an object fails the run (its update
// refused, its kind defined by no CRD).
func (o *CheckUpdateOptions) check(ctx context.Context, in *objectStream, out *updateOutput) (refused bool, err error) {
	opts := catalog.CheckOptions{UpdateOnly: true, Gate: o.gate}
	err = ordered.Map(ordered.Workers(), in.Documents, func(d *document.Document) []updated {
		objs := d.Objects()
		out := make([]updated, 0, len(objs))
		for _, obj := range objs {
			v, err := o.catalog.Check(ctx, obj, opts)
			out = append(out, updated{obj, v, err})
			if err != nil {
				break
			}
		}
		return out
	}, func(d *document.Document, checked []updated) error {
		for _, u := range checked {
			if u.err != nil {
				return asInputError(u.err)
			}
			res := u.v.Update
			if res.Status == catalog.UpdateSkipped {
				continue
			}
			it := updateItem{Object: res.Object, Source: u.obj.Source, Status: string(res.Status), Violations: res.Refused, Warnings: res.Warnings,
				Deprecated: res.Deprecated, Unserved: res.Unserved, findings: u.v.Findings}
			if err := out.Add(it); err != nil {
				return err
			}
			refused = refused || u.v.Fails()
		}
		return nil
	})
	return refused, err
}

// updated is the engine's verdict on an object.
type updated struct {
	obj *document.Document
	v   *catalog.Verdict
	err error
}

// checkUpgrades checks the upgrade of the CRDs of -f, if any (replacing):
// the changes the loader found (run), then the existing objects of
// --objects, else the cluster's.
func (o *CheckUpdateOptions) checkUpgrades(ctx context.Context, u *upgradeCheck, replacing bool, run *catalog.Resolved) error {
	if !replacing {
		if len(o.Objects) > 0 {
			return usageErrorf("--objects: the existing objects of a CRD upgrade, and -f holds no CustomResourceDefinition")
		}
		return nil
	}
	u.upgrades = run.Upgrades
	for _, name := range run.Unreplaced {
		from := "the cluster"
		if o.Offline || len(o.inputs.Old) > 0 {
			from = "--old"
		}
		printable.Fprintf(o.ErrOut, "Warning: CustomResourceDefinition %s: no previous version in %s: a new CRD, no upgrade to check\n", name, from)
	}
	if len(u.upgrades) == 0 {
		return nil
	}
	if o.MigrationPlan {
		u.startPlans()
	}
	known, err := o.existingObjects(ctx, u)
	u.finishPlans(known)
	return err
}

// existingObjects checks the existing objects of the upgrades: of
// --objects; offline, the old objects of --old; else the cluster's.
// known is false when there are none to check.
func (o *CheckUpdateOptions) existingObjects(ctx context.Context, u *upgradeCheck) (known bool, err error) {
	switch {
	case len(o.Objects) > 0:
		if err := u.objectsFromFiles(o.catalog, o.Objects, o.inputs.Recursive, o.In); err != nil {
			return true, err
		}
		if u.skipped > 0 {
			printable.Fprintf(o.ErrOut, "Warning: %s of --objects: of no upgraded CRD's kind and version, not checked\n", plural(u.skipped, "object"))
		}
	case o.Offline && len(o.catalog.OldObjects()) > 0:
		// The old objects are what the cluster holds, as far as files tell.
		return true, u.scan(o.catalog, docsOf(o.catalog.OldObjects()), func(_ *document.Document, err error) error { return inputError(err) }, nil)
	case o.Offline:
		printable.Fprintf(o.ErrOut, "Warning: no existing objects checked: give them with --objects FILE|DIR\n")
		return false, nil
	default:
		return true, u.objectsFromCluster(ctx, o.cluster, o.catalog, o.ChunkSize, o.ErrOut)
	}
	return true, nil
}

// docsOf are docs as a sequence.
func docsOf(docs []*document.Document) catalog.Docs {
	return func(yield func(*document.Document, error) bool) {
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// missing says whether no CRD defines the item's kind: it is not checked.
func (it updateItem) missing() bool { return it.Status == string(catalog.UpdateMissingCRD) }

// printUpdateItem writes an item of the text report: a line per verdict on
// out, what the server drops as warnings on errOut. The verdict's
// findings are its kind defined by no CRD, or the server's warning on a
// deprecated version and what it drops (the first ones, one per warning)
// and why it refuses the update.
func printUpdateItem(out, errOut io.Writer, it updateItem) {
	findings := it.findings
	if it.missing() {
		printFindings(errOut, it.Object, it.Source, findings)
		return
	}
	if it.Status == string(catalog.UpdateUnserved) {
		for _, f := range findings {
			line := it.Source
			if f.Line > 0 {
				line.Line = f.Line
			}
			printable.Fprintf(out, "%s: refused: %s (%s)\n", it.Object, f.Message, line)
		}
		return
	}
	dropped := len(it.Warnings)
	if it.Deprecated != "" {
		dropped++
	}
	printFindings(errOut, it.Object, it.Source, findings[:dropped])
	if it.Status == string(catalog.UpdateCreate) {
		printable.Fprintf(out, "%s: no old object: a create, not an update (%s)\n", it.Object, it.Source)
		return
	}
	if len(it.Violations) == 0 {
		printable.Fprintf(out, "%s: update allowed (%s)\n", it.Object, it.Source)
		return
	}
	for _, f := range findings[dropped:] {
		values := ""
		if f.Value != nil || f.NewValue != nil {
			values = fmt.Sprintf(" (%s -> %s)", jsonOrAbsent(f.Value), jsonOrAbsent(f.NewValue))
		}
		line := it.Source
		if f.Line > 0 {
			line.Line = f.Line
		}
		printable.Fprintf(out, "%s: refused: %s: %s%s (%s)\n", it.Object, f.Path, f.Message, values, line)
	}
}

func jsonOrAbsent(v interface{}) string {
	if v == nil {
		return "absent"
	}
	return jsonString(v)
}
