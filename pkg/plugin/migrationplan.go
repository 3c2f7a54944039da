package plugin

import (
	"io"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/migration"
)

// migrationPlans are check-update --migration-plan's plans, by the new
// CRD's name: one per upgrade whose objects must be rewritten
// (migration.New), fed every existing object checked.
type migrationPlans map[string]*migration.Plan

// startPlans plans the migration of each upgrade that needs one, for the
// minor answering.
func (u *upgradeCheck) startPlans() {
	u.plans = migrationPlans{}
	for _, up := range u.upgrades {
		if p := migration.New(up.Old.CRD, up.New.CRD, kubeversion.Current().Minor); p != nil {
			u.plans[up.New.CRD.Name()] = p
		}
	}
}

// finishPlans decides each plan's trim; known says the objects checked
// are those the cluster holds (the cluster's, --objects, --old's).
func (u *upgradeCheck) finishPlans(known bool) {
	for _, p := range u.plans {
		p.Finish(known)
	}
}

// printMigrationPlan writes the plan of an upgrade in the text report:
// what the rewrite of the objects does, the StorageVersionMigration to
// apply (or how to do without), and the verdict on the trim.
func printMigrationPlan(out io.Writer, p *migration.Plan) {
	from := strings.Join(p.From, ", ")
	printable.Fprintf(out, "  Storage version migration (Kubernetes %s): objects stored in %s are rewritten through %s, stored as %s\n", p.Kubernetes, from, p.Via, p.StorageVersion)
	if p.Webhook {
		printable.Fprintf(out, "    %s checked: a conversion webhook converts, what each rewrite keeps is its own\n", plural(p.Checked, "object"))
	} else {
		printable.Fprintf(out, "    %s checked: %d rewritten intact, %d losing data, %d refused\n", plural(p.Checked, "object"), p.Intact, p.Losing(), p.Refused())
	}
	for _, o := range p.Objects {
		for _, c := range o.Loses {
			printable.Fprintf(out, "    %s: rewritten as %s, loses %q%s\n", o.Object, p.StorageVersion, c.Path, at(o.Source, c.Line))
		}
		for _, e := range o.Refused {
			printable.Fprintf(out, "    %s: rewrite refused, stays stored as before: %s%s\n", o.Object, e.Message, at(o.Source, e.Line))
		}
	}
	if p.Losing() > 0 {
		printable.Fprintf(out, "    The rewrite makes these losses final: move the data first (a conversion webhook, or the new version's fields set), then migrate\n")
	}
	m := p.Migrator
	printable.Fprintf(out, "  1. Migrate: apply this StorageVersionMigration (kubectl apply -f), then wait for its condition Succeeded:\n")
	for _, line := range strings.Split(strings.TrimSuffix(string(m.YAML()), "\n"), "\n") {
		printable.Fprintf(out, "       %s\n", line)
	}
	if m.Enable != "" {
		printable.Fprintf(out, "     It needs %s.\n", m.Enable)
	}
	printable.Fprintf(out, "     Without it, write every object back unchanged: %s\n", p.Manual)
	verdict := "not yet"
	if p.Trim.Safe {
		verdict = "safe"
	}
	printable.Fprintf(out, "  2. Trim status.storedVersions to [%s] (%s): %s\n", strings.Join(p.Trim.StoredVersions, ", "), verdict, p.Trim.Reason)
	if p.Trim.Safe && m.TrimsItself {
		printable.Fprintf(out, "     The migration controller trims them itself when it succeeds and the CRD did not change meanwhile; else:\n")
	}
	if p.Trim.Safe {
		printable.Fprintf(out, "       %s\n", p.Trim.Command)
	}
}

// at is " (file:line)" for a line of an object of a file, "" for an
// object of the cluster.
func at(src document.Source, line int) string {
	if src.File == "" {
		return ""
	}
	if line > 0 {
		src.Line = line
	}
	return " (" + src.String() + ")"
}
