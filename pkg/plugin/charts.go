package plugin

import "github.com/spf13/cobra"

// chartValues are the values every Helm chart source of --crd-file and
// --old is rendered with (internal/source, docs/sources.md), as helm's
// --set and --values.
type chartValues struct {
	Set, Values []string
}

// AddFlags registers --set and --values.
func (c *chartValues) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&c.Set, "set", nil, "a value of every Helm chart source of --crd-file and --old, as helm's --set (key=value; repeatable), e.g. --set crds.enabled=true")
	cmd.Flags().StringArrayVar(&c.Values, "values", nil, "a values file of every Helm chart source of --crd-file and --old, as helm's --values (repeatable; --set after them)")
	completeFiles(cmd, "values")
}
