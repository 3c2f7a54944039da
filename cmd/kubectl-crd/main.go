// Command kubectl-crd is the kubectl plugin "kubectl crd".
package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // kubeconfig auth providers (oidc), as kubectl has them

	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/internal/startup"
	"github.com/kubectl-crd/kubectl-crd/pkg/filter"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	// Cancelled by SIGINT or SIGTERM: every fetch, chart rendering and
	// request of the cluster stops, as crane's commands do.
	ctx, interrupted := safewrite.SignalContext(context.Background())
	code := run(ctx, streams, os.Args[1:])
	if sig := interrupted(); sig != nil {
		// Its work stopped, the run ends as the signal ends a process
		// (130 in a shell for SIGINT), its temporary files removed.
		safewrite.DieOf(sig)
	}
	os.Exit(code)
}

// run runs a command of either front end: the KRM function shares the
// binary (kustomize runs "kubectl-crd krm"). Run recovers panics and checks
// every write to the streams (exit 3); a runtime fatal error (out of memory)
// exits 2 from the Go runtime itself.
//
// The garbage collector, off while the packages initialised
// (internal/startup), is back on before any command runs (as GOGC and
// GOMEMLIMIT set it, else with a floor under its goal while the heap is small);
// --help and usage errors print and exit without it.
func run(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	cobra.OnInitialize(startup.Done)
	return plugin.Run(ctx, streams, args, filter.NewCommand())
}
