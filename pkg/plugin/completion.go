package plugin

// Shell completion. "kubectl crd <TAB>" is completed by kubectl (1.26 or
// later): it runs kubectl_complete-crd from PATH (completion/ in the
// repository, in every release archive) with the words after "crd", which
// runs "kubectl-crd __complete ...": cobra's protocol, answered by the
// functions registered here. A value from the cluster costs one request,
// bounded by a short timeout; any failure gives no candidates, because a shell
// must never print an error or hang on TAB.

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// completionTimeout bounds the requests of one completion when
// --request-timeout is not given: a shell waits for them.
const completionTimeout = 5 * time.Second

// shells are the shells "kubectl crd completion" writes scripts for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

// NewCmdCompletion returns "kubectl crd completion", in place of cobra's
// default one, whose help names the executable instead of "kubectl crd" and
// does not say that kubectl itself completes plugins.
func NewCmdCompletion(streams genericiooptions.IOStreams) *cobra.Command {
	var noDescriptions bool
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script of kubectl-crd",
		Long: `Print the script that completes commands, flags, CRD names, contexts and namespaces in a shell.

"kubectl crd <TAB>" needs no script of ours: kubectl 1.26 or later completes plugins when its own
completion is enabled (kubectl completion --help) and the executable kubectl_complete-crd, shipped
next to kubectl-crd, is on PATH.

The script printed here completes the kubectl-crd executable when you run it by that name.`,
		Example: `  # bash (needs the bash-completion package)
  source <(kubectl crd completion bash)

  # zsh
  source <(kubectl crd completion zsh)

  # fish
  kubectl crd completion fish | source

  # PowerShell
  kubectl crd completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: shells,
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, !noDescriptions)
			case "zsh":
				if noDescriptions {
					return root.GenZshCompletionNoDesc(streams.Out)
				}
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, !noDescriptions)
			default:
				if noDescriptions {
					return root.GenPowerShellCompletion(streams.Out)
				}
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
		},
	}
	cmd.Flags().BoolVar(&noDescriptions, "no-descriptions", false, "complete without descriptions")
	return cmd
}

// registerKubeconfigCompletions completes the values of the kubeconfig flags
// on root: contexts, clusters and users from the kubeconfig, namespaces from
// the cluster.
func registerKubeconfigCompletions(root *cobra.Command, flags *genericclioptions.ConfigFlags) {
	fromKubeconfig := func(names func(clientcmdapi.Config) []string) cobra.CompletionFunc {
		return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			raw, err := flags.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return withPrefix(names(raw), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	mustRegister(root, "context", fromKubeconfig(func(raw clientcmdapi.Config) []string { return keys(raw.Contexts) }))
	mustRegister(root, "cluster", fromKubeconfig(func(raw clientcmdapi.Config) []string { return keys(raw.Clusters) }))
	mustRegister(root, "user", fromKubeconfig(func(raw clientcmdapi.Config) []string { return keys(raw.AuthInfos) }))
	mustRegister(root, "namespace", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		names := clusterNames(cmd, flags, runtimeschema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

// completeOutput completes -o with the formats a command supports.
func completeOutput(cmd *cobra.Command, formats ...string) {
	mustRegister(cmd, "output", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(formats, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

// completeFiles completes the named flags with YAML and JSON files and
// directories, which is what every input flag reads.
func completeFiles(cmd *cobra.Command, names ...string) {
	for _, name := range names {
		if err := cmd.MarkFlagFilename(name, "yaml", "yml", "json"); err != nil {
			panic(err) // a flag name of our own is wrong: a programming error
		}
	}
}

// completeCRDNames completes explain-structural's NAME arguments with the
// full names of the cluster's CRDs not named yet.
func completeCRDNames(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if all, _ := cmd.Flags().GetBool("all"); all {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		named := map[string]bool{}
		for _, a := range args {
			named[a] = true
		}
		var names []string
		for _, n := range clusterNames(cmd, flags, apiextensionsGVR) {
			if !named[n] {
				names = append(names, n)
			}
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCRDVersions completes explain-structural's --version with the
// versions of the CRDs named on the command line.
func completeCRDVersions(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := completionContext(cfg)
		defer cancel()
		c := newCluster(flags)
		seen := map[string]bool{}
		var versions []string
		for _, name := range args {
			crd, err := c.Find(ctx, name)
			if err != nil {
				continue
			}
			for _, v := range crd.Object.Spec.Versions {
				if !seen[v.Name] {
					seen[v.Name] = true
					versions = append(versions, v.Name)
				}
			}
		}
		return withPrefix(versions, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

var apiextensionsGVR = runtimeschema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// clusterNames lists the names of a cluster-wide resource with one metadata
// LIST, or nothing: the cluster is unreachable, refuses, is too slow, or the
// command runs --offline.
func clusterNames(cmd *cobra.Command, flags *genericclioptions.ConfigFlags, gvr runtimeschema.GroupVersionResource) []string {
	if offline, err := cmd.Flags().GetBool("offline"); err == nil && offline {
		return nil
	}
	// connect says when the kubeconfig has no cluster, where client-go would try localhost:8080.
	if err := newCluster(flags).connect(); err != nil {
		return nil
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{} // stderr is the shell's
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	ctx, cancel := completionContext(cfg)
	defer cancel()
	list, err := client.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(list.Items))
	for _, item := range list.Items {
		names = append(names, item.Name)
	}
	sort.Strings(names)
	return names
}

// completionContext bounds a completion's requests by --request-timeout when
// given, else by completionTimeout.
func completionContext(cfg *rest.Config) (context.Context, context.CancelFunc) {
	timeout := completionTimeout
	if cfg.Timeout > 0 {
		timeout = cfg.Timeout
	}
	return context.WithTimeout(context.Background(), timeout)
}

func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mustRegister(cmd *cobra.Command, flag string, f cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(flag, f); err != nil {
		panic(err) // a flag name of our own is wrong: a programming error
	}
}
