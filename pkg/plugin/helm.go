package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCmdHelm returns "kubectl crd helm": the commands of the Helm plugin
// crd-check (helm-plugin/). Both run check-update's check, the same code
// path, on what Helm renders: its CRDs compared with the cluster's and
// every existing object run through them, its objects as updates of the
// cluster's. kubectl crd never links Helm: it runs the helm binary.
func NewCmdHelm(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "helm",
		Short:             "Check what a helm upgrade's CRDs do to the cluster's objects: the Helm plugin crd-check and a post-renderer",
		Long:              helmLong,
		Example:           helmExample,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.AddCommand(newCmdHelmUpgrade(streams), newCmdHelmPostRender(configFlags, streams))
	return cmd
}

const (
	helmLong = `The Helm plugin crd-check: "helm crd-check upgrade" and the post-renderer run these commands.

Helm applies the CRDs of a chart's templates like any other object, unchecked, and never
upgrades those of its crds/ directory. These commands check, before helm upgrade, what the new
CRDs do to the objects the cluster holds, as check-update does for files: the changes, each
with its severity, and every existing object they hurt, by name. Read-only: helm renders the
upgrade as a dry run, and kubectl crd only reads the cluster.

  upgrade      render "helm upgrade RELEASE CHART [flags]" as Helm would (the release's values,
               --reuse-values, --reset-values and the rest are Helm's own), then check it
  post-render  a post-renderer: the manifests on stdin checked, written unchanged to stdout
               when clean; exit 1, findings on stderr, otherwise
` + exitCodesHelp

	helmExample = `  # The Helm plugin (installed from the release archive, docs/upgrades.md)
  helm crd-check upgrade my-release oci://registry.example.com/charts/widgets --version 2.0.0

  # The same without the plugin: kubectl crd runs helm ($HELM_BIN, else helm on PATH)
  kubectl crd helm upgrade my-release ./widgets -n shop

  # As a post-renderer of helm template or helm upgrade (Helm 3: an executable)
  helm template my-release ./widgets --post-renderer kubectl-crd --post-renderer-args helm --post-renderer-args post-render`
)

// helmKube maps Helm's cluster settings, its environment (what Helm gives
// a plugin) and its global flags, to kubectl's flags, so that the check
// reads the cluster Helm reads.
var helmKube = []struct{ env, flag, kubectl string }{
	{"KUBECONFIG", "--kubeconfig", "kubeconfig"},
	{"HELM_KUBECONTEXT", "--kube-context", "context"},
	{"HELM_KUBEAPISERVER", "--kube-apiserver", "server"},
	{"HELM_KUBETOKEN", "--kube-token", "token"},
	{"HELM_KUBEASUSER", "--kube-as-user", "as"},
	{"HELM_KUBEASGROUPS", "--kube-as-group", "as-group"},
	{"HELM_KUBECAFILE", "--kube-ca-file", "certificate-authority"},
	{"HELM_KUBEINSECURE_SKIP_TLS_VERIFY", "--kube-insecure-skip-tls-verify", "insecure-skip-tls-verify"},
	{"HELM_KUBETLS_SERVER_NAME", "--kube-tls-server-name", "tls-server-name"},
	{"HELM_NAMESPACE", "--namespace", "namespace"},
}

// helmSettings sets kubectl's flags in flags from Helm's environment, then
// from Helm's flags among args (which stay helm's), unless set already.
func helmSettings(flags *pflag.FlagSet, getenv func(string) string, args []string) error {
	given := map[string]string{}
	for _, k := range helmKube {
		if v := getenv(k.env); v != "" && k.env != "KUBECONFIG" { // client-go reads KUBECONFIG itself
			given[k.kubectl] = v
		}
	}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if args[i] == "--" {
			break
		}
		if name == "-n" {
			name = "--namespace"
		}
		for _, k := range helmKube {
			if name != k.flag {
				continue
			}
			if !hasValue && k.kubectl != "insecure-skip-tls-verify" && i+1 < len(args) {
				i++
				value = args[i]
			} else if !hasValue {
				value = "true"
			}
			given[k.kubectl] = value
		}
	}
	for name, value := range given {
		if flags.Changed(name) {
			continue
		}
		values := []string{value}
		if name == "as-group" {
			values = strings.Split(value, ",")
		}
		for _, v := range values {
			if err := flags.Set(name, v); err != nil {
				return usageErrorf("Helm's setting of kubectl's --%s=%s: %v", name, v, err)
			}
		}
	}
	return nil
}

// helmBinary is the helm a command runs: $HELM_BIN, which Helm sets for
// its plugins, else helm on PATH.
func helmBinary(getenv func(string) string) string {
	if b := getenv("HELM_BIN"); b != "" {
		return b
	}
	return "helm"
}

// runHelm runs helm with args and returns its stdout; its stderr goes to
// errOut. A helm that fails (a chart it cannot load, a release it cannot
// find, values it refuses) is an input error: what it says is printed.
func runHelm(ctx context.Context, helm string, args []string, errOut io.Writer) ([]byte, error) {
	cmd := exec.CommandContext(ctx, helm, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, inputError(fmt.Errorf("%s %s: %v", helm, args[0], err))
		}
		return nil, usageErrorf("running helm (%s): %v", helm, err)
	}
	return out.Bytes(), nil
}

// checkManifests runs check-update on manifests, as -f - with the check
// options o holds, the objects' namespace that of the cluster's flags.
func checkManifests(ctx context.Context, cmd *cobra.Command, o *CheckUpdateOptions, manifests []byte, streams genericiooptions.IOStreams) error {
	o.IOStreams = streams
	o.In = bytes.NewReader(manifests)
	o.inputs.Filenames = []string{"-"}
	if err := o.Complete(cmd, nil); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}

// getenv is the environment the Helm commands read; a variable for tests.
var getenv = os.Getenv

// releaseOf is what the check reads of the release helm upgrade --dry-run
// prints: its namespace, and the manifests it would apply.
type releaseOf struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Manifest  string `json:"manifest"`
}

func decodeRelease(data []byte) (*releaseOf, error) {
	var r releaseOf
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, inputError(fmt.Errorf("reading the release helm upgrade --dry-run printed: %v", err))
	}
	return &r, nil
}
