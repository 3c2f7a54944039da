package catalog

import (
	"context"
	"fmt"
	"sort"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// addPreviousCRD adds the version of a CRD that an added CRD replaces (the
// plugin's --old, the function's previous): ok false for other documents.
// It is taken as a cluster holds it: a server accepted it once (perhaps as
// v1beta1), so today's create validation does not refuse it. It is
// decoded only when an added CRD replaces it (compareUpgrades): a directory of
// previous CRDs costs what the upgraded ones cost. One the server cannot
// decode is an *document.InputError then (here, when it has no name).
func (c *Catalog) addPreviousCRD(d *document.Document) (ok bool, err error) {
	ref := document.Ref(d.Object)
	if !schema.IsCRD(ref.APIVersion, ref.Kind) {
		return false, nil
	}
	prev := &previousCRD{raw: d.Object, source: d.Source}
	if ref.Name == "" {
		if err := prev.decode(); err != nil {
			return true, err
		}
		ref.Name = prev.crd.CRD.Name()
	}
	c.previous[ref.Name] = prev
	return true, nil
}

// decode decodes a previous CRD, once.
func (p *previousCRD) decode() error {
	if p.crd.CRD != nil {
		return nil
	}
	crd, _, err := schema.DecodeObject(p.raw, nil)
	if err != nil {
		return &document.InputError{Source: p.source, Msg: err.Error(), Err: err}
	}
	p.crd = crdupgrade.CRD{CRD: crd, Raw: p.raw}
	return nil
}

// prepareReplacement is PrepareCRD of a CRD about to replace the version
// before it (check-update's -f, the function's items), which compareUpgrades
// compares with that version. The server validates a CRD that replaces
// another with its update validation, not its create one: the update
// ratchets what the old CRD already has (the cost of its unchanged CEL
// rules), and refuses what the create does not (a scope change). So a
// CRD the create validation refuses is added all the same, and compareUpgrades
// gives the verdict: with an old version, the update validation's
// (Refused changes); without one, the create's, an *document.InputError.
// A CRD without a name replaces none: it is refused at once, as by
// PrepareCRD.
func (c *Catalog) prepareReplacement(d *document.Document) *PreparedCRD {
	p := c.PrepareCRD(d)
	p.replaces = p.crd != nil && p.crd.Name() != ""
	return p
}

// previousCRD is a CRD added by addPreviousCRD, with its source: its
// object as written, decoded when used.
type previousCRD struct {
	raw    map[string]interface{}
	crd    crdupgrade.CRD
	source document.Source
}

// Upgrade is an added CRD about to replace the one before it.
type Upgrade struct {
	Old, New crdupgrade.CRD
	// Source is the new CRD's; OldSource the old one's, zero when it is
	// the cluster's.
	Source, OldSource document.Source
	// Changes are what the comparison finds, the worst first; Findings
	// are the same, worded, one per change.
	Changes  []crdupgrade.Change
	Findings []finding.Finding
	// Tally counts, per change, the objects addImpact found it hurts;
	// Unexplained are what objects showed that no change explains.
	Tally       *crdupgrade.Tally
	Unexplained []crdupgrade.Unexplained
	// Checked counts the existing objects run through the upgrade; Hurt
	// those it hurts (a finding of error severity: data lost, refused).
	Checked, Hurt int
	// hurtBy are the checks of the findings that hurt an object, whether
	// or not a change explains them (Unexplained): what Fails judges.
	hurtBy map[finding.Check]bool
}

// ChangeVerdict is a change of an upgrade once the objects are counted.
type ChangeVerdict struct {
	// Finding is the change; its message ends naming the objects it hurts.
	Finding finding.Finding
	crdupgrade.Affected
	// Hurt counts the objects it hurts: every object checked for a change
	// that concerns them all (a version, a name).
	Hurt int
	// Fails is the gate's verdict on the change, which every report and
	// the exit code read: the gate fails on its check, and it is a
	// Breaking, DataLoss or Invalid change that hurts an object (with
	// strict: any such change), the server refusing the CRD update, or a
	// change that loses nothing (CRDChange), which fails whenever the gate
	// names its check.
	Fails bool
}

// Verdicts are the changes of u, the worst first, with the objects each
// hurts and gate's verdict on each: the one rule of both front ends for
// what a change of an upgrade fails.
func (u *Upgrade) Verdicts(strict bool, gate finding.Gate) []ChangeVerdict {
	var out []ChangeVerdict
	for i, a := range u.Tally.Affected() {
		v := ChangeVerdict{Finding: u.Findings[i], Affected: a, Hurt: len(a.Objects)}
		v.Finding.Message += finding.ObjectsHurt(a, u.Checked)
		severe := a.Change.Severity.Rank() <= crdupgrade.Invalid.Rank()
		if !a.Counted && severe {
			v.Hurt = u.Checked
		}
		// A severe change fails by what it does to the objects; a compatible
		// one hurts none, and fails only because the gate names CRDChange.
		v.Fails = gate.Fails(v.Finding) && (!severe || strict || a.Change.Kind == crdupgrade.Refused || v.Hurt > 0)
		out = append(out, v)
	}
	return out
}

// JudgeImpact is gate's verdict on the findings of an existing object of
// an upgrade (addImpact's): one fails the run when it hurts the object
// (an error: data lost, a refusal) and the gate fails on its check,
// whether or not a change of the upgrade explains it.
func JudgeImpact(gate finding.Gate, findings []finding.Finding) []finding.Judged {
	out := gate.Judge(findings)
	for i := range out {
		out[i].Fails = out[i].Fails && out[i].Severity == finding.Error
	}
	return out
}

// Fails reports whether the upgrade fails the run under gate (strict:
// --strict): a change does (Verdicts), or an existing object is hurt by a
// finding JudgeImpact fails, so that the run fails exactly when its
// report shows a failing result.
func (u *Upgrade) Fails(strict bool, gate finding.Gate) bool {
	for _, v := range u.Verdicts(strict, gate) {
		if v.Fails {
			return true
		}
	}
	for check := range u.hurtBy {
		if gate.Fails(finding.Finding{Check: check}) {
			return true
		}
	}
	return false
}

// compareUpgrades compares the added CRDs named in only (every added CRD when
// only is nil) with their previous version: the one added by
// addPreviousCRD, else (with OldFromCluster) the cluster's. An added CRD
// without one is new: no upgrade. By CRD name. Call it once every CRD is
// added; computeImpact then finds the upgrade of an object's kind. An
// error is the cluster's, or the *document.InputError of the first added
// CRD (prepareReplacement) the create validation refuses and that
// replaces no CRD: a create of it would be refused.
func (c *Catalog) compareUpgrades(ctx context.Context, only map[string]bool) ([]*Upgrade, error) {
	var names []string
	for name := range c.byName {
		if only == nil || only[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var fromCluster map[string]*schema.CRD
	if c.opts.Cluster != nil && c.opts.OldFromCluster {
		wanted := map[runtimeschema.GroupKind]bool{}
		for _, name := range names {
			if _, ok := c.previous[name]; !ok {
				wanted[c.byName[name].crd.GroupKind()] = true
			}
		}
		if len(wanted) > 0 {
			live, err := c.opts.Cluster.CRDs(ctx, wanted)
			if err != nil {
				return nil, err
			}
			fromCluster = map[string]*schema.CRD{}
			for _, crd := range live {
				fromCluster[crd.Name()] = crd
			}
		}
	}
	c.upgrades = map[runtimeschema.GroupKind]*Upgrade{}
	var out []*Upgrade
	for _, name := range names {
		a := c.byName[name]
		prev, ok := c.previous[name]
		if ok {
			if err := prev.decode(); err != nil {
				return nil, err
			}
		} else {
			live, ok := fromCluster[name]
			if !ok {
				continue
			}
			// The server dropped the mutability markers: none to compare.
			prev = &previousCRD{crd: crdupgrade.CRD{CRD: live}}
		}
		old := prev.crd
		u := &Upgrade{Old: old, New: crdupgrade.CRD{CRD: a.crd, Markers: a.markers}, Source: a.source, OldSource: prev.source}
		u.Changes = crdupgrade.Compare(u.Old, u.New, c.opts.Server)
		u.Tally = crdupgrade.NewTally(u.Changes)
		for _, ch := range u.Changes {
			f := finding.FromCRDChange(ch)
			f.Line = a.source.Line
			u.Findings = append(u.Findings, f)
		}
		c.upgrades[old.CRD.GroupKind()] = u
		out = append(out, u)
	}
	if err := c.refusedCreates(out); err != nil {
		return nil, err
	}
	return out, nil
}

// refusedCreates is the create validation's refusal of the first added
// CRD (by file and line) that no upgrade compares with an old version:
// nil when there is none.
func (c *Catalog) refusedCreates(upgrades []*Upgrade) error {
	replaced := map[string]bool{}
	for _, u := range upgrades {
		replaced[u.New.CRD.Name()] = true
	}
	var first *added
	for name, a := range c.byName {
		if a.invalid == nil || replaced[name] {
			continue
		}
		if first == nil || a.source.File < first.source.File || a.source.File == first.source.File && a.source.Line < first.source.Line {
			first = &a
		}
	}
	if first == nil {
		return nil
	}
	return first.invalid
}

// computedImpact is an object's impact as computeImpact computed it, for
// addImpact.
type computedImpact struct {
	*crdupgrade.ObjectImpact
	upgrade *Upgrade
}

// computeImpact is what the upgrade of its CRD does to d, an existing
// object of the old CRD (from the cluster, or a file standing for one):
// nil when no upgrade (compareUpgrades) concerns its kind. It is the
// costly part, the object run through the new CRD with the server's code;
// it changes nothing, and goroutines may call it at once. addImpact counts
// what it computed in the upgrade's Tally. An error is an
// *document.InputError.
func (c *Catalog) computeImpact(d *document.Document) (*computedImpact, error) {
	ref, gv, err := document.Identify(d)
	if err != nil {
		return nil, err
	}
	u, ok := c.upgrades[runtimeschema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return nil, nil
	}
	if _, ok := u.Old.CRD.Version(gv.Version); !ok {
		err := fmt.Errorf("CustomResourceDefinition %s had no version %q", u.Old.CRD.Name(), gv.Version)
		return nil, &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
	}
	imp, err := crdupgrade.Impact(d, u.Old.CRD, u.New.CRD, c.checks(), c.opts.Namespaces.request(nil, ""))
	if err != nil {
		return nil, err
	}
	// An existing object: in the namespace the old CRD's scope gave it
	// (a new scope moves none), one without in the request's, where
	// kubectl sent it.
	imp.Object.Namespace = c.opts.Namespaces.request(u.Old.CRD, imp.Object.Namespace)
	return &computedImpact{ObjectImpact: imp, upgrade: u}, nil
}

// addImpact counts an impact in its upgrade's Tally, in the order of the
// objects (one goroutine at a time), and words it as findings.
func (c *Catalog) addImpact(imp *computedImpact) []finding.Finding {
	u := imp.upgrade
	u.Unexplained = append(u.Unexplained, u.Tally.Add(imp.ObjectImpact)...)
	findings := finding.FromImpact(imp.ObjectImpact)
	u.Checked++
	hurt := false
	for _, f := range findings {
		if f.Severity == finding.Error {
			hurt = true
			if u.hurtBy == nil {
				u.hurtBy = map[finding.Check]bool{}
			}
			u.hurtBy[f.Check] = true
		}
	}
	if hurt {
		u.Hurt++
	}
	return findings
}

// ScanImpacts runs the existing objects of objects through their upgrades
// on every core (computeImpact) and counts them in their order
// (addImpact), calling each with every object and what it found: the
// impact (nil when no upgrade concerns the object) and its findings, or
// the object's error. An error each returns stops the scan, and is its.
func (c *Catalog) ScanImpacts(objects Docs, each func(d *document.Document, imp *crdupgrade.ObjectImpact, findings []finding.Finding, err error) error) error {
	type computed struct {
		imp *computedImpact
		err error
	}
	return ordered.Map(ordered.Workers(), func(emit func(*document.Document) error) error {
		for d, err := range objects {
			if err != nil {
				return err
			}
			if err := emit(d); err != nil {
				return err
			}
		}
		return nil
	}, func(d *document.Document) computed {
		imp, err := c.computeImpact(d)
		return computed{imp, err}
	}, func(d *document.Document, r computed) error {
		if r.err != nil || r.imp == nil {
			return each(d, nil, nil, r.err)
		}
		findings := c.addImpact(r.imp)
		return each(d, r.imp.ObjectImpact, findings, nil)
	})
}

// OldObjects are the objects AddOld added, in the order of their sources:
// offline, the existing objects an upgrade can hurt, when no others are given.
func (c *Catalog) OldObjects() []*document.Document {
	out := make([]*document.Document, 0, c.oldCount)
	for _, ds := range c.olds {
		out = append(out, ds...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Source, out[j].Source
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return out
}
