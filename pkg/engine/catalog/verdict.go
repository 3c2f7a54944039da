package catalog

import (
	"context"
	"fmt"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// CheckOptions tune Check.
type CheckOptions struct {
	// Defaults also applies the schemas' defaults, as the server stores them.
	Defaults bool
	// Updates checks an object that has an old version (Old) as an update
	// of it; without, every object is a create.
	Updates bool
	// Subresource is the subresource an update writes: "" the object
	// itself, "status" its /status (kubectl crd test's cases). Without
	// an old version it is not used.
	Subresource string
	// UpdateOnly is check-update's check of an object: an update of its
	// old version, or without one a create that is only pruned (not
	// validated, no upgrade run on it); the verdict's Update is its
	// outcome, its Result nil, its document left as it is.
	UpdateOnly bool
	// Gate judges each finding (finding.Gate.Judge): the zero Gate fails
	// on nothing.
	Gate finding.Gate
	// StoredCRDs checks a CustomResourceDefinition among the objects as
	// the server creates it: its Result lists what the server's defaulting
	// and encoding change, applied to its document (prune.Options.CRDs);
	// without, it passes through unchanged.
	StoredCRDs bool
}

// Verdict is everything a run says of one object: what the server stores
// of it, and every finding about it, in the order to show them, each
// with the gate's verdict on it.
type Verdict struct {
	// Result is what the server stores of the object (its changes are
	// applied to the document's YAML, comments kept): the --report item.
	// nil with UpdateOnly.
	Result *prune.Result
	// Old is the object's old version, when an update is checked.
	Old *document.Document
	// Update is the update's outcome, structured (check-update's -o json
	// item): with UpdateOnly, always; else when the object has an old
	// version.
	Update *UpdateResult
	// Findings are what a front end shows of the object, each judged by
	// the gate once: a renderer shows Fails as it is, and the run fails
	// exactly when one of them fails (Fails). A kind nothing defines
	// (MissingCRD); what the server drops and why it refuses the create;
	// what the upgrade of its CRD does to it as an existing object; why
	// its update is refused; and the notes on what is not computed (a
	// conversion webhook) or could not keep the YAML's comments.
	Findings []finding.Judged

	impact *computedImpact
}

// Fails reports whether one of the findings fails the run.
func (v *Verdict) Fails() bool { return finding.Failing(v.Findings) }

// Check is the one verdict on one object, the same in both front ends:
// its old version looked up (opts.Updates), the upgrade of its CRD run on
// it as the object as written (compareUpgrades), its create or update checked,
// what repeats removed. It changes nothing but d (the edits of pruning),
// and goroutines may check objects at once; Count then counts the upgrade
// in the order of the objects. An error is an *document.InputError (one
// of a kind Resolve refused: Refusal's), or the cluster's.
func (c *Catalog) Check(ctx context.Context, d *document.Document, opts CheckOptions) (*Verdict, error) {
	if opts.UpdateOnly {
		return c.updateVerdict(ctx, d, opts.Gate)
	}
	v, findings, err := c.check(ctx, d, opts)
	if err != nil {
		return nil, err
	}
	v.Findings = opts.Gate.Judge(findings)
	return v, nil
}

// check is Check's verdict without UpdateOnly, its findings not judged yet.
func (c *Catalog) check(ctx context.Context, d *document.Document, opts CheckOptions) (*Verdict, []finding.Finding, error) {
	original := d.Object // the object as written, before the edits of pruning
	v := &Verdict{}
	if opts.Updates {
		var err error
		if v.Old, err = c.oldOf(ctx, d); err != nil {
			return nil, nil, err
		}
	}
	// The upgrade reads the object as written, before pruning: as the
	// cluster has it. An object the new CRD cannot take at all is the
	// create check's error to tell.
	imp, upgraded, upgradeErr := c.upgradeOf(d)
	if res, refused, counted := c.unservedOf(d, imp, upgraded, upgradeErr); res != nil {
		v.Result, v.impact = res, counted
		return v, refused, nil
	}
	res, findings, err := c.prune(d, pruneOptions{Defaults: opts.Defaults, Validate: v.Old == nil, StoredCRDs: opts.StoredCRDs})
	if err != nil {
		return nil, nil, err
	}
	if upgradeErr != nil {
		return nil, nil, upgradeErr
	}
	v.Result, v.impact = res, imp
	switch res.Status {
	case prune.MissingCRD:
		if err := c.Refusal(d); err != nil {
			return nil, nil, err
		}
		if !c.opts.Builtins.IsBuiltin(res.Object.APIVersion) {
			f := finding.NoCRD(res.Object)
			f.Line = d.Source.Line
			return v, []finding.Finding{f}, nil
		}
		return v, nil, nil
	case prune.IsCRD:
		return v, findings, nil
	}
	all := append(withoutCaused(findings, imp), upgraded...)
	if v.Old != nil {
		out, err := c.checkUpdate(v.Old.Object, original, nil, d, opts.Subresource)
		if err != nil {
			return nil, nil, err
		}
		v.Update = &UpdateResult{Object: res.Object, Status: UpdateChecked, Refused: out.Refused, Warnings: out.Pruned}
		for _, u := range out.Refused {
			f := finding.FromUpdate(u)
			f.Message = fmt.Sprintf("update refused: %s (previous version: %s)", f.Message, v.Old.Source)
			all = append(all, f)
		}
	}
	return v, append(all, finding.OfResult(res, d.Source.Line)...), nil
}

// upgradeOf is what the upgrade of d's CRD does to d as an existing object
// (computeImpact), worded: what it loses and why the server would refuse
// it (the defaults it reads with are the CRD change's to tell). An object
// of a version the previous CRD lacks is a note: new, not checked as an
// existing one. All nil when no upgrade concerns d's kind.
func (c *Catalog) upgradeOf(d *document.Document) (*computedImpact, []finding.Finding, error) {
	if len(c.upgrades) == 0 {
		return nil, nil, nil
	}
	ref := document.Ref(d.Object)
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil, nil // the create check refuses it
	}
	u, ok := c.upgrades[runtimeschema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return nil, nil, nil
	}
	if _, ok := u.Old.CRD.Version(gv.Version); !ok {
		return nil, []finding.Finding{finding.NotExisting(u.Old.CRD.Name(), gv.Version)}, nil
	}
	imp, err := c.computeImpact(d)
	if err != nil || imp == nil {
		return nil, nil, err
	}
	var out []finding.Finding
	for _, f := range finding.FromImpact(imp.ObjectImpact) {
		if f.Severity != finding.Error {
			continue
		}
		f.Message = fmt.Sprintf("%s (previous CustomResourceDefinition: %s)", f.Message, u.OldSource)
		out = append(out, f)
	}
	return imp, out, nil
}

// unservedOf is the verdict on d when the upgrade of its CRD removes its
// version or no longer serves it: the server refuses it as written, and
// nothing of it can be stored, pruned or validated. Its finding is the
// impact's (upgradeOf), or without one (a conversion webhook: the rest of
// the impact is not computed) the version's use alone, counted in the
// upgrade as any impact. A nil result: d's version is served.
func (c *Catalog) unservedOf(d *document.Document, imp *computedImpact, upgraded []finding.Finding, upgradeErr error) (*prune.Result, []finding.Finding, *computedImpact) {
	ref, gv, err := document.Identify(d)
	if err != nil {
		return nil, nil, nil
	}
	u, ok := c.upgrades[runtimeschema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return nil, nil, nil
	}
	use, ok := crdupgrade.ManifestUse(d, u.Old.CRD, u.New.CRD)
	if !ok {
		return nil, nil, nil
	}
	ref.Namespace = c.opts.Namespaces.request(u.Old.CRD, ref.Namespace) // as computeImpact names it
	res := &prune.Result{Object: ref, Source: d.Source, Status: prune.Invalid, CRD: u.New.CRD.Name(), Changes: []prune.Change{}}
	if imp != nil && upgradeErr == nil {
		return res, upgraded, imp
	}
	f := finding.FromVersionUse(ref, use)
	f.Message = fmt.Sprintf("%s (previous CustomResourceDefinition: %s)", f.Message, u.OldSource)
	alone := &crdupgrade.ObjectImpact{Result: prune.Result{Object: ref, Source: d.Source, Status: prune.Checked, CRD: u.New.CRD.Name(), Changes: []prune.Change{}},
		Unserved: []crdupgrade.VersionUse{use}}
	return res, []finding.Finding{f}, &computedImpact{ObjectImpact: alone, upgrade: u}
}

// withoutCaused leaves out of the create check's findings the refusals the
// upgrade causes: the object is checked against the new CRD too, and the
// upgrade's words say why.
func withoutCaused(findings []finding.Finding, imp *computedImpact) []finding.Finding {
	if imp == nil || len(imp.Errors) == 0 {
		return findings
	}
	caused := map[string]bool{}
	for _, e := range imp.Errors {
		caused[findingKey(finding.FromInvalid(e))] = true
	}
	var out []finding.Finding
	for _, f := range findings {
		if !caused[findingKey(f)] {
			out = append(out, f)
		}
	}
	return out
}

// findingKey tells findings apart: their check, field and words.
func findingKey(f finding.Finding) string {
	return string(f.Check) + "\x00" + f.Path + "\x00" + f.Message
}

// Count counts v's upgrade impact in its upgrade (Upgrade.Tally, Checked,
// Hurt), in the order of the objects, one goroutine at a time.
func (c *Catalog) Count(v *Verdict) {
	if v.impact != nil {
		c.addImpact(v.impact)
	}
}

// updateVerdict is check-update's verdict on d (UpdateOnly): the
// structured outcome of updateResult, and its findings judged by gate: a kind
// no CRD defines, what the server drops (Prune), why it refuses the
// update (Update). A CRD, or an object of a built-in kind, has none.
func (c *Catalog) updateVerdict(ctx context.Context, d *document.Document, gate finding.Gate) (*Verdict, error) {
	res, err := c.updateResult(ctx, d)
	if err != nil {
		return nil, err
	}
	var findings []finding.Finding
	switch res.Status {
	case UpdateSkipped:
	case UpdateUnserved:
		findings = append(findings, finding.FromVersionUse(res.Object, *res.Unserved))
	case UpdateMissingCRD:
		f := finding.NoCRD(res.Object)
		f.Line = d.Source.Line
		findings = append(findings, f)
	default:
		if res.Deprecated != "" {
			findings = append(findings, finding.DeprecatedVersion(res.Deprecated, d.Source.Line))
		}
		for _, w := range res.Warnings {
			findings = append(findings, finding.FromChange(w, res.Object.Kind, ""))
		}
		for _, u := range res.Refused {
			findings = append(findings, finding.FromUpdate(u))
		}
	}
	return &Verdict{Update: res, Findings: gate.Judge(findings)}, nil
}
