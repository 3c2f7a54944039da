// Package builtin tells built-in Kubernetes API groups and kinds from custom
// ones, by the types of client-go's scheme (k8s.io/api), of
// apiextensions-apiserver and of kube-aggregator: the types a kube-apiserver
// of Kubernetes KubernetesVersion serves.
package builtin

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
)

// KubernetesVersion is the release of the built-in types (k8s.io/api
// v0.37.x is Kubernetes 1.37); a test keeps it in step with go.mod.
const KubernetesVersion = "1.37"

// scheme holds every built-in type: those of the three servers that make a
// kube-apiserver (cmd/kube-apiserver's CreateServerChain). Its own groups
// (pkg/controlplane's storage providers) are all in client-go's scheme; the
// CRD API (apiextensions-apiserver) and APIService (kube-aggregator) are
// served by the other two, and client-go's scheme leaves them out.
//
// The groups of kube-apiserver's code that client-go's scheme leaves out
// have no storage provider, so no resource, and stay out: admission.k8s.io
// and imagepolicy.k8s.io are the bodies of webhook calls,
// apidiscovery.k8s.io the discovery documents, abac.authorization.kubernetes.io
// a policy file's lines. kubectl maps none of them.
var scheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // the upstream registrations conflict: a build problem, not an input one
		}
	}
	return s
})

// IsBuiltin reports whether apiVersion belongs to a built-in API group
// (core, apps, batch, ..., apiextensions.k8s.io, apiregistration.k8s.io):
// such objects are not custom resources.
func IsBuiltin(apiVersion string) bool {
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	return scheme().IsGroupRegistered(gv.Group)
}

// CheckKind returns an error, in kubectl's words ("no matches for kind"),
// when apiVersion is of a built-in group and kind in it is not a type a
// Kubernetes KubernetesVersion API server can serve: unknown, or removed by
// that release. Custom groups and List kinds (expanded by kubectl, not
// mapped) are not its business, nor a missing apiVersion or kind: nil.
func CheckKind(apiVersion, kind string) error {
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil || apiVersion == "" || kind == "" || strings.HasSuffix(kind, "List") || !scheme().IsGroupRegistered(gv.Group) {
		return nil
	}
	gvk := gv.WithKind(kind)
	noMatch := &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gv.Version}}
	if scheme().Recognizes(gvk) && !isMeta(gvk) {
		removed, warning := removedBy(gvk)
		if !removed {
			return nil
		}
		// The API server's own deprecation warning: when it went, and what replaces it.
		return fmt.Errorf("%v: %s (checked offline, against the built-in types of Kubernetes %s)", noMatch, warning, KubernetesVersion)
	}
	msg := fmt.Sprintf("%v: not a built-in type of Kubernetes %s (checked offline)", noMatch, KubernetesVersion)
	if where := servedAs(kind); len(where) > 0 {
		msg += "; Kubernetes " + KubernetesVersion + " has " + strings.Join(where, ", ")
	}
	return errors.New(msg)
}

// removedBy reports whether gvk was removed by KubernetesVersion, by the
// release its type declares (APILifecycleRemoved), as the API server decides
// which kinds to serve on a release (not a prerelease): removed in that
// release or before means not served. The warning is the server's.
func removedBy(gvk runtimeschema.GroupVersionKind) (bool, string) {
	obj, err := scheme().New(gvk)
	if err != nil {
		return false, ""
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	release := deprecation.RemovedRelease(obj)
	if release == "" {
		return false, ""
	}
	removed, err := version.ParseGeneric(release)
	if err != nil {
		return false, ""
	}
	return !removed.GreaterThan(version.MustParseGeneric(KubernetesVersion)), deprecation.WarningMessage(obj)
}

// servedAs lists where a kind of that name (any case) is served, as
// "Kind in group/version", for a hint after a wrong apiVersion or case.
func servedAs(kind string) []string {
	var out []string
	for gvk := range scheme().AllKnownTypes() {
		if !strings.EqualFold(gvk.Kind, kind) || gvk.Version == runtime.APIVersionInternal || isMeta(gvk) {
			continue
		}
		if removed, _ := removedBy(gvk); removed {
			continue
		}
		out = append(out, gvk.Kind+" in "+gvk.GroupVersion().String())
	}
	sort.Strings(out)
	return out
}

// isMeta reports whether gvk is one of the types of meta/v1 that every group
// version registers for requests (ListOptions, WatchEvent, Status, ...):
// they are no resource, kubectl maps none of them.
func isMeta(gvk runtimeschema.GroupVersionKind) bool {
	t, ok := scheme().AllKnownTypes()[gvk]
	return ok && t.PkgPath() == metaPkgPath
}

var metaPkgPath = reflect.TypeFor[metav1.Status]().PkgPath()

// Kinds is IsBuiltin and CheckKind as a value, for the engine, which takes
// them through an interface: the kinds come from client-go's scheme, which
// the engine does not import.
type Kinds struct{}

// IsBuiltin is the package's IsBuiltin.
func (Kinds) IsBuiltin(apiVersion string) bool { return IsBuiltin(apiVersion) }

// CheckKind is the package's CheckKind.
func (Kinds) CheckKind(apiVersion, kind string) error { return CheckKind(apiVersion, kind) }
