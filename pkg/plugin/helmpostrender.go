package plugin

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func newCmdHelmPostRender(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := newCheckUpdateOptions(configFlags, streams)
	o.Output = "text"
	cmd := &cobra.Command{
		Use:               "post-render [--strict] [--fail-on CHECKS]",
		Short:             "A Helm post-renderer: the manifests on stdin checked against the cluster, written unchanged to stdout when clean",
		Long:              helmPostRenderLong,
		Example:           helmPostRenderExample,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			manifests, err := io.ReadAll(streams.In)
			if err != nil {
				return inputError(err)
			}
			if err := helmSettings(cmd.Flags(), getenv, nil); err != nil {
				return err
			}
			// stdout is Helm's: the manifests, and nothing else.
			err = checkManifests(cmd.Context(), cmd, o, manifests, genericiooptions.IOStreams{Out: streams.ErrOut, ErrOut: streams.ErrOut})
			if err != nil {
				return err
			}
			_, err = streams.Out.Write(manifests)
			return err
		},
	}
	o.addUpgradeFlags(cmd)
	return cmd
}

const (
	helmPostRenderLong = `A post-renderer for pipelines that run helm template, helm install or helm upgrade: it reads the
manifests Helm rendered on stdin, checks them against the cluster as check-update -f - does (the
CRDs among them compared with the cluster's, every existing object run through them, the objects
as updates of the cluster's), and then

  - clean: writes the manifests to stdout, byte for byte as read, and exits 0: Helm goes on;
  - otherwise: writes nothing to stdout, the findings to stderr, and exits 1 (2, 3 as below):
    Helm stops before it applies anything.

Helm 4 runs post-renderers as plugins: install crd-check-post-renderer from the release archive
(docs/upgrades.md) and give --post-renderer crd-check-post-renderer. Helm 4 does not show what
a post-renderer plugin writes on stderr: run helm crd-check upgrade to see the findings. Helm 3
runs an executable: --post-renderer kubectl-crd --post-renderer-args helm --post-renderer-args
post-render, and shows the findings in its error.

The cluster: kubectl's flags (--context, -n, ... as --post-renderer-args), else Helm's
environment (HELM_KUBECONTEXT, HELM_NAMESPACE, ...), else the kubeconfig's.
` + exitCodesHelp

	helmPostRenderExample = `  # Helm 4: the post-renderer plugin
  helm upgrade my-release ./widgets --post-renderer crd-check-post-renderer

  # Helm 3: kubectl-crd itself is the post-renderer
  helm upgrade my-release ./widgets --post-renderer kubectl-crd --post-renderer-args helm --post-renderer-args post-render

  # In a pipeline of its own
  helm template my-release ./widgets | kubectl crd helm post-render -n shop > manifests.yaml`
)
