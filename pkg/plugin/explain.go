package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin/report"
)

// ExplainStructuralOptions are the options of "kubectl crd explain-structural".
type ExplainStructuralOptions struct {
	kubeVersion kubeVersionFlag
	Names       []string
	All         bool
	inputs      inputFlags
	Version     string
	// MinKubeVersion asks every supported minor which accept each CRD.
	MinKubeVersion bool
	outputFlags

	cluster *cluster
	genericiooptions.IOStreams
}

// NewCmdExplainStructural returns "kubectl crd explain-structural".
func NewCmdExplainStructural(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ExplainStructuralOptions{IOStreams: streams, cluster: newCluster(configFlags),
		outputFlags: newOutputFlags("output format: text, yaml or json; sarif, junit or github: a report of the findings, for CI", reportFormats("text", "yaml", "json")...),
		inputs: inputFlags{usage: inputUsage{
			Filename:  "CRD files or directories to read, - for stdin (repeatable)",
			Recursive: "read directories given with -f recursively",
		}}}
	cmd := &cobra.Command{
		Use:   "explain-structural (NAME... | --all | -f FILE|DIR|- [-R]) [--version V] [-o text|yaml|json|sarif|junit|github]",
		Short: "Tell whether CRD schemas are structural, and show the skeleton pruning sees",
		Long: `Check every CustomResourceDefinition in the inputs the way the API server's NonStructuralSchema
condition does: the violations are the server's own, with its field paths. Then show, per version,
the skeleton the server prunes and defaults with (the schema without value validations): types,
nullable, defaults and every x-kubernetes-* marker. A CRD from a file also goes through the server's
own validation of CustomResourceDefinitions: what would make it refuse to create the CRD is
reported, in its words.

CRDs are read from the cluster of your kubeconfig by NAME (the CRD's name, or its plural, singular,
kind or a short name, optionally with .group), all of them with --all, or from files with -f.
For a CRD from the cluster, the server's own NonStructuralSchema condition is shown too: legacy
CRDs created through apiextensions.k8s.io/v1beta1 may still carry it.

--min-kube-version asks the API server of every Kubernetes minor answered which of them accept
each CRD: the oldest one that does, and the first reason of each that refuses it (a CEL library
it does not compile yet). The exit code stays that of the minor that answers the run.

-o sarif, -o junit and -o github print the findings for CI, without the skeletons: SARIF 2.1.0 for
code scanning, JUnit XML for test reports (a testcase per CRD), GitHub workflow commands for
annotations (docs/reports.md). The exit code is the same.
` + exitCodesHelp,
		Example: `  # Is this CRD of the cluster structural? What does pruning see?
  kubectl crd explain-structural certificates.cert-manager.io

  # Every CRD of the cluster: exit 1 if any is not structural
  kubectl crd explain-structural --all --context prod -o json

  # A CRD file, before you apply it
  kubectl crd explain-structural -f examples/maintenance/crd.yaml

  # Every CRD under a directory, as JSON for scripts
  kubectl crd explain-structural -f crds/ -R -o json

  # One version's skeleton schema as YAML, from stdin
  cat crd.yaml | kubectl crd explain-structural -f - --version v1 -o yaml

  # The oldest Kubernetes version whose API server accepts each CRD, and why older ones refuse it
  kubectl crd explain-structural -f crds/ -R --min-kube-version

  # The findings for CI: SARIF for code scanning, JUnit for test reports, GitHub annotations
  kubectl crd explain-structural -f crds/ -R -o sarif > crds.sarif
  kubectl crd explain-structural -f crds/ -R -o junit > crds.xml
  kubectl crd explain-structural -f crds/ -R -o github`,
		ValidArgsFunction: completeCRDNames(configFlags),
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
	cmd.Flags().BoolVar(&o.All, "all", false, "every CustomResourceDefinition of the cluster")
	o.inputs.AddFlags(cmd)
	cmd.Flags().StringVar(&o.Version, "version", "", "show only this version of each CRD")
	o.kubeVersion.AddFlags(cmd, "for CRDs of the cluster (NAME, --all)")
	cmd.Flags().BoolVar(&o.MinKubeVersion, "min-kube-version", false, "tell, per CRD, the oldest Kubernetes minor ("+kubeversion.Range()+
		") whose API server accepts it, and why each older one refuses it")
	o.outputFlags.AddFlags(cmd)
	mustRegister(cmd, "version", completeCRDVersions(configFlags))
	return cmd
}

// Complete takes the CRD names of the arguments.
func (o *ExplainStructuralOptions) Complete(cmd *cobra.Command, args []string) error {
	o.Names = args
	return nil
}

// Validate checks the flags.
func (o *ExplainStructuralOptions) Validate() error {
	if len(o.inputs.Filenames) == 0 && len(o.Names) == 0 && !o.All {
		return usageErrorf("no input: name CRDs of the cluster, pass --all, or give CRD files with -f FILE|DIR|-")
	}
	if o.All && len(o.Names) > 0 {
		return usageErrorf("--all and CRD names exclude each other")
	}
	if err := o.inputs.Validate(); err != nil {
		return err
	}
	if err := o.kubeVersion.Validate(); err != nil {
		return err
	}
	return o.outputFlags.Validate()
}

// structuralReport is the -o json/yaml contract: fields are added, never renamed.
type structuralReport struct {
	CRDs []crdReport `json:"crds"`
	// Kubernetes is which minor answered, set when the report is printed.
	Kubernetes *kubeversion.Stamp `json:"kubernetes,omitempty"`
}

type crdReport struct {
	Name string `json:"name"`
	// Source is the file of a CRD read from a file; Cluster names the cluster of a live one.
	Source     *document.Source `json:"source,omitempty"`
	Cluster    string           `json:"cluster,omitempty"`
	Structural bool             `json:"structural"`
	Violations []violation      `json:"violations"`
	// Invalid lists the errors with which the API server's own CRD
	// validation refuses a CRD from a file (CRDs of a cluster were accepted).
	Invalid []violation `json:"invalid,omitempty"`
	// Mutability lists where the markers of KEP "Immutable fields" break its
	// placement rules (CRD files only: the server drops the markers).
	Mutability []violation `json:"mutability,omitempty"`
	// LowerError says why lower-mutability cannot lower the CRD's markers.
	LowerError string `json:"lowerError,omitempty"`
	// Warnings are about a CRD from a file the server accepts: what it
	// warns of, in its words, and an apiVersion no server serves.
	Warnings []crdWarning `json:"warnings,omitempty"`
	// ServerCondition is the cluster's NonStructuralSchema condition, when it has set one.
	ServerCondition *serverCondition `json:"serverCondition,omitempty"`
	// MinKubeVersion is, with --min-kube-version, the oldest Kubernetes
	// minor whose API server accepts the CRD ("1.32"), none when no
	// supported minor does; RefusedBy every minor that refuses it, oldest
	// first, with the first of its reasons.
	MinKubeVersion string          `json:"minKubeVersion,omitempty"`
	RefusedBy      []minorRefusal  `json:"refusedBy,omitempty"`
	Versions       []versionReport `json:"versions"`

	acceptance *schema.Acceptance
}

// crdWarning is a finding.CRDWarning: Reason LegacyAPIVersion for a CRD in
// apiextensions.k8s.io/v1beta1, none for the server's own words.
type crdWarning struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

type serverCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type violation struct {
	Field  string `json:"field"`
	Type   string `json:"type"`
	Detail string `json:"detail"`
	// Message is the whole line as the server's condition message prints it.
	Message string `json:"message"`
}

type versionReport struct {
	Name    string `json:"name"`
	Served  bool   `json:"served"`
	Storage bool   `json:"storage"`
	// Deprecated is the warning the server returns with every request for
	// a deprecated version (schema.CRD.DeprecationWarning).
	Deprecated string      `json:"deprecated,omitempty"`
	Skeleton   interface{} `json:"skeleton"`
	// Lowered are the CEL rules lower-mutability makes of the version's
	// mutability markers (CRD files only: the server drops the markers).
	Lowered []lower.Rule `json:"lowered,omitempty"`

	skeleton *structuralschema.Structural
	notes    *treeNotes
}

// Run reads the inputs and prints the report: the CRDs of the files first,
// then those of the cluster.
func (o *ExplainStructuralOptions) Run(ctx context.Context) (err error) {
	defer func() { o.kubeVersion.warnUnknown(o.ErrOut, err) }()
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.kubeVersion.Use(ctx, liveCluster(o.cluster, len(o.Names) > 0 || o.All), o.ErrOut); err != nil {
		return err
	}
	var report structuralReport
	crds, err := o.explainFiles()
	if err != nil {
		return err
	}
	report.CRDs = crds
	live, err := o.liveCRDs(ctx)
	if err != nil {
		return err
	}
	for _, l := range live {
		r, err := o.explainLive(l)
		if err != nil {
			return err
		}
		report.CRDs = append(report.CRDs, r)
	}
	if err := o.printReport(report); err != nil {
		return err
	}
	return structuralVerdict(report)
}

// explainFiles explains the CRDs of the files of -f, in their order, and
// skips their other objects; files with no CRD at all are an input error.
func (o *ExplainStructuralOptions) explainFiles() ([]crdReport, error) {
	in, err := o.inputs.Read(o.In)
	if err != nil {
		return nil, err
	}
	in.warn(o.ErrOut)
	var crds []crdReport
	for _, d := range in.Objects {
		r, ok, err := o.explainFile(d)
		if err != nil {
			return nil, err
		}
		if ok {
			crds = append(crds, r)
		}
	}
	if len(o.inputs.Filenames) > 0 && len(crds) == 0 {
		return nil, inputError(fmt.Errorf("no CustomResourceDefinition found in %s", strings.Join(o.inputs.Filenames, ", ")))
	}
	return crds, nil
}

// explainFile explains the object of d if it is a CRD (ok), with what only
// a CRD from a file can show: its misplaced mutability markers and the
// rules they lower to (the server drops the markers), and what the server
// warns of it, also printed on stderr.
func (o *ExplainStructuralOptions) explainFile(d *document.Document) (r crdReport, ok bool, err error) {
	// Not crdOf: a CRD the server refuses is reported, not an input error.
	c, ok, err := schema.DecodeObject(d.Object, strategy.Validators{})
	if err != nil {
		return crdReport{}, false, inputError(&document.InputError{Source: d.Source, Msg: err.Error()})
	}
	if !ok {
		return crdReport{}, false, nil
	}
	src := d.Source
	r, err = o.explain(c)
	if err != nil {
		return crdReport{}, false, inputError(fmt.Errorf("%s: %w", d.Source, err))
	}
	_, placement := update.CRDSchemas(d.Object)
	for _, e := range placement {
		if o.Version != "" && !violationOfVersion(e.Field, c.Versions(), o.Version) {
			continue
		}
		r.Mutability = append(r.Mutability, violation{Field: e.Field, Type: e.Type.String(), Detail: e.Detail, Message: e.Error()})
	}
	r.Source = &src
	for _, f := range finding.OfCRD(c) {
		r.Warnings = append(r.Warnings, crdWarning{Reason: f.Reason, Message: f.Message})
		printable.Fprintf(o.ErrOut, "Warning: %s: %s (%s)\n", document.Ref(d.Object), f.Message, src)
	}
	addMutability(&r, d.Object)
	if err := o.addMinKubeVersion(&r, d.Object); err != nil {
		return crdReport{}, false, inputError(&document.InputError{Source: d.Source, Msg: err.Error()})
	}
	return r, true, nil
}

// liveCRDs are the CRDs of the cluster to explain: all of them with --all,
// sorted by name (a cluster with none says so on stderr), then the named
// ones.
func (o *ExplainStructuralOptions) liveCRDs(ctx context.Context) ([]*liveCRD, error) {
	var live []*liveCRD
	if o.All {
		all, err := o.cluster.CRDs(ctx)
		if err != nil {
			return nil, err
		}
		live = append([]*liveCRD(nil), all...)
		sort.Slice(live, func(i, j int) bool { return live[i].Object.Name < live[j].Object.Name })
		if len(live) == 0 {
			printable.Fprintf(o.ErrOut, "No CustomResourceDefinitions on %s.\n", o.cluster.where())
		}
	}
	for _, name := range o.Names {
		l, err := o.cluster.Find(ctx, name)
		if err != nil {
			return nil, err
		}
		live = append(live, l)
	}
	return live, nil
}

// explainLive explains a CRD of the cluster, with the server's own
// NonStructuralSchema condition when it has set one.
func (o *ExplainStructuralOptions) explainLive(l *liveCRD) (crdReport, error) {
	r, err := o.explain(l.CRD())
	if err != nil {
		return crdReport{}, inputError(fmt.Errorf("CustomResourceDefinition %s on %s: %w", l.Object.Name, o.cluster.where(), err))
	}
	r.Cluster = o.cluster.where()
	for _, c := range l.Object.Status.Conditions {
		if c.Type == apiextensionsv1.NonStructuralSchema {
			r.ServerCondition = &serverCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
	}
	if o.MinKubeVersion {
		obj, err := schema.AsCreated(l.Object)
		if err == nil {
			err = o.addMinKubeVersion(&r, obj)
		}
		if err != nil {
			return crdReport{}, inputError(fmt.Errorf("CustomResourceDefinition %s on %s: %w", l.Object.Name, o.cluster.where(), err))
		}
	}
	return r, nil
}

// printReport prints the report in the format of -o.
func (o *ExplainStructuralOptions) printReport(rep structuralReport) error {
	stamp := kubeversion.Current().Stamp()
	rep.Kubernetes = &stamp
	switch {
	case o.Output == "json":
		enc := json.NewEncoder(o.Out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case o.Output == "yaml":
		b, err := sigsyaml.Marshal(rep)
		if err != nil {
			return err
		}
		o.Out.Write(b)
	case report.IsFormat(o.Output):
		return o.printFindings(rep)
	default:
		printStructuralText(o.Out, rep)
	}
	return nil
}

// printFindings prints the report of -o sarif, junit or github: a CRD
// each, with its findings.
func (o *ExplainStructuralOptions) printFindings(rep structuralReport) error {
	out, err := newReportOutput(o.Output, "explain-structural")
	if err != nil {
		return err
	}
	defer out.Close()
	for _, r := range rep.CRDs {
		if err := out.Add(r.reportObject()); err != nil {
			return err
		}
	}
	return out.Finish(o.Out)
}

// findings are the CRD's findings, each judged by the engine's default
// gate (finding.DefaultGate: explain-structural has no --fail-on), which
// fails the run on NonStructural and Update: not structural, refused by
// the server, markers misplaced; not on the server's warnings or the
// notes. Every finding is about the CRD as a whole: at its line.
func (r crdReport) findings() []finding.Judged {
	var all []finding.Finding
	for _, v := range r.Violations {
		all = append(all, finding.Finding{Check: finding.NonStructural, Reason: v.Type, Path: v.Field, Severity: finding.Error, Message: "not structural: " + v.Message})
	}
	for _, v := range r.Invalid {
		all = append(all, finding.Finding{Check: finding.NonStructural, Reason: v.Type, Path: v.Field, Severity: finding.Error,
			Message: "refused by the API server's validation of CustomResourceDefinitions: " + v.Message})
	}
	for _, v := range r.Mutability {
		all = append(all, finding.Finding{Check: finding.Update, Reason: v.Type, Path: v.Field, Severity: finding.Error,
			Message: `misplaced mutability marker (KEP "Immutable fields", emulated by kubectl crd): ` + v.Message})
	}
	for _, w := range r.Warnings {
		all = append(all, finding.Finding{Check: finding.CRDWarning, Reason: w.Reason, Severity: finding.Warning, Message: w.Message})
	}
	if r.LowerError != "" {
		all = append(all, finding.Finding{Severity: finding.Warning, Reason: "LowerMutability", Message: "mutability markers that lower-mutability cannot lower: " + r.LowerError})
	}
	if c := r.ServerCondition; c != nil {
		all = append(all, finding.Finding{Severity: finding.Info, Reason: c.Reason,
			Message: fmt.Sprintf("server condition %s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message)})
	}
	if f, ok := r.acceptanceFinding(); ok {
		all = append(all, f)
	}
	return finding.DefaultGate().Judge(all)
}

// reportObject is the CRD and its findings, as the gate judged them.
func (r crdReport) reportObject() report.Object {
	var src document.Source
	if r.Source != nil {
		src = *r.Source
	}
	ref := document.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: r.Name}
	return reportObject(ref, src, false, r.findings())
}

// structuralVerdict is errFindings (exit 1) when the gate's verdict on a
// finding of a CRD of the report fails the run (findings).
func structuralVerdict(report structuralReport) error {
	for _, r := range report.CRDs {
		if finding.Failing(r.findings()) {
			return errFindings
		}
	}
	return nil
}

// explain checks one CRD; the error is a --version it lacks.
func (o *ExplainStructuralOptions) explain(c *schema.CRD) (crdReport, error) {
	r := crdReport{Name: c.Name(), Violations: []violation{}, Versions: []versionReport{}}
	for _, e := range c.Violations() {
		if o.Version != "" && !violationOfVersion(e.Field, c.Versions(), o.Version) {
			continue
		}
		r.Violations = append(r.Violations, violation{Field: e.Field, Type: e.Type.String(), Detail: e.Detail, Message: e.Error()})
	}
	r.Structural = len(r.Violations) == 0
	// All of them whatever --version: the server refuses the whole CRD.
	for _, e := range c.Invalid() {
		r.Invalid = append(r.Invalid, violation{Field: e.Field, Type: e.Type.String(), Detail: e.Detail, Message: e.Error()})
	}
	found := false
	for _, v := range c.Object.Spec.Versions {
		if o.Version != "" && v.Name != o.Version {
			continue
		}
		found = true
		vr := versionReport{Name: v.Name, Served: v.Served, Storage: v.Storage}
		vr.Deprecated, _ = c.DeprecationWarning(v.Name)
		sk, err := c.Skeleton(v.Name)
		if err == nil && sk != nil {
			vr.skeleton = sk
			vr.Skeleton = sk.ToKubeOpenAPI()
		}
		r.Versions = append(r.Versions, vr)
	}
	if !found && o.Version != "" {
		return r, fmt.Errorf("CustomResourceDefinition %s has no version %q (it has %s)", c.Name(), o.Version, strings.Join(c.Versions(), ", "))
	}
	return r, nil
}

// violationOfVersion keeps CRD-wide violations and those of the version.
func violationOfVersion(fieldPath string, versions []string, version string) bool {
	if !strings.HasPrefix(fieldPath, "spec.versions[") {
		return true
	}
	for i, v := range versions {
		if v == version && strings.HasPrefix(fieldPath, fmt.Sprintf("spec.versions[%d]", i)) {
			return true
		}
	}
	return false
}

func printStructuralText(w io.Writer, report structuralReport) {
	for i, r := range report.CRDs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		verdict := "structural"
		if !r.Structural {
			verdict = fmt.Sprintf("NOT structural (%s)", plural(len(r.Violations), "violation"))
		}
		if len(r.Invalid) > 0 {
			conj := ", but"
			if !r.Structural {
				conj = ", and"
			}
			verdict += fmt.Sprintf("%s the API server refuses it (%s)", conj, plural(len(r.Invalid), "error"))
		}
		for _, w := range r.Warnings {
			if w.Reason == finding.ReasonLegacyAPIVersion {
				verdict += ", in apiextensions.k8s.io/v1beta1, which no API server serves since Kubernetes 1.22"
			}
		}
		where := r.Cluster
		if r.Source != nil {
			where = r.Source.String()
		}
		printable.Fprintf(w, "CustomResourceDefinition %s (%s): %s\n", r.Name, where, verdict)
		for _, v := range r.Violations {
			printable.Fprintf(w, "  %s\n", v.Message)
		}
		if len(r.Invalid) > 0 {
			fmt.Fprintln(w, "  refused by the API server's validation of CustomResourceDefinitions:")
			for _, v := range r.Invalid {
				printable.Fprintf(w, "  %s\n", v.Message)
			}
		}
		if len(r.Mutability) > 0 {
			printable.Fprintf(w, "  %s (KEP \"Immutable fields\", emulated by kubectl crd):\n", plural(len(r.Mutability), "misplaced mutability marker"))
			for _, v := range r.Mutability {
				printable.Fprintf(w, "  %s\n", v.Message)
			}
		}
		if r.LowerError != "" {
			printable.Fprintf(w, "  mutability markers that lower-mutability cannot lower: %s\n", r.LowerError)
		}
		if c := r.ServerCondition; c != nil {
			printable.Fprintf(w, "  server condition %s=%s (%s): %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
		printAcceptance(w, r)
		for _, v := range r.Versions {
			printable.Fprintf(w, "\nversion %s%s:\n", v.Name, versionFlags(v))
			if v.skeleton == nil {
				fmt.Fprintln(w, "  (no schema: nothing is pruned)")
				continue
			}
			printTree(w, "  ", "<root>", v.skeleton, v.notes)
		}
	}
}

func versionFlags(v versionReport) string {
	var flags []string
	if v.Served {
		flags = append(flags, "served")
	} else {
		flags = append(flags, "not served")
	}
	if v.Storage {
		flags = append(flags, "storage")
	}
	if v.Deprecated != "" {
		flags = append(flags, "deprecated: the server warns "+strconv.Quote(v.Deprecated))
	}
	if len(flags) == 0 {
		return ""
	}
	return " (" + strings.Join(flags, ", ") + ")"
}

// printTree prints the skeleton as a tree: a line per node with its type and
// markers; children are properties, then additionalProperties ({}), then items ([]).
func printTree(w io.Writer, indent, name string, s *structuralschema.Structural, notes *treeNotes) {
	t := &treePrinter{w: w, indent: []byte(indent), notes: notes}
	t.node(len(indent), "", name, s)
}

// treePrinter writes a tree straight to w, each line once, so that the cost
// is linear in the output (rendering each subtree apart and re-indenting it
// was cubic in depth). The indent and the name of the node being written
// are one buffer each, grown as it descends and cut on its way back: memory
// is linear in depth (a string of the indent and a copy of the path per
// level were quadratic, 1.7 GB for a schema 4,990 deep).
type treePrinter struct {
	w      io.Writer
	indent []byte // of the current node's rules and children
	key    []byte // the current node's names from the root, joined by "/": of its mutability notes
	depth  int
	line   []byte
	notes  *treeNotes
}

// node writes the current node's line, its head the first headLen bytes of
// the indent then branchOf, and its rules and children after the indent.
func (t *treePrinter) node(headLen int, branchOf, name string, s *structuralschema.Structural) {
	markers, lowered := t.notes.at(t.key)
	t.line = append(append(t.line[:0], t.indent[:headLen]...), branchOf...)
	t.line = append(append(append(t.line, printable.Line(name)...), ": "...), printable.Line(describeNode(s))...)
	for _, m := range markers {
		t.line = append(append(t.line, ' '), printable.Line(m)...)
	}
	t.line = append(t.line, '\n')
	t.w.Write(t.line)
	type child struct {
		name string
		s    *structuralschema.Structural
	}
	var children []child
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.Properties[k]
		children = append(children, child{k, &p})
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		children = append(children, child{"{*}", s.AdditionalProperties.Structural})
	}
	if s.Items != nil {
		children = append(children, child{"[*]", s.Items})
	}
	rules := s.XValidations
	if len(rules) > 0 {
		// A rule's further lines (a multi-line CEL expression) keep the tree's
		// indent, each escaped: no line of the rule breaks another or begins "::".
		multiline := strings.NewReplacer("\n", "\n"+string(t.indent))
		for i, r := range rules {
			last := i == len(rules)-1 && len(children) == 0 && len(lowered) == 0
			fmt.Fprintf(t.w, "%s%srule: %s", t.indent, branch(last), multiline.Replace(printable.Lines(r.Rule)))
			if r.Message != "" {
				fmt.Fprintf(t.w, "  # %s", multiline.Replace(printable.Lines(r.Message)))
			}
			fmt.Fprintln(t.w)
		}
	}
	// The rules the markers become with lower-mutability.
	for i, r := range lowered {
		last := i == len(lowered)-1 && len(children) == 0
		printable.Fprintf(t.w, "%s%slowered rule: %s  # %s\n", t.indent, branch(last), r.Rule, r.Message)
	}
	n, keyLen := len(t.indent), len(t.key)
	t.depth++
	for i, c := range children {
		last := i == len(children)-1
		cont := "│  "
		if last {
			cont = "   "
		}
		t.indent = append(t.indent[:n], cont...)
		t.key = t.key[:keyLen]
		if t.depth > 1 {
			t.key = append(t.key, '/')
		}
		t.key = append(t.key, c.name...)
		t.node(n, branch(last), c.name, c.s)
	}
	t.indent, t.key = t.indent[:n], t.key[:keyLen]
	t.depth--
}

func branch(last bool) string {
	if last {
		return "└─ "
	}
	return "├─ "
}

func describeNode(s *structuralschema.Structural) string {
	t := s.Type
	if t == "" {
		t = "<any>"
	}
	parts := []string{t}
	if s.Nullable {
		parts = append(parts, "nullable")
	}
	if s.Default.Object != nil {
		parts = append(parts, "default="+jsonString(s.Default.Object))
	}
	if s.XPreserveUnknownFields {
		parts = append(parts, "x-kubernetes-preserve-unknown-fields")
	}
	if s.XEmbeddedResource {
		parts = append(parts, "x-kubernetes-embedded-resource")
	}
	if s.XIntOrString {
		parts = append(parts, "x-kubernetes-int-or-string")
	}
	if s.XListType != nil {
		parts = append(parts, "x-kubernetes-list-type="+*s.XListType)
	}
	if len(s.XListMapKeys) > 0 {
		parts = append(parts, "x-kubernetes-list-map-keys="+strings.Join(s.XListMapKeys, ","))
	}
	if s.XMapType != nil {
		parts = append(parts, "x-kubernetes-map-type="+*s.XMapType)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural == nil {
		parts = append(parts, fmt.Sprintf("additionalProperties=%v", s.AdditionalProperties.Bool))
	}
	return strings.Join(parts, " ")
}

// plural is "1 thing", "2 things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
