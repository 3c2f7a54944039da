package schema

import structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

// Schemas is what a CRD derived from its schemas, for the tests: per
// version, the structural schema as written and as served, and the errors
// of each.
type Schemas struct {
	Raw, Served           map[string]*structuralschema.Structural
	ConvertErr, ServedErr map[string]error
}

// SchemasOf returns what c derived from its schemas.
func SchemasOf(c *CRD) Schemas {
	return Schemas{Raw: c.raw, Served: c.served, ConvertErr: c.convertErr, ServedErr: c.servedErr}
}
