package catalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

const (
	upgradeOld     = "../../../test/e2e/testdata/crdupgrade/old.yaml"
	upgradeNew     = "../../../test/e2e/testdata/crdupgrade/new.yaml"
	upgradeObjects = "../../../test/e2e/testdata/crdupgrade/objects.yaml"
)

// An upgrade through the catalog: the previous CRD from a file (--old, the
// function's previous) or from the cluster; the changes as findings; each
// object's impact as findings, the same whichever the old CRD's source.
func TestUpgrades(t *testing.T) {
	oldDoc := readFile(t, upgradeOld)[0]
	oldCRD, _, err := schema.DecodeObject(oldDoc.Object, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		// previous adds the old CRD from its file.
		previous bool
	}{
		{"previous from a file", Options{}, true},
		{"previous from the cluster", Options{Cluster: &fakeCluster{crds: []*schema.CRD{oldCRD}}, OldFromCluster: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newServed(tc.opts)
			if tc.previous {
				if ok, err := c.addPreviousCRD(oldDoc); !ok || err != nil {
					t.Fatalf("addPreviousCRD: %v %v", ok, err)
				}
			}
			for _, d := range readFile(t, upgradeNew) {
				if _, _, err := c.addCRD(d); err != nil {
					t.Fatal(err)
				}
			}
			ups, err := c.compareUpgrades(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(ups) != 1 {
				t.Fatalf("%d upgrades, want 1", len(ups))
			}
			var got []string
			for _, f := range ups[0].Findings {
				got = append(got, fmt.Sprintf("%s %s %s", f.Check, f.Reason, f.Path))
			}
			want := []string{
				"DataLoss PreserveUnknownRemoved spec.extra",
				"DataLoss FieldRemoved spec.name",
				"Invalid ListTypeChanged spec.list",
				"Invalid EnumTightened spec.mode",
				"Invalid BoundTightened spec.size",
				"Invalid RequiredAdded spec.size",
				"CRDChange DefaultAdded spec.canary",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("upgrade findings (-want +got):\n%s", diff)
			}

			got = nil
			for _, d := range readFile(t, upgradeObjects) {
				imp, findings, err := c.upgradeImpact(d)
				if err != nil || imp == nil {
					t.Fatalf("%s: %v %v", d.Source, imp, err)
				}
				for _, f := range findings {
					got = append(got, fmt.Sprintf("%s:%d %s %s", imp.Object.Name, f.Line, f.Check, f.Message))
				}
			}
			want = []string{
				`g1:5 CRDChange reads as "spec.canary" = "new" under the new CRD (its default)`,
				`g1:5 DataLoss loses "spec.extra.drop" under the new CRD: pruned when read, for good on its next write`,
				`g1:5 DataLoss loses "spec.name" under the new CRD: pruned when read, for good on its next write`,
				`g2:11 CRDChange reads as "spec.canary" = "new" under the new CRD (its default)`,
				`g2:11 Invalid a create of it again would be refused under the new CRD: spec.mode: Unsupported value: "c": supported values: "a", "b"`,
				`g2:11 Invalid a create of it again would be refused under the new CRD: spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5`,
				`g3:17 CRDChange reads as "spec.canary" = "new" under the new CRD (its default)`,
				`g3:17 Invalid a create of it again would be refused under the new CRD: spec.list[1]: Duplicate value: "p"`,
				`g3:17 Invalid a create of it again would be refused under the new CRD: spec.size: Required value`,
				`g4:22 CRDChange reads as "spec.canary" = "new" under the new CRD (its default)`,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("object findings (-want +got):\n%s", diff)
			}
			got = nil
			for _, a := range ups[0].Tally.Affected() {
				var names []string
				for _, o := range a.Objects {
					names = append(names, o.Name)
				}
				got = append(got, fmt.Sprintf("%s %s: %v", a.Change.Kind, a.Change.Path, names))
			}
			want = []string{
				"PreserveUnknownRemoved spec.extra: [g1]",
				"FieldRemoved spec.name: [g1]",
				"ListTypeChanged spec.list: [g3]",
				"EnumTightened spec.mode: [g2]",
				"BoundTightened spec.size: [g2]",
				"RequiredAdded spec.size: [g3]",
				"DefaultAdded spec.canary: [g1 g2 g3 g4]",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("objects per change (-want +got):\n%s", diff)
			}
			if len(ups[0].Unexplained) > 0 {
				t.Errorf("unexplained: %+v", ups[0].Unexplained)
			}
		})
	}
}

// Whether an upgrade fails the run is what its report shows, for every
// gate, strict or not: a change that fails (Verdicts) or an existing
// object's finding that does (JudgeImpact). The new CRD changes the scope:
// the server refuses the update (Breaking) and would refuse the objects
// (Invalid); failing on Invalid alone, the objects fail the upgrade though
// no change does (issue 38: the run exited 0 with errors in its report).
func TestUpgradeFailsAsItsReport(t *testing.T) {
	const dir = "../../../test/e2e/testdata/crdupgrade-refused/"
	c := newServed(Options{})
	if ok, err := c.addPreviousCRD(readFile(t, dir+"old.yaml")[0]); !ok || err != nil {
		t.Fatalf("addPreviousCRD: %v %v", ok, err)
	}
	if _, _, err := c.addCRD(readFile(t, dir+"scope.yaml")[0]); err != nil {
		t.Fatal(err)
	}
	ups, err := c.compareUpgrades(context.Background(), nil)
	if err != nil || len(ups) != 1 {
		t.Fatalf("%d upgrades: %v", len(ups), err)
	}
	up := ups[0]
	var objects [][]finding.Finding
	for _, d := range readFile(t, dir+"objects.yaml") {
		_, findings, err := c.upgradeImpact(d)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, findings)
	}
	gates := [][]string{nil, {}}
	for _, check := range finding.Checks {
		gates = append(gates, []string{string(check)})
	}
	for _, names := range gates {
		gate, err := finding.NewGate(names, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, strict := range []bool{false, true} {
			changes, hurt := false, false
			for _, v := range up.Verdicts(strict, gate) {
				changes = changes || v.Fails
			}
			for _, findings := range objects {
				hurt = hurt || finding.Failing(JudgeImpact(gate, findings))
			}
			if got := up.Fails(strict, gate); got != (changes || hurt) {
				t.Errorf("failOn %v, strict %v: Fails %v; a change fails %v, an object %v", names, strict, got, changes, hurt)
			}
			if fmt.Sprint(names) == "[Invalid]" && !strict && (changes || !hurt) {
				t.Errorf("failOn [Invalid]: a change fails %v, an object %v; want the objects alone", changes, hurt)
			}
		}
	}
}

// A change that loses nothing (CRDChange) fails the run exactly when the
// gate names CRDChange, before any object is counted and whether strict
// or not, as the KRM function's failOn: [CRDChange] fails it (issue 39:
// check-update's --fail-on CRDChange never failed); a severe change
// fails by the objects it hurts, never because CRDChange is named.
func TestCRDChangeFailsByTheGate(t *testing.T) {
	c := newServed(Options{})
	if ok, err := c.addPreviousCRD(readFile(t, upgradeOld)[0]); !ok || err != nil {
		t.Fatalf("addPreviousCRD: %v %v", ok, err)
	}
	if _, _, err := c.addCRD(readFile(t, upgradeNew)[0]); err != nil {
		t.Fatal(err)
	}
	ups, err := c.compareUpgrades(context.Background(), nil)
	if err != nil || len(ups) != 1 {
		t.Fatalf("%d upgrades: %v", len(ups), err)
	}
	for _, names := range [][]string{nil, {"CRDChange"}, {"DataLoss", "CRDChange"}} {
		gate, err := finding.NewGate(names, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, strict := range []bool{false, true} {
			changes := 0
			for _, v := range ups[0].Verdicts(strict, gate) {
				if v.Finding.Check == finding.CRDChange && v.Fails != gate.FailsOn(finding.CRDChange) {
					t.Errorf("failOn %v, strict %v: %s fails %v", names, strict, v.Finding.Message, v.Fails)
				}
				if v.Finding.Check == finding.CRDChange {
					changes++
				}
				if v.Finding.Check != finding.CRDChange && v.Fails && !strict {
					t.Errorf("failOn %v: %s fails with no object counted", names, v.Finding.Message)
				}
			}
			if changes == 0 {
				t.Fatal("no CRDChange change in the upgrade")
			}
			if got, want := ups[0].Fails(strict, gate), gate.FailsOn(finding.CRDChange) || strict && gate.FailsOn(finding.DataLoss); got != want {
				t.Errorf("failOn %v, strict %v: the upgrade fails %v, want %v", names, strict, got, want)
			}
		}
	}
}

// upgradeImpact is what ScanImpacts finds of one object: its impact (nil
// when no upgrade concerns its kind) and findings, counted in the
// upgrade's Tally, or its error.
func (c *Catalog) upgradeImpact(d *document.Document) (imp *crdupgrade.ObjectImpact, findings []finding.Finding, err error) {
	one := func(yield func(*document.Document, error) bool) { yield(d, nil) }
	err = c.ScanImpacts(one, func(_ *document.Document, i *crdupgrade.ObjectImpact, f []finding.Finding, e error) error {
		imp, findings = i, f
		return e
	})
	return imp, findings, err
}

// An upgrade that removes v1alpha1 and stops serving v1beta1
// (examples/removed-version): each change counts the existing objects of
// its version and fails the run by them; with no object of it, it fails
// only with strict (a stored version removed would concern them all). An
// object of -f of such a version is refused (UpdateUnserved), Breaking at
// its apiVersion's line, and fails the run.
func TestRemovedVersionVerdicts(t *testing.T) {
	const dir = "../../../examples/removed-version/"
	for _, tc := range []struct {
		name    string
		objects []string
		// want: per change, "Kind: hurt fails (strict)".
		want []string
	}{
		{"each version used", []string{"boiler", "cellar", "roof"},
			[]string{"VersionRemoved: 1 true true", "VersionUnserved: 1 true true"}},
		{"no object of them", []string{"roof"},
			[]string{"VersionRemoved: 0 false true", "VersionUnserved: 0 false true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newServed(Options{})
			if ok, err := c.addPreviousCRD(readFile(t, dir+"crd-v1.yaml")[0]); !ok || err != nil {
				t.Fatalf("addPreviousCRD: %v %v", ok, err)
			}
			if _, _, err := c.addCRD(readFile(t, dir+"crd-v2.yaml")[0]); err != nil {
				t.Fatal(err)
			}
			ups, err := c.compareUpgrades(context.Background(), nil)
			if err != nil || len(ups) != 1 {
				t.Fatalf("%d upgrades: %v", len(ups), err)
			}
			for _, name := range tc.objects {
				if _, _, err := c.upgradeImpact(readFile(t, dir+"sensors/"+name+".yaml")[0]); err != nil {
					t.Fatal(err)
				}
			}
			strict := ups[0].Verdicts(true, finding.DefaultGate())
			var got []string
			for i, v := range ups[0].Verdicts(false, finding.DefaultGate()) {
				got = append(got, fmt.Sprintf("%s: %d %v %v", v.Change.Kind, v.Hurt, v.Fails, strict[i].Fails))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if want := len(tc.objects) > 1; ups[0].Fails(false, finding.DefaultGate()) != want || ups[0].Hurt != len(tc.objects)-1 {
				t.Errorf("Fails %v, %d hurt; want %v, %d", ups[0].Fails(false, finding.DefaultGate()), ups[0].Hurt, want, len(tc.objects)-1)
			}
		})
	}

	c := newServed(Options{})
	if ok, err := c.addPreviousCRD(readFile(t, dir+"crd-v1.yaml")[0]); !ok || err != nil {
		t.Fatalf("addPreviousCRD: %v %v", ok, err)
	}
	if _, _, err := c.addCRD(readFile(t, dir+"crd-v2.yaml")[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.compareUpgrades(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range []string{"boiler", "cellar", "roof"} {
		v, err := c.Check(context.Background(), readFile(t, dir+"sensors/"+name+".yaml")[0], CheckOptions{UpdateOnly: true, Gate: finding.DefaultGate()})
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("%s %s fails %v", name, v.Update.Status, v.Fails())
		for _, f := range v.Findings {
			s += fmt.Sprintf("; %s %s line %d", f.Check, f.Reason, f.Line)
		}
		got = append(got, s)
	}
	want := []string{
		"boiler Unserved fails true; Breaking VersionRemoved line 2",
		"cellar Unserved fails true; Breaking VersionUnserved line 1",
		"roof Create fails false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the objects of -f (-want +got):\n%s", diff)
	}
}
