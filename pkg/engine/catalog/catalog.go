// Package catalog is the orchestration both front ends share: the CRDs a
// run knows (from files, the inputs, a ResourceList or the cluster), their
// mutability markers and the server's validators, the old objects of
// updates, and the checks on one object at a time. The plugin and the KRM
// function read their inputs, call a Catalog and render what it returns.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// Cluster is what a catalog reads from a cluster. The plugin implements it
// with client-go; the engine never talks to a server itself.
type Cluster interface {
	// CRDs returns the cluster's CRDs of the given kinds (others may come along).
	CRDs(ctx context.Context, kinds map[runtimeschema.GroupKind]bool) ([]*schema.CRD, error)
	// Serves reports whether the cluster serves the kind by any API.
	Serves(ctx context.Context, gvk runtimeschema.GroupVersionKind) (bool, error)
	// GetObject reads an object; nil when it does not exist.
	GetObject(ctx context.Context, gvr runtimeschema.GroupVersionResource, namespace, name string) (map[string]interface{}, error)
	// Where names the cluster in messages.
	Where() string
}

// Server is the API server's own code the checks run: CRD validation,
// create and update validation of custom resources. Its CRD validation may
// be called concurrently (PrepareCRD), as the server's own is. The one implementation
// is pkg/engine/strategy's, which brings client-go and etcd: the front ends
// choose it, so that the engine does not carry that weight.
type Server interface {
	schema.CRDValidator
	// CRDPreparer prepares the create of a CRD among the inputs, whose
	// stored form prune shows (prune.Options.CRDs).
	schema.CRDPreparer
	crdupgrade.CRDUpdateValidator
	prune.CreateValidator
	// UpdateValidator validates updates of objects of crd in version.
	UpdateValidator(crd *schema.CRD, version string) (update.UpdateValidator, error)
	// StatusValidator validates updates of the /status subresource of
	// objects of crd in version (which has it).
	StatusValidator(crd *schema.CRD, version string) (update.StatusValidator, error)
}

// Builtins are the kinds of Kubernetes itself (internal/builtin's, from
// client-go's scheme, given by the front ends for the same reason as Server).
type Builtins interface {
	// IsBuiltin reports whether apiVersion is of a group Kubernetes serves itself.
	IsBuiltin(apiVersion string) bool
	// CheckKind refuses a kind kubectl would not map in a built-in group.
	CheckKind(apiVersion, kind string) error
}

// Options configure a catalog.
type Options struct {
	// Builtins are Kubernetes' own kinds.
	Builtins Builtins
	// Server validates CRDs and objects as the API server does.
	Server Server
	// Cluster is asked for the CRDs the files do not define, and for old
	// objects; nil works offline.
	Cluster Cluster
	// Namespaces is the namespace rule of the run.
	Namespaces Namespaces
	// OldFromCluster reads an update's old object from the cluster when
	// none was added (check-update without --old).
	OldFromCluster bool
}

// Catalog holds what a run knows. CRDs and old objects are added one at a
// time, as the inputs are read; objects are checked one at a time.
type Catalog struct {
	opts Options

	reg     *schema.Registry
	byName  map[string]added
	markers map[runtimeschema.GroupKind]map[string]*update.Schema
	// olds are the old objects, by group, kind and name (oldKey): which
	// namespace one stands in depends on its kind's scope, known once its
	// CRD is (oldOf).
	olds map[oldKey][]*document.Document
	// oldCount is how many olds hold, in the order they were added.
	oldCount int
	// refused are the kinds the server would not map, with why.
	refused map[runtimeschema.GroupVersionKind]string
	// previous are the CRDs the added ones replace, by name; upgrades the
	// comparisons, by the old CRD's group and kind (compareUpgrades).
	previous map[string]*previousCRD
	upgrades map[runtimeschema.GroupKind]*Upgrade
}

type added struct {
	crd    *schema.CRD
	source document.Source
	// markers are those of the document as written, which the server drops.
	markers map[string]*update.Schema
	// invalid is the create validation's refusal of a CRD prepareReplacement
	// read: compareUpgrades decides on it.
	invalid error
}

// New returns an empty catalog.
func New(opts Options) *Catalog {
	return &Catalog{
		opts:     opts,
		reg:      schema.NewRegistry(),
		byName:   map[string]added{},
		markers:  map[runtimeschema.GroupKind]map[string]*update.Schema{},
		olds:     map[oldKey][]*document.Document{},
		refused:  map[runtimeschema.GroupVersionKind]string{},
		previous: map[string]*previousCRD{},
	}
}

// Namespaces is the namespace rule.
func (c *Catalog) Namespaces() Namespaces { return c.opts.Namespaces }

// addCRD adds d when it is a CustomResourceDefinition (ok false for other
// documents): a later CRD of a group and kind replaces an earlier one, as
// the inputs, about to be applied, replace the files. The findings are
// about the CRD itself: defined twice differently (the Redefined warning),
// not structural, misplaced mutability markers (with the CRD's source
// line). A CRD the server refuses is an *document.InputError.
func (c *Catalog) addCRD(d *document.Document) (crd *schema.CRD, findings []finding.Finding, err error) {
	return c.AddPrepared(c.PrepareCRD(d))
}

// PreparedCRD is a document read as a CRD by PrepareCRD, for AddPrepared.
type PreparedCRD struct {
	doc        *document.Document
	crd        *schema.CRD
	err        error
	violations field.ErrorList
	markers    map[string]*update.Schema
	markerErrs field.ErrorList
	// invalid is the server's create validation refusing the CRD, an
	// *document.InputError; replaces: prepareReplacement prepared it.
	invalid  error
	replaces bool
}

// PrepareCRD does the costly part of adding a CRD (AddPrepared), which does not touch the
// catalog: decoding d as a CRD, the server's validation of it, its
// structural violations and mutability markers. It may run concurrently
// with other calls of PrepareCRD (the server validates CRDs concurrently
// too); d must not change meanwhile. Nothing is added: AddPrepared does,
// in the order of the inputs.
func (c *Catalog) PrepareCRD(d *document.Document) *PreparedCRD {
	return c.prepareCRD(d, nil)
}

// prepareCRD is PrepareCRD; accepted, when not nil, is the server's
// verdict on the CRD as a cache kept it (crdindex.Entry.Accepted): it
// accepts it with these warnings, and its validation does not run again.
func (c *Catalog) prepareCRD(d *document.Document, accepted *[]string) *PreparedCRD {
	crd, ok, err := schema.DecodeObject(d.Object, c.opts.Server)
	return c.prepared(d, crd, ok, err, accepted)
}

// prepareEncoded is prepareCRD of a CRD the server accepts with warnings
// accepted (crdindex.Entry.Accepted), from the CRD decoded as the cache
// kept it (crdindex.Entry.Encoded), its document not read; nil when the
// cache holds none that reads.
func (c *Catalog) prepareEncoded(e crdindex.Entry, accepted []string) *PreparedCRD {
	d, encoded, ok := e.Encoded()
	if !ok {
		return nil
	}
	crd, ok, err := schema.DecodeEncoded(d.Object, encoded, c.opts.Server)
	if !ok || err != nil {
		return nil
	}
	return c.prepared(d, crd, true, nil, &accepted)
}

// prepared is the CRD crd decoded from d (ok and err as
// schema.DecodeObject's) prepared.
func (c *Catalog) prepared(d *document.Document, crd *schema.CRD, ok bool, err error, accepted *[]string) *PreparedCRD {
	// What is kept of d: its object and where it is, not its YAML's nodes.
	p := &PreparedCRD{doc: &document.Document{Object: d.Object, Source: d.Source}}
	if err != nil {
		p.err = &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
		return p
	}
	if !ok {
		return p
	}
	if accepted != nil {
		crd.SetAccepted(*accepted)
	}
	if err := crd.InvalidErr(); err != nil {
		p.invalid = &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
	}
	p.crd, p.violations = crd, crd.Violations()
	// The mutability markers, which the server drops, from the CRD as written.
	p.markers, p.markerErrs = update.CRDSchemas(d.Object)
	return p
}

// encodable is whether the cache may keep the CRD prepared decoded
// (crdindex.File.SetEncoded): the server accepts it, and it has no
// mutability marker, which only its document holds.
func (p *PreparedCRD) encodable() bool {
	if p.crd == nil || p.invalid != nil || len(p.markerErrs) > 0 {
		return false
	}
	for _, m := range p.markers {
		if m != nil {
			return false
		}
	}
	return true
}

// refusal is why the server would refuse the CRD prepared, in its words
// (crdindex.Entry.Refusal): its decoding, then its validation as a create.
func (p *PreparedCRD) refusal() string {
	var ie *document.InputError
	for _, err := range []error{p.err, p.invalid} {
		if errors.As(err, &ie) {
			return ie.Msg
		}
	}
	return ""
}

// warnings are the server's warnings on the CRD prepared, which it
// accepts (crdindex.Entry.Accepted): none when it refuses it.
func (p *PreparedCRD) warnings() []string {
	if p.crd == nil || p.invalid != nil {
		return nil
	}
	return p.crd.Warnings()
}

// AddPrepared is addCRD of a document PrepareCRD read (or
// prepareReplacement: then compareUpgrades decides whether the server refuses it).
func (c *Catalog) AddPrepared(p *PreparedCRD) (crd *schema.CRD, findings []finding.Finding, err error) {
	if p.err != nil || p.crd == nil {
		return nil, nil, p.err
	}
	if p.invalid != nil && !p.replaces {
		return nil, nil, p.invalid
	}
	crd, d := p.crd, p.doc
	if prev, ok := c.byName[crd.Name()]; ok && schema.Redefined(prev.crd, crd) {
		findings = append(findings, finding.Redefined(prev.source.String(), d.Source.String()))
	}
	// The server's warnings on a create of the CRD; those of the update
	// of a version before it (prepareReplacement) leave out what that
	// version had, which a new cluster would warn of all the same.
	findings = append(findings, finding.OfCRD(crd)...)
	c.byName[crd.Name()] = added{crd, d.Source, p.markers, p.invalid}
	c.reg.Add(crd)
	for _, e := range p.violations {
		findings = append(findings, finding.FromStructural(crd.Name(), e))
	}
	c.markers[crd.GroupKind()] = p.markers
	for _, e := range p.markerErrs {
		findings = append(findings, finding.FromMarker(crd.Name(), e))
	}
	for i := range findings {
		findings[i].Line = d.Source.Line
	}
	return crd, findings, nil
}

// Kinds is the set of kinds of the objects of a run, as a first pass over
// the inputs collects them.
type Kinds map[runtimeschema.GroupVersionKind]bool

// Add adds the kind of obj; an object that does not say what it is, and a
// CRD (a schema source in any version), have none to resolve.
func (k Kinds) Add(obj map[string]interface{}) {
	ref := document.Ref(obj)
	if ref.APIVersion == "" || ref.Kind == "" || schema.IsCRD(ref.APIVersion, ref.Kind) {
		return
	}
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return // the check of the object says so, with its line
	}
	k[gv.WithKind(ref.Kind)] = true
}

func (k Kinds) sorted() []runtimeschema.GroupVersionKind {
	out := make([]runtimeschema.GroupVersionKind, 0, len(k))
	for gvk := range k {
		out = append(out, gvk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Resolve makes the catalog ready for objects of kinds, once every CRD of
// the inputs is added: kinds of built-in groups kubectl would not map are
// refused (offline by the built-in types of the Kubernetes release we
// embed, live by the cluster's discovery); live, the cluster's CRDs are
// added for the kinds no added CRD defines (added CRDs win), and a kind
// that neither defines nor the cluster serves is refused. Refusal then
// names each object of a refused kind. An error is the cluster's.
func (c *Catalog) Resolve(ctx context.Context, kinds Kinds) error {
	cl := c.opts.Cluster
	for _, gvk := range kinds.sorted() {
		apiVersion := gvk.GroupVersion().String()
		// Lists are expanded by kubectl, not mapped.
		if strings.HasSuffix(gvk.Kind, "List") || !c.opts.Builtins.IsBuiltin(apiVersion) {
			continue
		}
		if cl == nil {
			if err := c.opts.Builtins.CheckKind(apiVersion, gvk.Kind); err != nil {
				c.refused[gvk] = err.Error()
			}
			continue
		}
		ok, err := cl.Serves(ctx, gvk)
		if err != nil {
			return err
		}
		if !ok {
			noMatch := &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
			c.refused[gvk] = fmt.Sprintf("%v: not served by %s", noMatch, cl.Where())
		}
	}
	// Refused built-in kinds fail the run before the cluster's CRDs are read.
	if cl == nil || len(c.refused) > 0 {
		return nil
	}
	var unresolved []runtimeschema.GroupVersionKind
	wanted := map[runtimeschema.GroupKind]bool{}
	for _, gvk := range kinds.sorted() {
		apiVersion := gvk.GroupVersion().String()
		if c.opts.Builtins.IsBuiltin(apiVersion) {
			continue
		}
		if _, ok := c.reg.Lookup(apiVersion, gvk.Kind); !ok {
			unresolved = append(unresolved, gvk)
			wanted[gvk.GroupKind()] = true
		}
	}
	if len(unresolved) == 0 {
		return nil
	}
	live, err := cl.CRDs(ctx, wanted)
	if err != nil {
		return err
	}
	for _, crd := range live {
		// Only kinds no added CRD defines: those of the files and inputs win.
		if wanted[crd.GroupKind()] {
			c.reg.Add(crd)
		}
	}
	for _, gvk := range unresolved {
		apiVersion := gvk.GroupVersion().String()
		if _, ok := c.reg.Lookup(apiVersion, gvk.Kind); ok {
			continue
		}
		served, err := cl.Serves(ctx, gvk)
		if err != nil {
			return err
		}
		if !served {
			c.refused[gvk] = fmt.Sprintf("no CustomResourceDefinition defines kind %q in %s, on %s or in the inputs; the API server would refuse it (no matches for kind)",
				gvk.Kind, apiVersion, cl.Where())
		}
	}
	return nil
}

// Refuses reports whether Resolve refused any kind: then Refusal names
// their objects, and the run fails before any object is checked.
func (c *Catalog) Refuses() bool { return len(c.refused) > 0 }

// Refusal is the input error for d when Resolve refused its kind: kubectl
// apply would refuse it with "no matches for kind". Nil otherwise.
func (c *Catalog) Refusal(d *document.Document) error {
	ref := document.Ref(d.Object)
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil
	}
	why, ok := c.refused[gv.WithKind(ref.Kind)]
	if !ok {
		return nil
	}
	return &document.InputError{Source: d.Source, Msg: ref.String() + ": " + why}
}

// pruneOptions tune prune.
type pruneOptions struct {
	// Defaults also applies the schema's defaults, as the server stores them.
	Defaults bool
	// Validate runs the server's validation of a create.
	Validate bool
	// StoredCRDs makes a CRD the CRD the server stores (CheckOptions).
	StoredCRDs bool
}

// prune is a create of d: what the server stores of it, its changes applied
// to d's YAML (comments kept), and with opts.Validate what the server's
// validation refuses. The result names the object in the namespace the
// rule gives it; the findings are every one about the object, in the order
// to show them: the changes, then why the server refuses it. A check of
// created objects adds its findings here, and both front ends show them.
// An error is an *document.InputError.
func (c *Catalog) prune(d *document.Document, opts pruneOptions) (*prune.Result, []finding.Finding, error) {
	po := prune.Options{Defaults: opts.Defaults, Namespace: c.opts.Namespaces.Default}
	if opts.Validate {
		po.Validate = c.checks()
	}
	if opts.StoredCRDs && c.opts.Server != nil {
		po.CRDs = c.opts.Server
	}
	res, err := prune.Document(d, c.reg, po)
	if err != nil {
		return nil, nil, err
	}
	if res.Status == prune.IsCRD {
		// What the server stores of a CRD: warnings, as for any object.
		var findings []finding.Finding
		for _, ch := range res.Changes {
			findings = append(findings, finding.FromChange(ch, res.Object.Kind, ""))
		}
		return res, append(findings, finding.OfResult(res, d.Source.Line)...), nil
	}
	if res.Status != prune.Checked && res.Status != prune.Invalid {
		return res, nil, nil
	}
	crd, _ := c.reg.Lookup(res.Object.APIVersion, res.Object.Kind)
	res.Object.Namespace = c.opts.Namespaces.shown(crd, res.Object.Namespace)
	var findings []finding.Finding
	if res.Deprecated != "" {
		findings = append(findings, finding.DeprecatedVersion(res.Deprecated, d.Source.Line))
	}
	for _, ch := range res.Changes {
		findings = append(findings, finding.FromChange(ch, res.Object.Kind, res.StorageVersion))
	}
	for _, e := range res.Errors {
		findings = append(findings, finding.FromInvalid(e))
	}
	return res, findings, nil
}

// AddOld adds an old object, the version an update replaces. One the server
// cannot have stored is an *document.InputError: it would match nothing,
// and its update would pass unchecked. So is a second old version of an
// object that differs from the first (two exports of it, taken at
// different times): which of them an update replaces would depend on the
// order of the files. A copy equal to the first is left out.
func (c *Catalog) AddOld(d *document.Document) error {
	if err := update.ValidateOld(d); err != nil {
		return err
	}
	k := oldKeyOf(d.Object)
	ns := c.opts.Namespaces.request(nil, document.Ref(d.Object).Namespace)
	for _, od := range c.olds[k] {
		if c.opts.Namespaces.request(nil, document.Ref(od.Object).Namespace) != ns {
			continue
		}
		return sameOld(od, d, ns)
	}
	c.olds[k] = append(c.olds[k], d)
	c.oldCount++
	return nil
}

// oldKey is an object's identity across versions of its kind, but for
// its namespace (which the kind's scope decides on: oldOf).
type oldKey struct {
	Group, Kind, Name string
}

func oldKeyOf(obj map[string]interface{}) oldKey {
	ref := document.Ref(obj)
	gv, _ := runtimeschema.ParseGroupVersion(ref.APIVersion)
	return oldKey{gv.Group, ref.Kind, ref.Name}
}

// sameOld is nil when b, an old version of the object a is one of, is a
// copy of a in the namespace ns the request gives both (one may leave it
// out); else the input error naming both.
func sameOld(a, b *document.Document, ns string) error {
	if reflect.DeepEqual(update.InNamespace(a.Object, ns), update.InNamespace(b.Object, ns)) {
		return nil
	}
	return &document.InputError{Source: b.Source, Msg: fmt.Sprintf(
		"%s: a second old version of the object, different from the one of %s: the update would be checked against either; give one",
		document.Ref(b.Object), a.Source)}
}

// oldOf is the old version of d: an added one of the same identity as the
// API server knows objects (group, kind, name, and for a namespaced kind
// the namespace of the request: the object's, else -n or the context's,
// else "default"; an old object without a namespace goes by the same
// rule, an export from the cluster always has one), else
// (Options.OldFromCluster) the cluster's; nil when there is none (a
// create) or d's kind has no CRD. Two added old versions that differ and
// both stand for d are an *document.InputError naming both.
func (c *Catalog) oldOf(ctx context.Context, d *document.Document) (*document.Document, error) {
	ref := document.Ref(d.Object)
	crd, ok := c.reg.Lookup(ref.APIVersion, ref.Kind)
	if !ok {
		return nil, nil
	}
	ns := c.opts.Namespaces.request(crd, ref.Namespace)
	var found *document.Document
	for _, od := range c.olds[oldKeyOf(d.Object)] {
		// A cluster-scoped object has no namespace: the server drops one.
		if !crd.ClusterScoped() && c.opts.Namespaces.request(crd, document.Ref(od.Object).Namespace) != ns {
			continue
		}
		if found != nil {
			if err := sameOld(found, od, ns); err != nil {
				return nil, err
			}
			continue
		}
		found = od
	}
	if found != nil {
		return found, nil
	}
	// Without a name (generateName), there is no old object to ask for.
	if !c.opts.OldFromCluster || c.opts.Cluster == nil || ref.Name == "" {
		return nil, nil
	}
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil
	}
	obj, err := c.opts.Cluster.GetObject(ctx, gv.WithResource(crd.Object.Spec.Names.Plural), ns, ref.Name)
	if err != nil || obj == nil {
		return nil, err
	}
	return &document.Document{Object: obj}, nil
}

// checkUpdate is an update of old to obj (d's object as sent): what the
// server's update validation and the CRD's mutability markers refuse, with
// d's lines, and what the server drops or changes of obj (defaults left
// out: no news). Both objects get the request's namespace. stored is obj
// as stored when the caller has it (update.CheckStored), else nil.
// subresource is the request's: "" (the object) or "status" (a write of
// /status, which obj's version must have: update.CheckStatus). An error
// is an *document.InputError naming d.
func (c *Catalog) checkUpdate(old, obj map[string]interface{}, stored *prune.Coerced, d *document.Document, subresource string) (*update.Outcome, error) {
	ref := document.Ref(obj)
	crd, ok := c.reg.Lookup(ref.APIVersion, ref.Kind)
	if !ok {
		return nil, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("%s: no CustomResourceDefinition for %s, kind %s", ref, ref.APIVersion, ref.Kind)}
	}
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
	}
	validator, err := c.checks().UpdateValidator(crd, gv.Version)
	if err != nil {
		return nil, &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
	}
	if !crd.ClusterScoped() {
		if ref.Namespace == "" {
			stored = nil // of the object without the namespace InNamespace gives it
		}
		ns := c.opts.Namespaces.request(crd, c.opts.Namespaces.shown(crd, ref.Namespace))
		obj, old = update.InNamespace(obj, ns), update.InNamespace(old, ns)
	}
	mut := c.markers[crd.GroupKind()][gv.Version]
	var out *update.Outcome
	if subresource == "" {
		out, err = update.CheckStored(old, obj, stored, crd, mut, validator)
	} else {
		out, err = c.checkSubresource(old, obj, crd, gv.Version, mut, subresource)
	}
	if err != nil {
		return nil, &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
	}
	for i := range out.Refused {
		out.Refused[i].Line = prune.LineOfPath(d, out.Refused[i].Path)
	}
	out.Pruned = warnings(d, out.Pruned)
	return out, nil
}

// checkSubresource is checkUpdate of a write of a subresource of obj's:
// only status is one.
func (c *Catalog) checkSubresource(old, obj map[string]interface{}, crd *schema.CRD, version string, mut *update.Schema, subresource string) (*update.Outcome, error) {
	if subresource != "status" {
		return nil, fmt.Errorf("the subresource %q is not supported: only status is", subresource)
	}
	if !crd.StatusSubresource(version) {
		return nil, &NoSubresourceError{CRD: crd.Name(), Version: version, Subresource: subresource}
	}
	if c.checks() == nil {
		return nil, fmt.Errorf("no server's validation to check a write of /status with")
	}
	validator, err := c.checks().StatusValidator(crd, version)
	if err != nil {
		return nil, err
	}
	return update.CheckStatus(old, obj, crd, mut, validator)
}

// NoSubresourceError is a write of a subresource the object's CRD version
// does not have: the server answers 404 Not Found.
type NoSubresourceError struct {
	CRD, Version, Subresource string
}

func (e *NoSubresourceError) Error() string {
	return fmt.Sprintf("version %s of CustomResourceDefinition %s has no %s subresource: the server answers 404 Not Found to a write of /%s", e.Version, e.CRD, e.Subresource, e.Subresource)
}

// warnings keeps what the server drops or changes of d's object (defaults
// are no news), with source lines.
func warnings(d *document.Document, changes []prune.Change) []prune.Change {
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

// UpdateStatus says how updateResult handled an object.
type UpdateStatus string

const (
	// UpdateChecked: an update of an old object, checked.
	UpdateChecked UpdateStatus = "Checked"
	// UpdateCreate: no old object: a create, only pruned.
	UpdateCreate UpdateStatus = "Create"
	// UpdateMissingCRD: no CRD is known for the kind: not checked.
	UpdateMissingCRD UpdateStatus = "MissingCRD"
	// UpdateSkipped: a CRD, or an object of a built-in kind: not ours to check.
	UpdateSkipped UpdateStatus = ""
	// UpdateUnserved: an object of a version its CRD's previous version
	// serves and the new one (an upgrade's) does not: the server refuses
	// it once the new CRD is applied; not checked further.
	UpdateUnserved UpdateStatus = "Unserved"
)

// UpdateResult is the verdict on one object of check-update.
type UpdateResult struct {
	// Object is named in the namespace the rule gives it.
	Object document.ObjectRef
	Status UpdateStatus
	// Refused is why the update would be refused, with d's lines.
	Refused []update.Finding
	// Warnings is what the server drops or changes of the new object.
	Warnings []prune.Change
	// Deprecated is the warning the server returns with every request for
	// the object's version, when its CRD deprecates it.
	Deprecated string
	// Unserved is the object's version, with UpdateUnserved.
	Unserved *crdupgrade.VersionUse
}

// updateResult checks d as an update of its old version (oldOf), or as a create
// when it has none. d must say what it is (prune.Identify). An error is an
// *document.InputError, or the cluster's.
func (c *Catalog) updateResult(ctx context.Context, d *document.Document) (*UpdateResult, error) {
	ref, gv, err := document.Identify(d)
	if err != nil {
		return nil, err
	}
	res := &UpdateResult{Object: ref, Refused: []update.Finding{}, Warnings: []prune.Change{}}
	crd, ok := c.reg.Lookup(ref.APIVersion, ref.Kind)
	switch {
	case schema.IsCRD(ref.APIVersion, ref.Kind) || (!ok && c.opts.Builtins.IsBuiltin(ref.APIVersion)):
		return res, nil
	case !ok:
		res.Status = UpdateMissingCRD
		return res, nil
	}
	res.Object.Namespace = c.opts.Namespaces.shown(crd, ref.Namespace)
	if u, ok := c.upgrades[runtimeschema.GroupKind{Group: gv.Group, Kind: ref.Kind}]; ok {
		if use, ok := crdupgrade.ManifestUse(d, u.Old.CRD, crd); ok {
			res.Status, res.Unserved = UpdateUnserved, &use
			return res, nil
		}
	}
	res.Deprecated, _ = crd.DeprecationWarning(gv.Version)
	s, err := crd.ServedSchema(gv.Version)
	if err != nil {
		return nil, &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
	}
	// The server decodes the request before it reads the old object: what
	// it cannot decode (metadata: "x") is the input's fault, whatever the cluster.
	stored, err := prune.Store(d.Object, crd, gv.Version, true)
	if err != nil {
		return nil, &document.InputError{Source: d.Source, Msg: "the server would refuse this object: " + err.Error(), Err: err}
	}
	old, err := c.oldOf(ctx, d)
	if err != nil {
		return nil, err
	}
	if old == nil {
		// A create: only what the server drops is worth saying.
		res.Status = UpdateCreate
		res.Warnings = warnings(d, prune.Changes(d.Object, stored, s))
		return res, nil
	}
	// What the server stores of d is computed once.
	out, err := c.checkUpdate(old.Object, d.Object, stored, d, "")
	if err != nil {
		return nil, err
	}
	res.Status = UpdateChecked
	if out.Refused != nil {
		res.Refused = out.Refused
	}
	res.Warnings = out.Pruned
	return res, nil
}
