package catalog

import (
	"context"
	"fmt"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

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
}

// Verdict is everything a run says of one object: what the server stores
// of it, and every finding about it, in the order to show them.
type Verdict struct {
	// Result is what the server stores of the object (its changes are
	// applied to the document's YAML, comments kept): the --report item.
	Result *prune.Result
	// Old is the object's old version, when an update is checked.
	Old *document.Document
	// Findings are what a front end shows of the object: a kind nothing
	// defines (MissingCRD); what the server drops and why it refuses the
	// create; what the upgrade of its CRD does to it as an existing object;
	// why its update is refused; and the notes on what is not computed (a
	// conversion webhook) or could not keep the YAML's comments.
	Findings []finding.Finding

	impact *Impact
}

// Check is the one verdict on one object, the same in both front ends:
// its old version looked up (opts.Updates), the upgrade of its CRD run on
// it as the object as written (Upgrades), its create or update checked,
// what repeats removed. It changes nothing but d (the edits of pruning),
// and goroutines may check objects at once; Count then counts the upgrade
// in the order of the objects. An error is an *document.InputError (one
// of a kind Resolve refused: Refusal's), or the cluster's.
func (c *Catalog) Check(ctx context.Context, d *document.Document, opts CheckOptions) (*Verdict, error) {
	original := d.Object // the object as written, before the edits of pruning
	v := &Verdict{}
	if opts.Updates {
		var err error
		if v.Old, err = c.oldOf(ctx, d); err != nil {
			return nil, err
		}
	}
	// The upgrade reads the object as written, before pruning: as the
	// cluster has it. An object the new CRD cannot take at all is the
	// create check's error to tell.
	imp, upgraded, upgradeErr := c.upgradeOf(d)
	res, findings, err := c.prune(d, pruneOptions{Defaults: opts.Defaults, Validate: v.Old == nil})
	if err != nil {
		return nil, err
	}
	if upgradeErr != nil {
		return nil, upgradeErr
	}
	v.Result, v.impact = res, imp
	switch res.Status {
	case prune.MissingCRD:
		if err := c.Refusal(d); err != nil {
			return nil, err
		}
		if !c.opts.Builtins.IsBuiltin(res.Object.APIVersion) {
			f := finding.NoCRD(res.Object)
			f.Line = d.Source.Line
			v.Findings = []finding.Finding{f}
		}
		return v, nil
	case prune.IsCRD:
		return v, nil
	}
	v.Findings = append(withoutCaused(findings, imp), upgraded...)
	if v.Old != nil {
		out, err := c.CheckUpdate(v.Old.Object, original, d)
		if err != nil {
			return nil, err
		}
		for _, u := range out.Refused {
			f := finding.FromUpdate(u)
			f.Message = fmt.Sprintf("update refused: %s (previous version: %s)", f.Message, v.Old.Source)
			v.Findings = append(v.Findings, f)
		}
	}
	v.Findings = append(v.Findings, finding.OfResult(res, d.Source.Line)...)
	return v, nil
}

// upgradeOf is what the upgrade of d's CRD does to d as an existing object
// (ComputeImpact), worded: what it loses and why the server would refuse
// it (the defaults it reads with are the CRD change's to tell). An object
// of a version the previous CRD lacks is a note: new, not checked as an
// existing one. All nil when no upgrade concerns d's kind.
func (c *Catalog) upgradeOf(d *document.Document) (*Impact, []finding.Finding, error) {
	if len(c.upgrades) == 0 {
		return nil, nil, nil
	}
	ref := prune.Ref(d.Object)
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
	imp, err := c.ComputeImpact(d)
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

// withoutCaused leaves out of the create check's findings the refusals the
// upgrade causes: the object is checked against the new CRD too, and the
// upgrade's words say why.
func withoutCaused(findings []finding.Finding, imp *Impact) []finding.Finding {
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
		c.AddImpact(v.impact)
	}
}
