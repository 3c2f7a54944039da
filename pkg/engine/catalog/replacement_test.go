package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// refusedDir holds a Widget CRD (old.yaml) and new versions of it that the
// server's CRD update validation refuses (the e2e suite checks them on a
// real server); cost.yaml and compile.yaml its create validation refuses too.
const refusedDir = "../../../test/e2e/testdata/crdupgrade-refused/"

// A CRD the create validation refuses, about to replace another: the
// verdict is the update validation's (Refused findings) when the old CRD
// is known, from a file or the cluster; without one, the create's, as an
// input error; a CRD of a schema source (PrepareCRD) is refused at once.
func TestReplacementRefusedByCreate(t *testing.T) {
	old := readFile(t, refusedDir+"old.yaml")[0]
	for _, name := range []string{"cost.yaml", "compile.yaml", "selectable.yaml", "scope.yaml"} {
		t.Run(name, func(t *testing.T) {
			newDoc := readFile(t, refusedDir+name)[0]
			createErr := func() error {
				_, _, err := newServed(Options{}).AddPrepared(newServed(Options{}).PrepareCRD(newDoc))
				return err
			}()
			refusedByCreate := name != "scope.yaml"
			var ie *document.InputError
			if refusedByCreate != errors.As(createErr, &ie) {
				t.Fatalf("PrepareCRD: %v, want refused %v", createErr, refusedByCreate)
			}

			// With the old CRD: the update validation's refusal, as findings.
			c := newServed(Options{})
			if ok, err := c.addPreviousCRD(old); !ok || err != nil {
				t.Fatalf("addPreviousCRD: %v %v", ok, err)
			}
			if _, _, err := c.AddPrepared(c.prepareReplacement(newDoc)); err != nil {
				t.Fatalf("AddPrepared of prepareReplacement: %v", err)
			}
			ups, err := c.compareUpgrades(context.Background(), nil)
			if err != nil || len(ups) != 1 {
				t.Fatalf("Upgrades: %d, %v", len(ups), err)
			}
			refused := 0
			for _, f := range ups[0].Findings {
				if f.Reason == "Refused" {
					refused++
					if f.Check != finding.Breaking || f.Line != newDoc.Source.Line {
						t.Errorf("a refusal as %s at line %d, want Breaking at %d", f.Check, f.Line, newDoc.Source.Line)
					}
				}
			}
			if refused == 0 {
				t.Errorf("no Refused finding: %+v", ups[0].Findings)
			}

			// Without one: the create's refusal, the input error PrepareCRD gives.
			c = newServed(Options{})
			if _, _, err := c.AddPrepared(c.prepareReplacement(newDoc)); err != nil {
				t.Fatalf("AddPrepared of prepareReplacement: %v", err)
			}
			ups, err = c.compareUpgrades(context.Background(), nil)
			if refusedByCreate {
				if !errors.As(err, &ie) || err.Error() != createErr.Error() || len(ups) != 0 {
					t.Errorf("Upgrades without an old CRD: %d upgrades, %v; want the create's %v", len(ups), err, createErr)
				}
			} else if err != nil || len(ups) != 0 {
				t.Errorf("Upgrades without an old CRD: %d upgrades, %v; want none", len(ups), err)
			}
		})
	}
}

// The update ratchets the cost of each rule of a version whose schema does
// not change (not the schema's total): a CRD its create validation refuses
// for a rule over the per-rule budget (4x, stored when the budget allowed
// it, as a cluster may hold it) replaces its own copy without a refusal.
func TestReplacementRatchetsCost(t *testing.T) {
	text := strings.Replace(string(readFile(t, refusedDir+"cost.yaml")[0].Raw()),
		"names: {type: array, items: {type: string}}", "names: {type: array, maxItems: 2000, items: {type: string, maxLength: 10}}", 1)
	text = strings.Replace(text, "self.names.all(x, self.names.all(y, x == y))", "self.names.exists(x, self.names.exists(y, x == y))", 1)
	doc := read(t, "cost4x.yaml", text)[0]
	c := newServed(Options{})
	if _, _, err := c.AddPrepared(c.PrepareCRD(doc)); err == nil || !strings.Contains(err.Error(), "exceeds budget by factor of 4.0x") {
		t.Fatalf("the create validation: %v, want the rule over the budget", err)
	}
	c = newServed(Options{})
	// A previous CRD is taken as a cluster holds it: not validated.
	if ok, err := c.addPreviousCRD(doc); !ok || err != nil {
		t.Fatalf("addPreviousCRD: %v %v", ok, err)
	}
	if _, _, err := c.AddPrepared(c.prepareReplacement(doc)); err != nil {
		t.Fatal(err)
	}
	ups, err := c.compareUpgrades(context.Background(), nil)
	if err != nil || len(ups) != 1 {
		t.Fatalf("Upgrades: %d, %v", len(ups), err)
	}
	for _, f := range ups[0].Findings {
		t.Errorf("a finding of an unchanged CRD: %s", f.Message)
	}
}

// The objects an upgrade hurts are named in the namespace they are in: the
// one the old CRD's scope gave them, for an object without one the
// request's (-n, else the context's, else default), whatever the new scope.
func TestUpgradeImpactNamespace(t *testing.T) {
	objects := readFile(t, refusedDir+"objects.yaml")
	for _, tc := range []struct {
		ns   Namespaces
		want []string
	}{
		{Namespaces{Offline: true}, []string{"other/w1", "default/w2"}},
		{Namespaces{Default: "team", Offline: true}, []string{"other/w1", "team/w2"}},
	} {
		c := newServed(Options{Namespaces: tc.ns})
		if ok, err := c.addPreviousCRD(readFile(t, refusedDir+"old.yaml")[0]); !ok || err != nil {
			t.Fatalf("addPreviousCRD: %v %v", ok, err)
		}
		if _, _, err := c.AddPrepared(c.prepareReplacement(readFile(t, refusedDir+"scope.yaml")[0])); err != nil {
			t.Fatal(err)
		}
		if _, err := c.compareUpgrades(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range objects {
			imp, _, err := c.upgradeImpact(d)
			if err != nil || imp == nil {
				t.Fatalf("%s: %v %v", d.Source, imp, err)
			}
			got = append(got, fmt.Sprintf("%s/%s", imp.Object.Namespace, imp.Object.Name))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v: the objects (-want +got):\n%s", tc.ns, diff)
		}
	}
}

// A CRD without a name replaces none: refused as a create at once.
func TestReplacementWithoutName(t *testing.T) {
	text := readFile(t, refusedDir+"cost.yaml")[0].Raw()
	docs := read(t, "noname.yaml", strings.Replace(string(text), "  name: widgets.refused.example.com\n", "", 1))
	c := newServed(Options{})
	if _, _, err := c.AddPrepared(c.prepareReplacement(docs[0])); err == nil {
		t.Error("a CRD without a name is added")
	}
}
