package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// kubeVersionFlag is --kube-version: the Kubernetes minor whose API
// server answers. Else, where the command reads a cluster, the cluster's
// own (/version); else the minor of the server code linked.
type kubeVersionFlag struct {
	value string
	// unknown is why the cluster's version could not be read, said once
	// the run is over (warnUnknown) unless the cluster failed it.
	unknown string
}

// AddFlags registers --kube-version; live says when the command reads a
// cluster, whose version is then the default ("" when it never does).
func (k *kubeVersionFlag) AddFlags(cmd *cobra.Command, live string) {
	def := "the default: " + kubeversion.Embedded.String()
	if live != "" {
		def = "the default: the cluster's own, read from its /version, " + live + "; else " + kubeversion.Embedded.String()
	}
	cmd.Flags().StringVar(&k.value, "kube-version", "", "answer as the API server of this Kubernetes minor ("+kubeversion.Range()+"; "+def+
		"): which CRD fields it knows, which CEL libraries compile, its cost estimator, formats and feature gates")
	mustRegister(cmd, "kube-version", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, m := range kubeversion.Supported() {
			out = append(out, m.String())
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// Validate refuses a minor that is not answered (a usage error, exit 2).
func (k *kubeVersionFlag) Validate() error {
	if k.value == "" {
		return nil
	}
	if _, err := kubeversion.Parse(k.value); err != nil {
		return usageErrorf("--kube-version: %v", err)
	}
	return nil
}

// Use makes the engine answer as the minor of the flag, else (c not nil:
// the run reads that cluster) the cluster's own, else the linked code's.
// A cluster outside the range is answered as the nearest minor, with a
// warning; one whose version cannot be read, as the linked code's, with a
// warning at the end of the run (warnUnknown): a run that needs no more of
// the cluster goes on, one that does fails on it, and says why. An
// emulated minor is said on errOut, whatever the output (reports say it
// too).
func (k *kubeVersionFlag) Use(ctx context.Context, c *cluster, errOut io.Writer) error {
	m := kubeversion.Embedded
	switch {
	case k.value != "":
		m, _ = kubeversion.Parse(k.value) // validated
	case c != nil && c.configured():
		info, err := c.version(ctx)
		if err != nil {
			k.unknown = "the cluster's version is unknown (" + err.Error() + "): answered as Kubernetes " + m.String() +
				"; say which with --kube-version"
			break
		}
		minor, warning, err := kubeversion.Nearest(info.GitVersion, info.Major, info.Minor)
		if err != nil {
			return usageErrorf("%v", err)
		}
		if warning != "" {
			warnOn(errOut)(warning)
		}
		m = minor
	}
	answer, err := kubeversion.Use(m)
	if err != nil {
		return &ExitError{Code: ExitInternal, Err: err}
	}
	noteAnswer(errOut, answer)
	return nil
}

// noteAnswer says on stderr which server answers when it is emulated.
func noteAnswer(errOut io.Writer, a kubeversion.Answer) {
	if a.Emulated() {
		printable.Fprintf(errOut, "Note: the answers of %s\n", a)
	}
}

// warnUnknown says, once the run is over, that the cluster's version
// could not be read and which minor answered instead: when it answered
// (exit 0 or 1), not when the run failed, whose error says why.
func (k *kubeVersionFlag) warnUnknown(errOut io.Writer, runErr error) {
	var exit *ExitError
	if k.unknown == "" || runErr != nil && !(errors.As(runErr, &exit) && exit.Code == ExitFindings) {
		return
	}
	warnOn(errOut)(k.unknown)
}

// liveCluster is c when the run reads it, else nil.
func liveCluster(c *cluster, live bool) *cluster {
	if !live {
		return nil
	}
	return c
}

// configured reports whether the kubeconfig names a cluster: without one,
// the run reads none, and the linked code answers.
func (c *cluster) configured() bool {
	if c.flags.APIServer != nil && *c.flags.APIServer != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return true
	}
	raw, err := c.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return !clientcmd.IsEmptyConfig(err)
	}
	return len(raw.Clusters) > 0
}

// versionTimeout bounds the request for /version, below the run's own
// timeout: a run that never needs the cluster waits no longer for it.
const versionTimeout = 10 * time.Second

// version is the cluster's /version.
func (c *cluster) version(ctx context.Context) (*apimachineryversion.Info, error) {
	if err := c.connect(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	body, err := c.discovery.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, c.apiError("reading /version", err)
	}
	var info apimachineryversion.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, clusterError("reading /version on %s: %v", c.where(), err)
	}
	return &info, nil
}
