package strategy

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// costFactor is how the server's refusal words a cost over the limit
// (validation's getCostErrorMessage).
func costFactor(cost, limit uint64) string {
	f := float64(cost) / float64(limit)
	switch {
	case f > 100:
		return "more than 100x"
	case f < 1.5:
		return fmt.Sprintf("%fx", f)
	}
	return fmt.Sprintf("%.1fx", f)
}

// RuleCosts gives the cost the server's own CRD validation finds: for the
// rule of test/e2e/testdata/crdvalidation/cel-cost-too-high.yaml, unbounded
// and with its list and strings bounded in steps, the server refuses the
// CRD exactly when the estimate is over the limit, by the factor the
// estimate gives, to the sixth decimal below 1.5x.
func TestRuleCosts(t *testing.T) {
	text, err := os.ReadFile("../../../test/e2e/testdata/crdvalidation/cel-cost-too-high.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const list = "items: {type: string}"
	if !strings.Contains(string(text), list) {
		t.Fatalf("the CRD no longer has %q", list)
	}
	variants := map[string]string{"unbounded": string(text)}
	for _, n := range []int{10, 100, 300, 400, 600, 1000, 3000} {
		variants[fmt.Sprintf("maxItems %d", n)] = strings.Replace(string(text), list, fmt.Sprintf("maxItems: %d\n                %s", n, "items: {type: string, maxLength: 64}"), 1)
	}
	refused := 0
	for name, doc := range variants {
		raw := mustYAML(t, doc)
		costs, limit, err := Validators{}.RuleCosts(raw)
		if err != nil || len(costs) != 1 {
			t.Fatalf("%s: %v, %v", name, costs, err)
		}
		cost := costs["spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0]"]
		crd, _, err := schema.DecodeObject(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		errs, _ := Validators{}.ValidateCRDCreate(crd.Object)
		server := ""
		for _, e := range errs {
			if _, f, ok := strings.Cut(e.Detail, "estimated rule cost exceeds budget by factor of "); ok {
				server, _, _ = strings.Cut(f, " (")
			}
		}
		t.Logf("%s: cost %d of %d; the server: %q", name, cost, limit, server)
		switch {
		case server == "" && cost > limit:
			t.Errorf("%s: estimated %d, over %d, and the server accepts the rule", name, cost, limit)
		case server != "" && server != costFactor(cost, limit):
			t.Errorf("%s: the server's factor is %s, the estimate's %s (%d)", name, server, costFactor(cost, limit), cost)
		case server != "":
			refused++
		}
	}
	if refused < 2 || refused == len(variants) {
		t.Errorf("%d of %d variants refused: the steps do not straddle the limit", refused, len(variants))
	}
}
