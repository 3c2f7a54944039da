package filter

import (
	"strconv"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// reportChanges reports each change of each upgrade of a CRD among the
// items (crds: those the loader added, the last of a name wins) on its
// CRD, with the objects it hurts: an error exactly when the engine's
// verdict on it fails the run (catalog.ChangeVerdict), as check-update
// exits 1. A Breaking, DataLoss or Invalid change that hurts none of the
// items is a warning: the cluster may hold others (check-update lists
// them).
func (c *CRDCheck) reportChanges(upgrades []*catalog.Upgrade, crds []catalog.AddedCRD) {
	byName := map[string]catalog.AddedCRD{}
	for _, a := range crds {
		byName[a.CRD.Name()] = a
	}
	for _, up := range upgrades {
		ref, file := crdRef(byName[up.New.CRD.Name()])
		for _, v := range up.Verdicts(false, c.gate) {
			f := finding.Judged{Finding: v.Finding, Fails: v.Fails}
			f.Path = "" // a field of the objects, not of the CRD: the message names it
			r := c.result(f, ref, file)
			r.Tags = map[string]string{"finding": string(f.Check), "change": f.Reason, "objects": strconv.Itoa(v.Hurt), "checked": strconv.Itoa(up.Checked)}
			if f.Version != "" {
				r.Tags["version"] = f.Version
			}
			if v.Change.Path != "" {
				r.Tags["path"] = v.Change.Path
			}
		}
	}
}
