package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
)

// HelmUpgradeOptions are the options of "kubectl crd helm upgrade", which
// the Helm plugin runs as "helm crd-check upgrade".
type HelmUpgradeOptions struct {
	// Helm is the helm binary; HelmArgs are helm upgrade's arguments, as
	// given, but the check's own flags.
	Helm     string
	HelmArgs []string

	// check holds check-update's options, checks its flags (--strict,
	// --fail-on, ...), kube the flags of the cluster it reads.
	check  *CheckUpdateOptions
	checks *cobra.Command
	kube   *pflag.FlagSet
	genericiooptions.IOStreams
}

func newCmdHelmUpgrade(streams genericiooptions.IOStreams) *cobra.Command {
	o := &HelmUpgradeOptions{IOStreams: streams, kube: pflag.NewFlagSet("kube", pflag.ContinueOnError),
		checks: &cobra.Command{Use: "upgrade"}}
	o.check = newCheckUpdateOptions(newConfigFlags(streams, o.kube, o.checks.Context), streams)
	o.check.addUpgradeFlags(o.checks)
	o.checks.Flags().StringVar(&o.check.Output, "check-output", "text", "the check's output format: text or json; sarif, junit or github: a report of the findings, for CI (helm's own -o is not taken)")
	cmd := &cobra.Command{
		Use:     "upgrade RELEASE CHART [helm upgrade's flags] [--strict] [--fail-on CHECKS] [--check-output FORMAT]",
		Short:   "Check the CRDs of helm upgrade RELEASE CHART, rendered by Helm with the release's values, against the cluster's objects",
		Long:    helmUpgradeLong,
		Example: helmUpgradeExample,
		// Helm's flags go to helm as given: only the check's own are read here.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if helpAsked(args) {
				return cmd.Help()
			}
			if err := o.Complete(args); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().AddFlagSet(o.checks.Flags()) // for --help only
	cmd.SetUsageFunc(helmUpgradeUsage)
	return cmd
}

// helmUpgradeUsage is the usage of upgrade: its flags are the check's, and
// kubectl's global flags are not read (Helm's go to helm).
func helmUpgradeUsage(c *cobra.Command) error {
	fmt.Fprintf(c.OutOrStderr(), "Usage:\n  %s\n\nExamples:\n%s\n\nFlags of the check:\n%s\n\n"+
		"Every other flag is helm upgrade's (helm upgrade --help), and goes to helm as given.\n",
		c.UseLine(), c.Example, strings.TrimRight(c.LocalFlags().FlagUsages(), "\n"))
	return nil
}

const (
	helmUpgradeLong = `Render "helm upgrade RELEASE CHART [flags]" as Helm would apply it, and check it against the cluster,
read only:

 1. helm upgrade RELEASE CHART --dry-run=server --output=json, with every flag given but the check's
    own: Helm itself loads the chart (a directory, an archive, repo/chart, oci://, --version, --repo)
    and decides the values (the release's when none are given, --values, --set, --reuse-values,
    --reset-values, --reset-then-reuse-values), renders the templates, runs --post-renderer. A dry run
    writes nothing to the cluster; the release's namespace is the release's.
 2. kubectl crd check-update on the manifests Helm would apply: each CRD of the chart's templates
    compared with the cluster's, every existing object of its kinds run through the new CRD (which
    it hurts, by name), and the chart's own objects checked as updates of the cluster's.

The CRDs of the chart's crds/ directory are not among them: helm upgrade never applies those.

The cluster is Helm's: its environment (HELM_KUBECONTEXT, HELM_NAMESPACE, KUBECONFIG, ...), which
Helm gives its plugins, and its flags --kube-context, --kubeconfig, -n (they go to helm too).
The helm run is $HELM_BIN (Helm sets it for its plugins), else helm on PATH.

Flags of the check (all others are helm upgrade's): --strict, --fail-on, --ignore-missing-crds,
--chunk-size as check-update's, and --check-output for its -o.
` + exitCodesHelp + `
Helm failing to render the upgrade (a release it does not find, a chart or values it refuses) is exit 2,
with what helm said.`

	helmUpgradeExample = `  # As a Helm plugin: what would upgrading my-release to the chart's 2.0.0 do to the cluster's objects?
  helm crd-check upgrade my-release oci://registry.example.com/charts/widgets --version 2.0.0

  # Values as helm upgrade takes them: the release's are reused unless new ones are given
  helm crd-check upgrade my-release ./widgets --reset-values -f values.yaml --set crds.enabled=true

  # Exit 1 on any breaking change of a CRD, whether or not it hurts an object; a SARIF report for CI
  helm crd-check upgrade my-release ./widgets --strict --check-output sarif > crd-check.sarif

  # Without the plugin: kubectl crd runs helm on PATH
  kubectl crd helm upgrade my-release ./widgets -n shop --kube-context prod`
)

// helpAsked says whether args ask for help before any "--".
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// Complete splits the arguments into the check's flags and helm's, and
// refuses the helm flags the check sets itself.
func (o *HelmUpgradeOptions) Complete(args []string) error {
	var checks []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			o.HelmArgs = append(o.HelmArgs, args[i:]...)
			break
		}
		name, _, hasValue := strings.Cut(a, "=")
		f := o.checks.Flags().Lookup(strings.TrimPrefix(name, "--"))
		if !strings.HasPrefix(name, "--") || f == nil {
			if name == "--dry-run" || name == "--output" || strings.HasPrefix(a, "-o") {
				return usageErrorf("%s: the check runs helm upgrade with --dry-run=server --output=json itself (its own output: --check-output)", a)
			}
			o.HelmArgs = append(o.HelmArgs, a)
			continue
		}
		checks = append(checks, a)
		if !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			checks = append(checks, args[i])
		}
	}
	if err := o.checks.Flags().Parse(checks); err != nil {
		return usageErrorf("%v", err)
	}
	if len(o.HelmArgs) == 0 || slices.Equal(o.HelmArgs, []string{"--"}) {
		return usageErrorf("no release: helm crd-check upgrade RELEASE CHART [helm upgrade's flags]")
	}
	// The check's flags refused before helm runs, as check-update refuses them.
	o.check.inputs.Filenames = []string{"-"}
	if err := o.check.gateFlags.Complete(o.checks); err != nil {
		return err
	}
	if err := o.check.Validate(); err != nil {
		return err
	}
	o.Helm = helmBinary(getenv)
	return helmSettings(o.kube, getenv, o.HelmArgs)
}

// Run renders the upgrade with helm and checks what it would apply.
func (o *HelmUpgradeOptions) Run(ctx context.Context) error {
	args := append([]string{"upgrade", "--dry-run=server", "--output=json"}, o.HelmArgs...)
	out, err := runHelm(ctx, o.Helm, args, o.ErrOut)
	if err != nil {
		return err
	}
	rel, err := decodeRelease(out)
	if err != nil {
		return err
	}
	if strings.TrimSpace(rel.Manifest) == "" {
		printable.Fprintf(o.ErrOut, "Warning: release %s: helm upgrade would apply no objects: nothing was checked\n", rel.Name)
		return nil
	}
	if rel.Namespace != "" {
		if err := o.kube.Set("namespace", rel.Namespace); err != nil {
			return err
		}
	}
	o.checks.SetContext(ctx)
	return checkManifests(ctx, o.checks, o.check, []byte(rel.Manifest), o.IOStreams)
}
