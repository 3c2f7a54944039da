package filter

import (
	"context"
	"fmt"
	"strconv"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// upgradeCheck is the CRD upgrade of a ResourceList, as check-update's: the
// CRDs among the items replace their versions of previous:, and the items'
// custom resources stand for the existing objects (catalog.UpgradeImpact).
// It only reports: it changes no item.
type upgradeCheck struct {
	// crds are the CRDs among the items, by name, where their results go:
	// those of crdPaths are schemas, not upgrades.
	crds     map[string]crdItem
	upgrades []*catalog.Upgrade
	byKind   map[runtimeschema.GroupKind]*catalog.Upgrade
	// checked counts the objects checked, by CRD name.
	checked map[string]int
}

type crdItem struct {
	ref  *yaml.ResourceIdentifier
	file *framework.File
}

func newUpgradeCheck() *upgradeCheck {
	return &upgradeCheck{crds: map[string]crdItem{}, checked: map[string]int{}}
}

// visit notes a CRD among the items.
func (u *upgradeCheck) visit(d *document.Document) {
	ref := prune.Ref(d.Object)
	if !schema.IsCRD(ref.APIVersion, ref.Kind) || ref.Name == "" {
		return
	}
	u.crds[ref.Name] = crdItem{
		ref:  &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind}, NameMeta: yaml.NameMeta{Name: ref.Name}},
		file: &framework.File{Path: d.Source.File},
	}
}

// compare compares the CRDs among the items with their previous versions:
// call it once every CRD is added.
func (u *upgradeCheck) compare(cat *catalog.Catalog) error {
	if len(u.crds) == 0 {
		return nil
	}
	names := map[string]bool{}
	for name := range u.crds {
		names[name] = true
	}
	var err error
	if u.upgrades, err = cat.Upgrades(context.Background(), names); err != nil {
		return err
	}
	u.byKind = map[runtimeschema.GroupKind]*catalog.Upgrade{}
	for _, up := range u.upgrades {
		u.byKind[up.Old.CRD.GroupKind()] = up
	}
	return nil
}

// impact is what the upgrade does to d, a custom resource of the items as
// written, as an existing object of an upgraded CRD, computed by
// computeImpact on any goroutine for record.
type impact struct {
	computed *catalog.Impact
	// notExisting: d's version is not one the previous CRD has, so d is
	// no existing object and is not checked.
	notExisting *finding.Finding
	oldSource   string
}

// computeImpact runs d through the upgrade (catalog.ComputeImpact); nil
// when no upgrade concerns d's kind. It changes nothing.
func (u *upgradeCheck) computeImpact(cat *catalog.Catalog, d *document.Document) (*impact, error) {
	if len(u.byKind) == 0 {
		return nil, nil
	}
	ref := prune.Ref(d.Object)
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil // the prune check refuses it
	}
	up, ok := u.byKind[runtimeschema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return nil, nil
	}
	if _, ok := up.Old.CRD.Version(gv.Version); !ok {
		f := finding.NotExisting(up.Old.CRD.Name(), gv.Version)
		return &impact{notExisting: &f}, nil
	}
	imp, err := cat.ComputeImpact(d)
	if err != nil || imp == nil {
		return nil, err
	}
	return &impact{computed: imp, oldSource: up.OldSource.String()}, nil
}

// record counts an impact, in the order of the items, and says what it
// does to the object: what it loses (DataLoss) and why the server would
// refuse it (Invalid); for an object of a version the previous CRD lacks, a
// note that it is not checked.
//
// A refusal the upgrade causes is also one of the create check's (the
// item is checked against the new CRD): caused names them, so that the
// create check leaves them to the upgrade's words.
func (u *upgradeCheck) record(cat *catalog.Catalog, imp *impact) (findings []finding.Finding, caused map[string]bool) {
	switch {
	case imp == nil:
		return nil, nil
	case imp.notExisting != nil:
		return []finding.Finding{*imp.notExisting}, nil
	}
	all := cat.AddImpact(imp.computed)
	u.checked[imp.computed.CRD]++
	caused = map[string]bool{}
	for _, e := range imp.computed.Errors {
		caused[findingKey(finding.FromInvalid(e))] = true
	}
	for _, f := range all {
		// The defaults an object reads with are the CRD change's to tell.
		if f.Severity != finding.Error {
			continue
		}
		f.Message = fmt.Sprintf("%s (previous CustomResourceDefinition: %s)", f.Message, imp.oldSource)
		findings = append(findings, f)
	}
	return findings, caused
}

// findingKey tells findings apart: their check, field and words.
func findingKey(f finding.Finding) string {
	return string(f.Check) + "\x00" + f.Path + "\x00" + f.Message
}

// reportChanges reports each change of each upgrade on its CRD, with the
// objects it hurts. A change of a check of failOn is an error when it
// hurts an object of the items, concerns them all, or when the server
// refuses the CRD update (as check-update exits 1); one that hurts none of
// them is a warning: the cluster may hold others (check-update lists them).
func (c *CRDCheck) reportChanges(u *upgradeCheck) {
	for _, up := range u.upgrades {
		name := up.New.CRD.Name()
		item := u.crds[name]
		checked := u.checked[name]
		for i, a := range up.Tally.Affected() {
			f := up.Findings[i]
			f.Message += finding.ObjectsHurt(a, checked)
			f.Path = "" // a field of the objects, not of the CRD: the message names it
			r := c.result(f, item.ref, item.file)
			hurt := len(a.Objects)
			if !a.Counted && a.Change.Severity.Rank() <= crdupgrade.Invalid.Rank() {
				hurt = checked
			}
			if r.Severity == framework.Error && f.Severity == finding.Error && hurt == 0 && a.Change.Kind != crdupgrade.Refused {
				r.Severity = framework.Warning
			}
			r.Tags = map[string]string{"finding": string(f.Check), "change": f.Reason, "objects": strconv.Itoa(hurt), "checked": strconv.Itoa(checked)}
			if f.Version != "" {
				r.Tags["version"] = f.Version
			}
			if a.Change.Path != "" {
				r.Tags["path"] = a.Change.Path
			}
		}
	}
}
