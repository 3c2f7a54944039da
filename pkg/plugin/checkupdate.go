package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// CheckUpdateOptions are the options of "kubectl crd check-update".
type CheckUpdateOptions struct {
	inputs  inputFlags
	Output  string
	Offline bool

	cluster *cluster
	genericiooptions.IOStreams
}

// NewCmdCheckUpdate returns "kubectl crd check-update".
func NewCmdCheckUpdate(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CheckUpdateOptions{IOStreams: streams, cluster: newCluster(configFlags), inputs: inputFlags{usage: inputUsage{
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
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.inputs.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&o.Offline, "offline", false, "never contact a cluster: old objects from --old, schemas from --crd-file and the inputs")
	completeOutput(cmd, "text", "json")
	return cmd
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
	switch o.Output {
	case "text", "json":
	default:
		return usageErrorf("unknown output format %q: use text or json", o.Output)
	}
	return nil
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

// Statuses of an item.
const (
	updateChecked = "Checked"
	updateCreate  = "Create"     // no old object: nothing to compare
	updateNoCRD   = "MissingCRD" // offline, no CRD known
)

type objectKey struct {
	group, kind, namespace, name string
}

func keyOf(obj map[string]interface{}) objectKey {
	ref := prune.Ref(obj)
	gv, _ := runtimeschema.ParseGroupVersion(ref.APIVersion)
	return objectKey{gv.Group, ref.Kind, ref.Namespace, ref.Name}
}

// Run reads schemas, old and new objects, and reports.
func (o *CheckUpdateOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := o.inputs.Read(o.In)
	if err != nil {
		return err
	}
	fileCRDs, err := in.fileCRDs()
	if err != nil {
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
	olds := map[objectKey]*document.Document{}
	for _, d := range in.Old {
		if err := update.ValidateOld(d); err != nil {
			errs = append(errs, err)
			continue
		}
		olds[keyOf(d.Object)] = d
	}
	if err := inputErrors(o.ErrOut, errs); err != nil {
		return err
	}
	crds := make([]*schema.CRD, len(fileCRDs))
	for i, c := range fileCRDs {
		crds[i] = c.CRD
	}
	kinds := newKindSet()
	for _, d := range docs {
		kinds.Add(d)
	}
	reg, unserved, err := registry(ctx, o.cluster, o.Offline, crds, kinds)
	if err != nil {
		return err
	}
	if err := inputErrors(o.ErrOut, refusedObjects(docs, unserved)); err != nil {
		return err
	}
	// Mutability markers, from the CRD files only (last one wins, as in the registry).
	markers := map[runtimeschema.GroupKind]map[string]*update.Schema{}
	for _, c := range fileCRDs {
		m, _ := update.CRDSchemas(c.Raw)
		markers[c.CRD.GroupKind()] = m
	}
	namespace, explicit := o.cluster.Namespace()
	// The namespace the request would have: kubectl apply gives an object without one the
	// context's, else "default". Offline, reports only name a namespace the user gave.
	requestNamespace := namespace
	if requestNamespace == "" {
		requestNamespace = "default"
	}
	if o.Offline && !explicit {
		namespace = ""
	}

	validators := strategy.Validators{}
	var report updateReport
	refused := false
	for _, d := range docs {
		ref, gv, _ := prune.Identify(d) // checked above
		item := updateItem{Object: ref, Source: d.Source, Violations: []update.Finding{}, Warnings: []prune.Change{}}
		crd, ok := reg.Lookup(ref.APIVersion, ref.Kind)
		switch {
		case schema.IsCRD(ref.APIVersion, ref.Kind) || (!ok && builtin.IsBuiltin(ref.APIVersion)):
			continue
		case !ok:
			item.Status = updateNoCRD
			report.Items = append(report.Items, item)
			continue
		}
		if item.Object.Namespace == "" && !crd.ClusterScoped() {
			item.Object.Namespace = namespace
		}
		if crd.ClusterScoped() {
			item.Object.Namespace = ""
		}
		s, err := crd.ServedSchema(gv.Version)
		if err != nil {
			return inputError(&document.InputError{Source: d.Source, Msg: err.Error()})
		}
		// The server decodes the request before it reads the old object: what
		// it cannot decode (metadata: "x") is the input's fault, whatever the cluster.
		stored, err := prune.Store(d.Object, crd, gv.Version, true)
		if err != nil {
			return inputError(&document.InputError{Source: d.Source, Msg: "the server would refuse this object: " + err.Error()})
		}
		key := objectKey{gv.Group, ref.Kind, item.Object.Namespace, ref.Name}
		var old map[string]interface{}
		if od, ok := olds[key]; ok {
			old = od.Object
		} else if od, ok := olds[keyOf(d.Object)]; ok {
			old = od.Object
		} else if !o.Offline && len(o.inputs.Old) == 0 && ref.Name != "" {
			// Without a name (generateName), there is no old object to ask for.
			plural := crd.Object.Spec.Names.Plural
			old, err = o.cluster.GetObject(ctx, gv.WithResource(plural), item.Object.Namespace, ref.Name)
			if err != nil {
				return err
			}
		}
		if old == nil {
			// A create: only what the server drops is worth saying.
			item.Status = updateCreate
			item.Warnings = warningsOf(d, prune.Changes(d.Object, stored, s))
			report.Items = append(report.Items, item)
			continue
		}
		validator, err := validators.For(crd, gv.Version)
		if err != nil {
			return inputError(&document.InputError{Source: d.Source, Msg: err.Error()})
		}
		newObj := d.Object
		if !crd.ClusterScoped() {
			ns := item.Object.Namespace
			if ns == "" {
				ns = requestNamespace
			}
			newObj, old = update.InNamespace(newObj, ns), update.InNamespace(old, ns)
		}
		out, err := update.Check(old, newObj, crd, markers[crd.GroupKind()][gv.Version], validator)
		if err != nil {
			return inputError(&document.InputError{Source: d.Source, Msg: err.Error()})
		}
		item.Status = updateChecked
		for _, f := range out.Refused {
			f.Line = lineOfPath(d, f.Path)
			item.Violations = append(item.Violations, f)
		}
		item.Warnings = warningsOf(d, out.Pruned)
		refused = refused || len(item.Violations) > 0
		report.Items = append(report.Items, item)
	}

	if o.Output == "json" {
		if report.Items == nil {
			report.Items = []updateItem{}
		}
		enc := json.NewEncoder(o.Out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else {
		o.printText(report)
	}
	if refused {
		return errFindings
	}
	return nil
}

// warningsOf keeps what the server drops or changes of the new object
// (defaults are no news), with source lines.
func warningsOf(d *document.Document, changes []prune.Change) []prune.Change {
	out := []prune.Change{}
	for _, ch := range changes {
		if ch.Reason == prune.Defaulted {
			continue
		}
		ch.Line = prune.LineOf(d, ch)
		out = append(out, ch)
	}
	return out
}

func (o *CheckUpdateOptions) printText(report updateReport) {
	for _, it := range report.Items {
		if it.Status == updateNoCRD {
			fmt.Fprintf(o.ErrOut, "Warning: %s: no CustomResourceDefinition for %s, kind %s: not checked (%s)\n", it.Object, it.Object.APIVersion, it.Object.Kind, it.Source)
			continue
		}
		for _, w := range it.Warnings {
			fmt.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", it.Object, describeChange(w, &prune.Result{Object: it.Object}), document.Source{File: it.Source.File, Line: w.Line})
		}
		if it.Status == updateCreate {
			fmt.Fprintf(o.Out, "%s: no old object: a create, not an update (%s)\n", it.Object, it.Source)
			continue
		}
		if len(it.Violations) == 0 {
			fmt.Fprintf(o.Out, "%s: update allowed (%s)\n", it.Object, it.Source)
			continue
		}
		for _, v := range it.Violations {
			values := ""
			if v.Old != nil || v.New != nil {
				values = fmt.Sprintf(" (%s -> %s)", jsonOrAbsent(v.Old), jsonOrAbsent(v.New))
			}
			line := it.Source
			if v.Line > 0 {
				line.Line = v.Line
			}
			fmt.Fprintf(o.Out, "%s: refused: %s: %s: %s%s (%s)\n", it.Object, v.Path, v.Rule, v.Message, values, line)
		}
	}
}

func jsonOrAbsent(v interface{}) string {
	if v == nil {
		return "absent"
	}
	return jsonString(v)
}

// lineOfPath finds the source line of a path in the server's format, or of
// its nearest ancestor in the document; 0 when none is found.
func lineOfPath(d *document.Document, path string) int {
	for p := fieldpath.Parse(path); len(p) > 0; p = p[:len(p)-1] {
		if l := d.Line(p); l > 0 {
			return l
		}
	}
	return 0
}
