package prune

import (
	"fmt"

	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// Identify returns what a document says it is: its reference and group
// version. An error is an *document.InputError: apiVersion or kind is unset
// or not a string, or apiVersion is not a group version.
func Identify(doc *document.Document) (ObjectRef, runtimeschema.GroupVersion, error) {
	ref := refOf(doc.Object)
	if ref.APIVersion == "" || ref.Kind == "" {
		return ref, runtimeschema.GroupVersion{}, &document.InputError{Source: doc.Source, Msg: "not a Kubernetes object: apiVersion and kind must be set"}
	}
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ref, gv, &document.InputError{Source: doc.Source, Msg: fmt.Sprintf("invalid apiVersion %q: %v", ref.APIVersion, err)}
	}
	return ref, gv, nil
}

// CheckMetadata returns an *document.InputError when the server could not
// decode the document's metadata (metadata: "x", name: 5): it refuses such
// an object whatever its kind and schema, with the error of Coerce.
func CheckMetadata(doc *document.Document) error {
	if _, _, err := schemaobjectmeta.GetObjectMeta(doc.Object, false); err != nil {
		return &document.InputError{Source: doc.Source, Msg: "the server would refuse this object: metadata: " + err.Error()}
	}
	return nil
}
