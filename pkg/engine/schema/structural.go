package schema

import (
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Violations returns what the server's NonStructuralSchema condition reports
// for the CRD: spec.preserveUnknownFields set to true, and every structural
// schema violation of every version, each with the field path the server
// uses (spec.versions[i].schema.openAPIV3Schema...). It follows the
// apiextensions-apiserver condition controller step by step and calls the
// upstream validation for the schema itself.
func (c *CRD) Violations() field.ErrorList {
	var errs field.ErrorList
	if c.Object.Spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(field.NewPath("spec", "preserveUnknownFields"), true, "must be false"))
	}
	for i, v := range c.Object.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		pth := field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema")
		if err := c.convertErr[v.Name]; err != nil {
			// The controller stops at the first version it cannot convert:
			// its condition then carries only this message (reason
			// StructuralError).
			return field.ErrorList{field.InternalError(pth, fmt.Errorf("failed to check validation schema for version %s: %w", v.Name, err))}
		}
		errs = append(errs, structuralschema.ValidateStructural(pth, c.raw[v.Name])...)
	}
	return errs
}

// Skeleton returns the structural schema of the version with every value
// validation dropped ("After dropping the value validation" in the structural
// schema KEP): types, properties, items, additionalProperties, nullable,
// defaults and the x-kubernetes-* extensions, which is all pruning and
// defaulting look at. Nil when the version has no schema.
func (c *CRD) Skeleton(version string) (*structuralschema.Structural, error) {
	if _, ok := c.Version(version); !ok {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no version %q (it has %v)", c.Name(), version, c.Versions())
	}
	if err := c.convertErr[version]; err != nil {
		return nil, err
	}
	s := c.raw[version]
	if s == nil {
		return nil, nil
	}
	return s.StripValueValidations(), nil
}
