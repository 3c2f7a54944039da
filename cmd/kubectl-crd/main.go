// Command kubectl-crd is the kubectl plugin "kubectl crd".
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // kubeconfig auth providers (oidc), as kubectl has them

	"github.com/kubectl-crd/kubectl-crd/pkg/filter"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	// The KRM function shares the binary: kustomize runs "kubectl-crd krm".
	// Run recovers panics and checks every write to the streams (exit 3); a
	// runtime fatal error (out of memory) exits 2 from the Go runtime itself.
	os.Exit(plugin.Run(streams, os.Args[1:], filter.NewCommand()))
}
