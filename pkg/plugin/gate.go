package plugin

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// gateFlags are --fail-on and --ignore-missing-crds (and prune's
// --fail-on-prune): the findings that fail a run (exit 1), by the names
// the KRM function's failOn takes, bound to the options both front ends
// share (finding.GateOptions). The rule is the engine's (finding.Gate),
// the same in both.
type gateFlags struct {
	finding.GateOptions

	gate finding.Gate
}

// AddFlags registers the gate's flags.
func (g *gateFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&g.FailOn, "fail-on", nil, "the findings that fail the run (exit 1), of "+finding.CheckNames()+
		" (default "+defaultFailOn()+"; --fail-on= for none)")
	cmd.Flags().BoolVar(&g.IgnoreMissingCRDs, "ignore-missing-crds", false,
		"an object of a kind that no CRD defines is a warning, not an error (for repositories that check only some of their kinds)")
	cmd.RegisterFlagCompletionFunc("fail-on", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, c := range finding.Checks {
			names = append(names, string(c))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

// Complete makes the gate: the default findings unless --fail-on names others.
func (g *gateFlags) Complete(cmd *cobra.Command) error {
	if cmd.Flags().Changed("fail-on") && g.FailOn == nil {
		g.FailOn = []string{} // --fail-on= : nothing fails
	}
	gate, err := g.Gate()
	if err != nil {
		return usageErrorf("--fail-on: %v", err)
	}
	g.gate = gate
	return nil
}

func defaultFailOn() string {
	s := ""
	for i, c := range finding.DefaultFailOn {
		if i > 0 {
			s += ","
		}
		s += string(c)
	}
	return s
}
