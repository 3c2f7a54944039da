package prune

import (
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// CheckMetadata returns an *document.InputError when the server could not
// decode the document's metadata (metadata: "x", name: 5): it refuses such
// an object whatever its kind and schema, with the error of Coerce.
func CheckMetadata(doc *document.Document) error {
	if _, _, err := schemaobjectmeta.GetObjectMeta(doc.Object, false); err != nil {
		return &document.InputError{Source: doc.Source, Msg: "the server would refuse this object: metadata: " + err.Error()}
	}
	return nil
}
