package plugin

import (
	"context"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// catalogCluster is the cluster as the engine's catalog reads it.
type catalogCluster struct{ c *cluster }

var _ catalog.Cluster = catalogCluster{}

// CRDs reads and converts only the CRDs of the kinds asked for: a cluster
// has hundreds.
func (cc catalogCluster) CRDs(ctx context.Context, kinds map[runtimeschema.GroupKind]bool) ([]*schema.CRD, error) {
	live, err := cc.c.CRDsOf(ctx, kinds)
	if err != nil {
		return nil, err
	}
	out := make([]*schema.CRD, 0, len(live))
	for _, l := range live {
		out = append(out, l.CRD())
	}
	return out, nil
}

func (cc catalogCluster) Serves(ctx context.Context, gvk runtimeschema.GroupVersionKind) (bool, error) {
	return cc.c.Serves(ctx, gvk)
}

func (cc catalogCluster) GetObject(ctx context.Context, gvr runtimeschema.GroupVersionResource, namespace, name string) (map[string]interface{}, error) {
	return cc.c.GetObject(ctx, gvr, namespace, name)
}

func (cc catalogCluster) Where() string { return cc.c.where() }

// newCatalog is the engine's catalog for a command: the cluster of the
// kubeconfig flags unless offline, and kubectl apply's namespace rule with
// -n or the context's namespace.
func newCatalog(c *cluster, offline, oldFromCluster bool) *catalog.Catalog {
	ns, explicit := c.Namespace()
	opts := catalog.Options{
		Server:         strategy.Validators{},
		Builtins:       builtin.Kinds{},
		Namespaces:     catalog.Namespaces{Default: ns, Explicit: explicit, Offline: offline},
		OldFromCluster: oldFromCluster && !offline,
	}
	if !offline {
		opts.Cluster = catalogCluster{c}
	}
	return catalog.New(opts)
}
