package schema

import "sync"

// released notes the versions whose schema as written ReleaseSchema
// dropped.
type released struct {
	mu       sync.Mutex
	versions map[string]bool
}

// ReleaseSchema drops the schema as written of a version (its
// openAPIV3Schema in Object) once nothing reads it again: once the
// version's validator, which holds the schema in a form of its own
// (kube-openapi's), is built, and every reader of the schema as written
// (the server's validation of the CRD, Violations, Redefined, the
// comparison of an upgrade) has run. A run's catalog calls it as it
// checks objects, after the CRDs are added and compared. That copy is
// the largest part of a CRD a run keeps: 10,000 objects of 127 real CRDs
// kept some 30 MB of it in a live heap of 140 MB, and the collector lets
// the heap grow to twice what is live.
//
// A validator asked for after it would have no schema to take: it is an
// error then (SchemaReleased). The server's validation of a CRD read from
// a file runs here if it has not yet. It may run while other goroutines
// check objects of the CRD: the accessors of CRD read a version's name,
// flags and subresources, not its schema.
func (c *CRD) ReleaseSchema(version string) {
	c.validateOnce()
	c.released.mu.Lock()
	defer c.released.mu.Unlock()
	if c.released.versions[version] {
		return
	}
	if c.released.versions == nil {
		c.released.versions = map[string]bool{}
	}
	c.released.versions[version] = true
	for i := range c.Object.Spec.Versions {
		if v := &c.Object.Spec.Versions[i]; v.Name == version {
			v.Schema = nil
		}
	}
}

// SchemaReleased reports whether ReleaseSchema dropped the version's
// schema as written.
func (c *CRD) SchemaReleased(version string) bool {
	c.released.mu.Lock()
	defer c.released.mu.Unlock()
	return c.released.versions[version]
}
