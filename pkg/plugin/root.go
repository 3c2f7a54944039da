// Package plugin holds the commands of kubectl crd: options, flags, inputs
// and printing around the engine.
package plugin

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// version is stamped at release build time with -ldflags -X.
var version = "dev"

const exitCodesHelp = `
Exit codes:
  0  nothing found
  1  findings: the API server would drop, refuse or change something
  2  usage error or bad input (file and line are named)
  3  cluster or internal error`

// NewCmdCRD returns the root command, "kubectl crd".
func NewCmdCRD(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubectl-crd",
		Short: "Show what the API server will drop, refuse or lock in custom resources, before apply",
		Long: `kubectl crd answers, before you apply, what kube-apiserver will do with your custom resources:
which fields it silently prunes, whether a CRD's schema is structural, and what it stores.
It runs the API server's own code (k8s.io/apiextensions-apiserver) on your files.` + "\n" + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl crd",
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%v\nSee '%s --help'.", err, c.CommandPath())
	})
	// The kubeconfig flags of every kubectl command: --kubeconfig, --context, -n, --request-timeout, ...
	// Server warnings are printed on stderr, as kubectl prints them.
	configFlags := genericclioptions.NewConfigFlags(true).WithWarningPrinter(streams)
	configFlags.AddFlags(cmd.PersistentFlags())
	registerKubeconfigCompletions(cmd, configFlags)
	cmd.AddCommand(
		NewCmdExplainStructural(configFlags, streams),
		NewCmdPrune(configFlags, streams),
		NewCmdCheckUpdate(configFlags, streams),
		NewCmdVersion(streams),
		NewCmdCompletion(streams),
	)
	return cmd
}

// NewCmdVersion prints the plugin's version and the server code it embeds.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:               "version",
		Short:             "Print the version of kubectl crd and of the API server code it runs",
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(streams.Out, "kubectl-crd %s\n", version)
			if info, ok := debug.ReadBuildInfo(); ok {
				fmt.Fprintf(streams.Out, "go %s\n", info.GoVersion)
				for _, dep := range info.Deps {
					if dep.Path == "k8s.io/apiextensions-apiserver" {
						fmt.Fprintf(streams.Out, "api server code: %s %s\n", dep.Path, dep.Version)
					}
				}
			}
			return nil
		},
	}
}

// Run executes the root command, with extra subcommands, and returns the
// exit code, printing the error (never a stack trace) on stderr.
func Run(streams genericiooptions.IOStreams, args []string, extra ...*cobra.Command) int {
	cmd := NewCmdCRD(streams)
	cmd.AddCommand(extra...)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil {
		var ee *ExitError
		var reported interface{ Reported() bool }
		switch {
		case errors.As(err, &ee) && ee.Silent:
		case errors.As(err, &reported) && reported.Reported():
		default:
			fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
		}
	}
	return ExitCode(err)
}
