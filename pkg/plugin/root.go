// Package plugin holds the commands of kubectl crd: options, flags, inputs
// and printing around the engine.
package plugin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
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
It runs the API server's own code (k8s.io/apiextensions-apiserver) on your files.

Each request to the cluster, and the kubeconfig's credential plugin, times out after ` + defaultRequestTimeout.String() + ` unless
--request-timeout says otherwise (--request-timeout=0: no limit); a response is read up to ` + fmt.Sprint(maxResponseBytes>>20) + ` MiB.` + "\n" + exitCodesHelp,
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
		// Two lines, each printed escaped: joined, not formatted into one.
		return inputError(errors.Join(err, fmt.Errorf("See '%s --help'.", c.CommandPath())))
	})
	// The kubeconfig flags of every kubectl command: --kubeconfig, --context, -n, --request-timeout, ...
	// Server warnings are printed on stderr, as kubectl prints them.
	configFlags := newConfigFlags(streams, cmd.PersistentFlags(), cmd.Context)
	registerKubeconfigCompletions(cmd, configFlags)
	verbosity := cmd.PersistentFlags().IntP("v", "v", 0, "log level of the Kubernetes client, as kubectl's -v: 1 and up also show what a credential plugin writes on stderr, 6 each request, 8 their bodies")
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := validateRequestTimeout(configFlags); err != nil {
			return err
		}
		if *verbosity < 0 {
			return usageErrorf("-v must be 0 or more, not %d", *verbosity)
		}
		logTo(streams.ErrOut, *verbosity)
		return nil
	}
	cmd.AddCommand(
		NewCmdExplainStructural(configFlags, streams),
		NewCmdPrune(configFlags, streams),
		NewCmdCheckUpdate(configFlags, streams),
		NewCmdLowerMutability(streams),
		NewCmdTest(streams),
		NewCmdHoles(streams),
		NewCmdHelm(configFlags, streams),
		NewCmdVersion(streams),
		NewCmdCompletion(streams),
	)
	return cmd
}

// defaultRequestTimeout bounds each request when --request-timeout is not
// given: kubectl's default, no limit, hangs forever on a server that accepts
// the connection and never answers.
const defaultRequestTimeout = 30 * time.Second

// newConfigFlags adds the kubeconfig flags to flags, with the default
// request timeout applied when --request-timeout is not set; the
// credential plugin runs on ctx's context (the command's, once it runs).
func newConfigFlags(streams genericiooptions.IOStreams, flags *pflag.FlagSet, ctx func() context.Context) *genericclioptions.ConfigFlags {
	configFlags := genericclioptions.NewConfigFlags(true).WithWarningPrinter(streams)
	configFlags.AddFlags(flags)
	creds := &credentials{context: ctx}
	return configFlags.WithWrapConfigFn(func(c *rest.Config) *rest.Config {
		// An explicit --request-timeout=0 means no limit, as in kubectl.
		if c.Timeout == 0 && !flags.Changed("request-timeout") {
			c.Timeout = defaultRequestTimeout
		}
		c.Wrap(limitResponses(maxResponseBytes))
		// The credential plugin, bounded by the same timeout, runs once a run.
		return creds.apply(c)
	})
}

// validateRequestTimeout refuses a --request-timeout that kubectl refuses
// (it is a usage error, exit 2), before anything is read: client-go would
// refuse it only when it first reads the kubeconfig, as a cluster error.
func validateRequestTimeout(flags *genericclioptions.ConfigFlags) error {
	if flags.Timeout == nil {
		return nil
	}
	d, err := clientcmd.ParseTimeout(*flags.Timeout)
	switch {
	case err != nil:
		return usageErrorf("--request-timeout=%s: want a duration (30s, 2m, 1h) or a number of seconds; 0: no limit", *flags.Timeout)
	case d < 0:
		return usageErrorf("--request-timeout=%s: want 0 (no limit) or more", *flags.Timeout)
	}
	return nil
}

// klogFlags are klog's own flags: its log level is set only through them.
var (
	klogFlags     = flag.NewFlagSet("klog", flag.ContinueOnError)
	klogFlagsOnce sync.Once
)

// logTo routes klog, the log of client-go, to w from log level v on, as
// kubectl's -v does; at 0 it logs nothing: each failure is ours to report,
// in one line, and client-go's "E1125 ... Unexpected error" lines repeated it.
func logTo(w io.Writer, v int) {
	klogFlagsOnce.Do(func() { klog.InitFlags(klogFlags) })
	if v == 0 {
		w = io.Discard
	}
	for name, value := range map[string]string{
		"v":               strconv.Itoa(v),
		"logtostderr":     "false", // to w, not os.Stderr: the stream given to Run
		"alsologtostderr": "false",
		"stderrthreshold": "FATAL",
		"one_output":      "true", // each line once, not once per severity at or under it
	} {
		if err := klogFlags.Set(name, value); err != nil {
			panic(err) // klog's own flags: a bug
		}
	}
	klog.SetOutput(w)
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

// ExitInterrupted is Run's exit code for a run stopped by the
// cancellation of its context: 128 + SIGINT, as a shell reports a command
// that SIGINT ended (cmd/kubectl-crd ends by the signal itself).
const ExitInterrupted = 130

// panicHint follows the message of a recovered panic.
const panicHint = "this is a bug in kubectl crd: please report it (https://github.com/kubectl-crd/kubectl-crd/issues) with the command and its input"

// Run executes the root command, with extra subcommands, on ctx
// (cmd.Context() in every command: each fetch, chart rendering and
// request of the cluster stops when it is cancelled), and returns the
// exit code, printing the error (never a stack trace) on stderr. A failed
// write to stdout or stderr and a panic are internal errors: exit 3. (A Go
// runtime fatal error, such as running out of memory, cannot be recovered:
// the runtime exits 2 itself.) A run that fails once ctx is cancelled (a
// signal: cmd/kubectl-crd's main then ends the process by it) prints
// nothing and exits ExitInterrupted.
func Run(ctx context.Context, streams genericiooptions.IOStreams, args []string, extra ...*cobra.Command) (code int) {
	out, errOut := newCheckedWriter(streams.Out), newCheckedWriter(streams.ErrOut)
	streams.Out, streams.ErrOut = out, errOut
	defer func() {
		// Only a panic of this goroutine reaches here; the commands run on it.
		if r := recover(); r != nil {
			// A stack's lines are meant: each printed escaped.
			fmt.Fprintf(errOut, "internal error: %s\n%s\n", printable.Lines(fmt.Sprint(r)), panicHint)
			code = ExitInternal
		}
	}()
	// Silent until the flags are read: completions contact the cluster before.
	logTo(errOut, 0)
	cmd := NewCmdCRD(streams)
	cmd.AddCommand(extra...)
	internalErrors(cmd)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil && ctx.Err() != nil {
		// Stopped, not failed: what it says is the cancellation's.
		return ExitInterrupted
	}
	werr := out.err
	if werr == nil {
		werr = errOut.err
	}
	if err != nil && (werr == nil || !errors.Is(err, werr)) {
		// Silent: reported already, by the command (findings, the KRM function's framework).
		var ee *ExitError
		if !errors.As(err, &ee) {
			// cobra's own (unknown command, arguments): its lines are meant, and what
			// it repeats of the command line is quoted.
			fmt.Fprintf(errOut, "error: %s\n", printable.Lines(err.Error()))
		} else if !ee.Silent {
			fmt.Fprintf(errOut, "error: %s\n", printable.Error(err))
		}
	}
	if werr != nil {
		// Said on stderr, which may be the broken stream: the exit code says it anyway.
		fmt.Fprintf(streams.ErrOut, "error: writing the output: %s\n", printable.Error(werr))
		return ExitInternal
	}
	return ExitCode(err)
}

// internalErrors makes every error a command's own code returns without an
// exit code (an ExitError, exitcode.Error, which the KRM function returns
// too) an internal error, exit 3: a bug or the machine's fault, not the
// user's input. What is left untyped is cobra's own (unknown command, wrong
// arguments): usage errors, exit 2.
func internalErrors(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		internalErrors(c)
	}
	run := cmd.RunE
	if run == nil {
		return
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		err := run(c, args)
		var ee *ExitError
		if err == nil || errors.As(err, &ee) {
			return err
		}
		return &ExitError{Code: ExitInternal, Err: err}
	}
}
