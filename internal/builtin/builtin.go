// Package builtin tells built-in Kubernetes API groups from custom ones.
package builtin

import (
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// IsBuiltin reports whether apiVersion belongs to a built-in API group
// (core, apps, batch, ...): such objects are not custom resources.
func IsBuiltin(apiVersion string) bool {
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	return scheme.Scheme.IsGroupRegistered(gv.Group)
}
