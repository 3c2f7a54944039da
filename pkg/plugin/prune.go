package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// PruneOptions are the options of "kubectl crd prune".
type PruneOptions struct {
	inputs      inputFlags
	Output      string
	Report      string
	Defaults    bool
	FailOnPrune bool
	Offline     bool
	InPlace     bool
	Diff        bool

	cluster  *cluster
	progress *progress
	genericiooptions.IOStreams
}

// NewCmdPrune returns "kubectl crd prune".
func NewCmdPrune(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PruneOptions{IOStreams: streams, cluster: newCluster(configFlags), inputs: inputFlags{usage: inputUsage{
		Filename:  "files or directories with the objects, - for stdin (repeatable)",
		Recursive: "read directories recursively (for -f and --crd-file)",
		CRDFile:   "CustomResourceDefinition files or directories (repeatable)",
	}}}
	cmd := &cobra.Command{
		Use:   "prune -f FILE|DIR|- [-R] [--crd-file FILE|DIR]... [-o yaml|json] [--report FILE|-] [--defaults] [--fail-on-prune] [--in-place|--diff]",
		Short: "Show what the API server stores: unknown fields pruned, with a report of every dropped field",
		Long: `Run the API server's request-path coercion on custom resources: pruning of fields the schema does
not specify, unknown metadata fields, nulls of non-nullable fields, metadata normalization and, with
--defaults, the schema's defaults. Prints the objects as the server would store them; YAML keeps your
comments, key order and formatting, minus the dropped fields. Every change is reported on stderr
with its reason and source line.

Then the server's own validation of a create runs on each object (schema, x-kubernetes-validations
CEL rules, metadata, list types): every reason it would refuse an object is an Error line on stderr,
in the server's words, and prune exits 1. Such an object is printed all the same.

Schemas come from the cluster of your kubeconfig (--context, --kubeconfig, ...), read once per run and
only when an object needs one; --crd-file adds or overrides CRDs, and CustomResourceDefinitions among
the inputs (which pass through unchanged) override both: you are about to apply them. An object of a
kind that no CRD defines and the cluster does not serve is refused, as kubectl apply would be.

With --offline the cluster is never contacted: schemas come only from --crd-file and the inputs, and
an object whose CRD is unknown passes through with a warning.

--in-place rewrites each file of -f that changes with what the server would store, comments and
layout kept, and prints nothing; --diff prints what it would change as a unified diff and exits 1
if anything would. A file whose edits cannot keep its comments is refused, and then no file is
written.
` + exitCodesHelp,
		Example: `  # What will the cluster of the current context drop from these objects?
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
  kustomize build overlays/prod | kubectl crd prune --crd-file crds/ -R -f - --fail-on-prune --report report.json`,
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
	cmd.Flags().StringVar(&o.Report, "report", "", "write a JSON report of every change to this file, - for stdout")
	cmd.Flags().BoolVar(&o.Defaults, "defaults", false, "apply the schema's defaults as the server does (the output is what it stores)")
	cmd.Flags().BoolVar(&o.FailOnPrune, "fail-on-prune", false, "exit 1 if the server would change anything")
	cmd.Flags().BoolVar(&o.Offline, "offline", false, "never contact a cluster: schemas only from --crd-file and the inputs")
	cmd.Flags().BoolVar(&o.InPlace, "in-place", false, "rewrite the files of -f that change with what the server would store (comments kept), print nothing")
	cmd.Flags().BoolVar(&o.Diff, "diff", false, "print what --in-place would change as a unified diff, change nothing; exit 1 if anything would")
	completeFiles(cmd, "report")
	completeOutput(cmd, "yaml", "json")
	return cmd
}

// Validate checks the flags.
func (o *PruneOptions) Validate() error {
	if len(o.inputs.Filenames) == 0 {
		return usageErrorf("no input: give objects with -f FILE|DIR|-")
	}
	if err := o.inputs.Validate(); err != nil {
		return err
	}
	switch o.Output {
	case "yaml", "json":
	default:
		return usageErrorf("unknown output format %q: use yaml or json", o.Output)
	}
	return o.validateWrites()
}

// pruneReport is the --report contract: fields are added, never renamed.
type pruneReport struct {
	Items []*prune.Result `json:"items"`
	// Warnings are about the inputs themselves (duplicate keys, ...).
	Warnings []inputWarning `json:"warnings"`
}

// Run reads schemas and objects, prunes, prints. It streams: a first pass
// over the inputs finds the CRDs and the kinds of the objects, a second
// checks and prints one document at a time (objectStream). What it prints is
// held in a spool until the last document is checked, so that nothing
// reaches a pipeline when a document is bad.
func (o *PruneOptions) Run() error {
	kinds := newKindSet()
	var nsErr error
	in, err := o.inputs.Scan(o.In, func(d *document.Document) error {
		kinds.Add(d)
		if nsErr == nil {
			nsErr = o.checkNamespace(d)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer in.Close()
	in.warn(o.ErrOut)
	o.inputs.warnNoObjects(o.ErrOut, in.Objects)
	fileCRDs := make([]*schema.CRD, len(in.CRDs))
	for i, c := range in.CRDs {
		fileCRDs[i] = c.CRD
	}
	reg, refused, err := registry(context.Background(), o.cluster, o.Offline, fileCRDs, kinds)
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		return o.refuseKinds(in, refused)
	}
	if nsErr != nil {
		return nsErr
	}
	// Objects without a namespace go to -n, else (live) the context's namespace.
	namespace, explicit := o.cluster.Namespace()
	// Validation needs the namespace of the request even offline: kubectl apply's, the
	// context's when -n is not given ("default" when neither names one).
	requestNamespace := namespace
	if o.Offline && !explicit {
		namespace = ""
	}

	out, err := o.newPruneOutput()
	if err != nil {
		return err
	}
	defer out.Close()
	var (
		errs    []error
		changed bool
		invalid bool
		done    int
	)
	opts := prune.Options{Defaults: o.Defaults, Validate: strategy.Validators{}, Namespace: requestNamespace}
	o.progress = newProgress(o.ErrOut, in.Objects, "objects")
	err = in.Documents(func(d *document.Document) error {
		var results []*prune.Result
		for _, obj := range d.Objects() {
			o.progress.step(done)
			done++
			res, err := prune.Document(obj, reg, opts)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			checked := res.Status == prune.Checked || res.Status == prune.Invalid
			if res.Object.Namespace == "" && checked && namespace != "" && namespaced(reg, res.Object) {
				res.Object.Namespace = namespace // where kubectl apply puts it
			}
			results = append(results, res)
			o.warn(res)
			if len(res.Changes) > 0 {
				changed = true
			}
			invalid = invalid || res.Status == prune.Invalid
		}
		if len(errs) > 0 {
			return nil // nothing more is written: the run fails
		}
		return out.Add(d, results)
	})
	o.progress.clear()
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		// Nothing on stdout: a pipeline must not apply a half-checked stream.
		for _, err := range errs[:len(errs)-1] {
			fmt.Fprintf(o.ErrOut, "error: %v\n", err)
		}
		return inputError(errs[len(errs)-1])
	}
	rewrote, err := out.Finish(in.Warnings)
	if err != nil {
		return err
	}
	// An object the server refuses is a finding whatever --fail-on-prune says: applying the
	// output would fail. It is printed all the same, pruned: the output stays the input as
	// the server sees it, and a pipeline that applies it gets the server's own refusal
	// rather than a stream with an object silently missing.
	if invalid || (o.FailOnPrune && changed) || (o.Diff && rewrote) {
		return errFindings
	}
	return nil
}

// refuseKinds reports every object of a kind the cluster does not serve,
// as kubectl apply refuses each, and fails the run before anything is pruned.
func (o *PruneOptions) refuseKinds(in *objectStream, refused map[kindKey]string) error {
	var errs []error
	err := in.Documents(func(d *document.Document) error {
		errs = append(errs, refusedObjects(d.Objects(), refused)...)
		return nil
	})
	if err != nil {
		return err
	}
	return inputErrors(o.ErrOut, errs)
}

// registry holds the schemas for the objects of kinds: the cluster's CRDs
// (listed only when a kind is in none of the files), overridden by those of
// --crd-file, overridden by those among the inputs. The kinds the cluster
// does not serve (offline: built-in kinds Kubernetes does not have) are
// refused, each with why: kubectl apply would refuse their objects. When
// built-in kinds are refused, nothing else is looked at.
func registry(ctx context.Context, c *cluster, offline bool, fileCRDs []*schema.CRD, kinds kindSet) (*schema.Registry, map[kindKey]string, error) {
	files := schema.NewRegistry()
	for _, c := range fileCRDs {
		files.Add(c)
	}
	if refused, err := builtinRefused(c, offline, kinds); err != nil || len(refused) > 0 {
		return nil, refused, err
	}
	if offline {
		return files, nil, nil
	}
	var unresolved []kindKey
	wanted := map[runtimeschema.GroupKind]bool{}
	for _, k := range kinds.sorted() {
		if schema.IsCRD(k.APIVersion, k.Kind) || builtin.IsBuiltin(k.APIVersion) {
			continue
		}
		if _, ok := files.Lookup(k.APIVersion, k.Kind); !ok {
			unresolved = append(unresolved, k)
			gv, _ := runtimeschema.ParseGroupVersion(k.APIVersion)
			wanted[gv.WithKind(k.Kind).GroupKind()] = true
		}
	}
	if len(unresolved) == 0 {
		return files, nil, nil
	}
	live, err := c.CRDs(ctx)
	if err != nil {
		return nil, nil, err
	}
	reg := schema.NewRegistry()
	for _, l := range live {
		if wanted[l.GroupKind()] {
			reg.Add(l.CRD())
		}
	}
	for _, f := range fileCRDs {
		reg.Add(f)
	}
	refused := map[kindKey]string{}
	for _, k := range unresolved {
		if _, ok := reg.Lookup(k.APIVersion, k.Kind); ok {
			continue
		}
		gv, err := runtimeschema.ParseGroupVersion(k.APIVersion)
		if err != nil {
			continue // prune.Document reports it with the line
		}
		served, err := c.Serves(gv.WithKind(k.Kind))
		if err != nil {
			return nil, nil, err
		}
		if !served {
			refused[k] = fmt.Sprintf(
				"no CustomResourceDefinition defines kind %q in %s, on %s or in the inputs; the API server would refuse it (no matches for kind)",
				k.Kind, k.APIVersion, c.where())
		}
	}
	return reg, refused, nil
}

// kindKey is the apiVersion and kind of an object, as written.
type kindKey struct{ APIVersion, Kind string }

// kindSet are the kinds of the objects of a run: what the schemas are
// looked up for, and what kubectl maps.
type kindSet map[kindKey]bool

func newKindSet() kindSet { return kindSet{} }

// Add adds the kind of d; an object without one is refused later, with its line.
func (k kindSet) Add(d *document.Document) {
	ref := prune.Ref(d.Object)
	if ref.APIVersion != "" && ref.Kind != "" {
		k[kindKey{ref.APIVersion, ref.Kind}] = true
	}
}

func (k kindSet) sorted() []kindKey {
	out := make([]kindKey, 0, len(k))
	for key := range k {
		out = append(out, key)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].APIVersion != out[j].APIVersion {
			return out[i].APIVersion < out[j].APIVersion
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// refusedObjects are the errors for the objects of refused kinds, in order.
func refusedObjects(docs []*document.Document, refused map[kindKey]string) []error {
	var errs []error
	for _, d := range docs {
		ref := prune.Ref(d.Object)
		if why, ok := refused[kindKey{ref.APIVersion, ref.Kind}]; ok {
			errs = append(errs, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("%s: %s", ref, why)})
		}
	}
	return errs
}

// checkNamespace refuses an object whose namespace differs from an
// explicit -n, with kubectl apply's message.
func (o *PruneOptions) checkNamespace(d *document.Document) error {
	ns, explicit := o.cluster.Namespace()
	if !explicit {
		return nil
	}
	ref := prune.Ref(d.Object)
	if ref.Namespace != "" && ref.Namespace != ns {
		return inputError(&document.InputError{Source: d.Source, Msg: fmt.Sprintf(
			"the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
			ref.Namespace, ns, ref.Namespace)})
	}
	return nil
}

func namespaced(reg *schema.Registry, ref prune.ObjectRef) bool {
	crd, ok := reg.Lookup(ref.APIVersion, ref.Kind)
	return ok && crd.Object.Spec.Scope == apiextensionsv1.NamespaceScoped
}

// warn prints a line per change, kubectl-style.
func (o *PruneOptions) warn(res *prune.Result) {
	o.progress.clear()
	switch res.Status {
	case prune.MissingCRD:
		if builtin.IsBuiltin(res.Object.APIVersion) {
			return
		}
		fmt.Fprintf(o.ErrOut, "Warning: %s: no CustomResourceDefinition for %s, kind %s: passed through unchanged (%s)\n",
			res.Object, res.Object.APIVersion, res.Object.Kind, res.Source)
		return
	case prune.IsCRD:
		return
	}
	for _, ch := range res.Changes {
		src := document.Source{File: res.Source.File, Line: ch.Line}
		fmt.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", res.Object, describeChange(ch, res), src)
	}
	for _, e := range res.Errors {
		src := document.Source{File: res.Source.File, Line: e.Line}
		fmt.Fprintf(o.ErrOut, "Error: %s: the server would refuse it: %s (%s)\n", res.Object, e.Message, src)
	}
	if res.StorageUnchecked {
		fmt.Fprintf(o.ErrOut, "Warning: %s: stored as %s through the CRD's conversion webhook: what that version keeps is not checked (%s)\n", res.Object, res.StorageVersion, res.Source)
	}
	if res.Reformatted != "" {
		fmt.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", res.Object, res.Reformatted, res.Source)
	}
}

func describeChange(ch prune.Change, res *prune.Result) string {
	switch ch.Reason {
	case prune.StatusSubresource:
		return fmt.Sprintf("%q is ignored: the CRD has the status subresource, so only writes to /status set it", ch.Path)
	case prune.ClusterScoped:
		return fmt.Sprintf("dropped %q: %s is cluster-scoped", ch.Path, res.Object.Kind)
	case prune.StorageVersion:
		return fmt.Sprintf("pruned %q when stored: not in the schema of the storage version %s", ch.Path, res.StorageVersion)
	case prune.UnknownField:
		return fmt.Sprintf("pruned unknown field %q", ch.Path)
	case prune.UnknownMetadataField:
		return fmt.Sprintf("dropped unknown metadata field %q", ch.Path)
	case prune.NullNonNullable:
		return fmt.Sprintf("dropped null value of non-nullable field %q", ch.Path)
	case prune.Defaulted:
		return fmt.Sprintf("defaulted %q to %s", ch.Path, jsonString(ch.NewValue))
	default:
		switch ch.Action {
		case prune.Removed:
			return fmt.Sprintf("metadata normalized: dropped %q (was %s)", ch.Path, jsonString(ch.Value))
		case prune.Added:
			return fmt.Sprintf("metadata normalized: added %q = %s", ch.Path, jsonString(ch.NewValue))
		default:
			return fmt.Sprintf("metadata normalized: %q %s -> %s", ch.Path, jsonString(ch.Value), jsonString(ch.NewValue))
		}
	}
}

// jsonString is v as compact JSON, for messages.
func jsonString(v interface{}) string {
	b, err := marshalJSON(v, "")
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// marshalJSON encodes v, indented by indent ("" for compact), with a final
// newline; <, > and & are written as they are, as kubectl writes them, not
// escaped for HTML.
func marshalJSON(v interface{}, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
