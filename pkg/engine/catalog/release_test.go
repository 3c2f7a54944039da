package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// The checks of objects release the schema as written of the versions
// they validate (schema.CRD.ReleaseSchema), and say the same of an object
// after as before.
func TestChecksReleaseSchemas(t *testing.T) {
	c := newWithCRD(t, Options{})
	crd, _ := c.reg.Lookup("storage.example.com/v1", "Database")
	if v, _ := crd.Version("v1"); v.Schema == nil {
		t.Fatal("no schema before the checks")
	}
	bad := strings.Replace(database, "  engine: postgres\n", "", 1)
	var verdicts [][]string
	for range 2 {
		d := read(t, "bad.yaml", bad)[0]
		v, err := c.Check(context.Background(), d, CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range v.Findings {
			got = append(got, f.Message)
		}
		verdicts = append(verdicts, got)
		if !crd.SchemaReleased("v1") {
			t.Error("the check did not release the schema of v1")
		}
	}
	if diff := cmp.Diff(verdicts[0], verdicts[1]); diff != "" {
		t.Errorf("the findings after the release (-before +after):\n%s", diff)
	}
	if !strings.Contains(strings.Join(verdicts[1], "\n"), "spec.engine: Required value") {
		t.Errorf("the server's validation is gone after the release: %q", verdicts[1])
	}
}

// An upgrade compares the CRDs as written before an object is checked; the
// impacts then release the schemas of the versions they validate, of the
// old CRD and of the new.
func TestImpactsReleaseSchemasAfterTheComparison(t *testing.T) {
	c := newServed(Options{})
	if ok, err := c.addPreviousCRD(readFile(t, upgradeOld)[0]); !ok || err != nil {
		t.Fatalf("addPreviousCRD: %v %v", ok, err)
	}
	for _, d := range readFile(t, upgradeNew) {
		if _, _, err := c.addCRD(d); err != nil {
			t.Fatal(err)
		}
	}
	ups, err := c.compareUpgrades(context.Background(), nil)
	if err != nil || len(ups) != 1 {
		t.Fatalf("Upgrades: %d, %v", len(ups), err)
	}
	if len(ups[0].Changes) == 0 {
		t.Fatal("no change found: the test shows nothing")
	}
	for _, d := range readFile(t, upgradeObjects) {
		if _, _, err := c.upgradeImpact(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, crd := range []*schema.CRD{ups[0].Old.CRD, ups[0].New.CRD} {
		if !crd.SchemaReleased("v1") {
			t.Errorf("%s: the schema of v1 kept after the impacts", crd.Name())
		}
	}
}
