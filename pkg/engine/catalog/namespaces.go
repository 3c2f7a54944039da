package catalog

import (
	"fmt"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Namespaces is kubectl apply's namespace rule, for every check: where an
// object without a namespace goes, and which namespace a report names.
type Namespaces struct {
	// Default is the namespace of objects without one: -n, else the
	// context's ("" when nothing names one).
	Default string
	// Explicit: -n gave Default; an object of another namespace is refused.
	Explicit bool
	// Offline: reports name only a namespace the user gave, the object's
	// own or -n, not the context's.
	Offline bool
}

// shown is the namespace a report names for an object of crd whose
// metadata.namespace is ns: none for a cluster-scoped kind (the server
// drops it).
func (n Namespaces) shown(crd *schema.CRD, ns string) string {
	switch {
	case crd != nil && crd.ClusterScoped():
		return ""
	case ns != "":
		return ns
	case n.Offline && !n.Explicit:
		return ""
	}
	return n.Default
}

// request is the namespace of the request for an object of crd whose
// namespace is ns: kubectl sends one without a namespace to Default, else
// to "default".
func (n Namespaces) request(crd *schema.CRD, ns string) string {
	switch {
	case crd != nil && crd.ClusterScoped():
		return ""
	case ns != "":
		return ns
	case n.Default != "":
		return n.Default
	}
	return "default"
}

// Check refuses an object whose namespace differs from an explicit -n, with
// kubectl apply's message: an *document.InputError.
func (n Namespaces) Check(d *document.Document) error {
	if !n.Explicit {
		return nil
	}
	ref := document.Ref(d.Object)
	if ref.Namespace != "" && ref.Namespace != n.Default {
		return &document.InputError{Source: d.Source, Msg: fmt.Sprintf(
			"the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
			ref.Namespace, n.Default, ref.Namespace)}
	}
	return nil
}
