package finding

import (
	"strings"
	"testing"
)

// The gate of each set of options: the default, none, the plugin's
// --fail-on-prune, and ignoreMissingCRDs over a failOn that names
// MissingCRD.
func TestGateOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  GateOptions
		fails []Check
		err   string
	}{
		{name: "default", opts: GateOptions{}, fails: DefaultFailOn},
		{name: "none", opts: GateOptions{FailOn: []string{}}},
		{name: "named", opts: GateOptions{FailOn: []string{"CRDChange"}}, fails: []Check{CRDChange}},
		{name: "fail on prune", opts: GateOptions{FailOn: []string{"Update"}, FailOnPrune: true}, fails: []Check{Update, Prune}},
		{name: "default and prune", opts: GateOptions{FailOnPrune: true}, fails: append([]Check{Prune}, DefaultFailOn...)},
		{name: "ignore missing", opts: GateOptions{FailOn: []string{"MissingCRD", "Invalid"}, IgnoreMissingCRDs: true}, fails: []Check{Invalid}},
		{name: "unknown", opts: GateOptions{FailOn: []string{"Updates"}}, err: `unknown finding "Updates" (` + CheckNames() + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.opts.Gate()
			if verr := tc.opts.Validate(); (verr == nil) != (err == nil) {
				t.Errorf("Validate %v, Gate %v", verr, err)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[Check]bool{}
			for _, c := range tc.fails {
				want[c] = true
			}
			for _, c := range Checks {
				if g.FailsOn(c) != want[c] {
					t.Errorf("FailsOn(%s) = %v, want %v", c, g.FailsOn(c), want[c])
				}
			}
		})
	}
}
