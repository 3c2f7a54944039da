package plugin

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// checkBuiltinKinds refuses the objects of built-in groups (apps/v1
// Deploymnet, apps/v1beta7 Deployment) that kubectl would refuse with "no
// matches for kind": offline, by the built-in types of the Kubernetes release
// we embed; live, by the cluster's discovery, as kubectl maps them. Every
// refusal is printed; the last is returned, an input error.
func checkBuiltinKinds(c *cluster, offline bool, errOut io.Writer, docs []*document.Document) error {
	var errs []error
	served := map[runtimeschema.GroupVersionKind]bool{}
	for _, d := range docs {
		ref := prune.Ref(d.Object)
		// CRDs are schema sources in any version; Lists are expanded, not mapped.
		if ref.APIVersion == "" || ref.Kind == "" || schema.IsCRD(ref.APIVersion, ref.Kind) || strings.HasSuffix(ref.Kind, "List") || !builtin.IsBuiltin(ref.APIVersion) {
			continue
		}
		if offline {
			if err := builtin.CheckKind(ref.APIVersion, ref.Kind); err != nil {
				errs = append(errs, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("%s: %v", ref, err)})
			}
			continue
		}
		gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue // IsBuiltin parsed it
		}
		gvk := gv.WithKind(ref.Kind)
		ok, seen := served[gvk]
		if !seen {
			if ok, err = c.Serves(gvk); err != nil {
				return err
			}
			served[gvk] = ok
		}
		if !ok {
			noMatch := &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gv.Version}}
			errs = append(errs, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("%s: %v: not served by %s", ref, noMatch, c.where())})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	for _, err := range errs[:len(errs)-1] {
		fmt.Fprintf(errOut, "error: %v\n", err)
	}
	return inputError(errs[len(errs)-1])
}
