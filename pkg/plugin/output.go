package plugin

import (
	"strings"

	"github.com/spf13/cobra"
)

// outputFlags is a command's -o: the formats it writes (the first is the
// default) and their completion. Commands embed it: o.Output is the format.
type outputFlags struct {
	Output string

	formats []string
	usage   string
}

func newOutputFlags(usage string, formats ...string) outputFlags {
	return outputFlags{formats: formats, usage: usage}
}

// AddFlags registers -o with the command's formats as its completion.
func (f *outputFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.Output, "output", "o", f.formats[0], f.usage)
	completeOutput(cmd, f.formats...)
}

// Validate refuses a format the command does not write.
func (f *outputFlags) Validate() error {
	for _, format := range f.formats {
		if f.Output == format {
			return nil
		}
	}
	last := len(f.formats) - 1
	return usageErrorf("unknown output format %q: use %s or %s", f.Output, strings.Join(f.formats[:last], ", "), f.formats[last])
}
