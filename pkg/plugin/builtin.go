package plugin

import (
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// isBuiltinKind reports whether apiVersion belongs to a built-in API group
// (core, apps, batch, ...): such objects are not custom resources, and
// passing them through needs no warning.
func isBuiltinKind(apiVersion string) bool {
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	return scheme.Scheme.IsGroupRegistered(gv.Group)
}
