package filter

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
)

// findingsError is returned when results of error severity failed the run:
// exit 1, as for the plugin's findings.
type findingsError struct{ err error }

func (e findingsError) Error() string { return e.err.Error() }
func (e findingsError) Unwrap() error { return e.err }

// ExitCode is 1: the run had findings, not an input or internal error.
func (e findingsError) ExitCode() int { return 1 }

// Reported: the framework has printed the results on stderr already.
func (e findingsError) Reported() bool { return true }

// NewCommand returns "kubectl crd krm": the KRM function, reading a
// ResourceList on stdin (kustomize, kpt), or standalone with a function
// config file and a resource file.
func NewCommand() *cobra.Command {
	// The framework prints the results of a failed run on stderr, where kustomize and kpt
	// show them to the user.
	cmd := command.Build(Processor{}, command.StandaloneEnabled, false)
	cmd.Use = "krm [CONFIG_FILE [RESOURCES_FILE|-]]"
	cmd.Short = "Run as a KRM function: prune and check the objects of a ResourceList (kustomize, kpt)"
	cmd.Long = `Run kubectl crd as a KRM function (kustomize exec functions, kpt fn eval --exec): read a
ResourceList on stdin, remove what the API server would drop from its items (comments and key order
kept), and report every finding as a result. Results listed in the config's failOn are errors and
fail the run.

The function config (apiVersion ` + APIVersion + `, kind ` + Kind + `):

  crdPaths: [crds/]      CRD files or directories, besides the CRDs among the items
  prune: true            remove what the server would drop (default true)
  defaults: false        also write the schemas' defaults
  failOn: [NonStructural] findings that are errors: Prune, NonStructural, MissingCRD`
	cmd.Example = `  # In a kustomization's transformers, with kustomize build --enable-alpha-plugins --enable-exec:
  #   annotations: {config.kubernetes.io/function: "exec: {path: kubectl-crd, args: [krm]}"}

  # Standalone, on a file
  kubectl crd krm config.yaml manifests.yaml`
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		// Standalone, the output is what gets applied ("| kubectl apply -f -"): on an
		// error, nothing is written, not a half-checked stream. A ResourceList (kustomize,
		// kpt) always comes back, with its results.
		stdout := c.OutOrStdout()
		var buf bytes.Buffer
		c.SetOut(&buf)
		err := run(c, args)
		c.SetOut(stdout)
		if err != nil {
			fmt.Fprintln(c.ErrOrStderr()) // the framework's message lacks the end of its line
		}
		if err == nil || len(args) == 0 {
			if _, werr := stdout.Write(buf.Bytes()); werr != nil && err == nil {
				err = werr
			}
		}
		var results framework.Results
		if errors.As(err, &results) {
			return findingsError{err}
		}
		return err
	}
	return cmd
}
