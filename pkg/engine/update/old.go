package update

import (
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// ValidateOld returns an *document.InputError when doc cannot be an object
// the server stored: it does not say what it is, the server could not decode
// its metadata, or it has no name. Such an object would match no new one,
// and every new object would pass as a create in silence.
func ValidateOld(doc *document.Document) error {
	if _, _, err := document.Identify(doc); err != nil {
		return err
	}
	if err := prune.CheckMetadata(doc); err != nil {
		return err
	}
	if document.Ref(doc.Object).Name == "" {
		return &document.InputError{Source: doc.Source, Msg: "metadata.name must be set: old objects are matched to the new ones by name"}
	}
	return nil
}
