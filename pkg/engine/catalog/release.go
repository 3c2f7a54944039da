package catalog

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// releasing is the server's code as the checks of objects call it: once
// the validator of a CRD version is built, the CRD drops its schema as
// written (schema.CRD.ReleaseSchema), which the validator holds in a form
// of its own. The checks of objects come after every CRD is added and
// compared (Resolve), the last that read those schemas, so that memory
// holds each schema in the forms the checks use and no other.
type releasing struct{ Server }

func (s releasing) ValidateCreate(crd *schema.CRD, version string, obj map[string]interface{}, namespace string) (field.ErrorList, error) {
	errs, err := s.Server.ValidateCreate(crd, version, obj, namespace)
	if err == nil {
		crd.ReleaseSchema(version)
	}
	return errs, err
}

func (s releasing) UpdateValidator(crd *schema.CRD, version string) (update.UpdateValidator, error) {
	v, err := s.Server.UpdateValidator(crd, version)
	if err == nil {
		crd.ReleaseSchema(version)
	}
	return v, err
}

func (s releasing) StatusValidator(crd *schema.CRD, version string) (update.StatusValidator, error) {
	v, err := s.Server.StatusValidator(crd, version)
	if err == nil {
		crd.ReleaseSchema(version)
	}
	return v, err
}

// checks is the server's code as the checks of objects call it: nil
// without one.
func (c *Catalog) checks() Server {
	if c.opts.Server == nil {
		return nil
	}
	return releasing{c.opts.Server}
}
