package plugin

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// builtinRefused are the kinds of built-in groups (apps/v1 Deploymnet,
// apps/v1beta7 Deployment) that kubectl would refuse with "no matches for
// kind", each with why: offline, by the built-in types of the Kubernetes
// release we embed; live, by the cluster's discovery, as kubectl maps them.
func builtinRefused(c *cluster, offline bool, kinds kindSet) (map[kindKey]string, error) {
	refused := map[kindKey]string{}
	for _, k := range kinds.sorted() {
		// CRDs are schema sources in any version; Lists are expanded, not mapped.
		if schema.IsCRD(k.APIVersion, k.Kind) || strings.HasSuffix(k.Kind, "List") || !builtin.IsBuiltin(k.APIVersion) {
			continue
		}
		if offline {
			if err := builtin.CheckKind(k.APIVersion, k.Kind); err != nil {
				refused[k] = err.Error()
			}
			continue
		}
		gv, err := runtimeschema.ParseGroupVersion(k.APIVersion)
		if err != nil {
			continue // IsBuiltin parsed it
		}
		gvk := gv.WithKind(k.Kind)
		served, err := c.Serves(gvk)
		if err != nil {
			return nil, err
		}
		if !served {
			noMatch := &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gv.Version}}
			refused[k] = fmt.Sprintf("%v: not served by %s", noMatch, c.where())
		}
	}
	return refused, nil
}
