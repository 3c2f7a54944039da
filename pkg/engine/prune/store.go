package prune

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Store computes what the server stores of an object of crd sent in
// version, and reads back in that version: the request decoding (Coerce),
// then what the registry does on create and update, then the round trip
// through the storage version.
//
//   - With the status subresource, writes to the main resource never set
//     status (customResourceStrategy.PrepareForCreate and PrepareForUpdate).
//   - A cluster-scoped object loses metadata.namespace (rest.BeforeCreate
//     and BeforeUpdate).
//   - The storage codec (crdConversionRESTOptionsGetter in the CRD handler)
//     converts to the storage version and coerces the object with that
//     version's schema, pruning what it lacks (when the versions differ
//     and conversion is None); decoding it back defaults it with the
//     storage version's schema, and the conversion back coerces it with
//     the request's schema again.
//     With a conversion webhook the storage version's content is the
//     webhook's to decide: StorageUnknown is set.
//
// An error means the server refuses to decode the object.
func Store(obj map[string]interface{}, crd *schema.CRD, version string, defaults bool) (*Coerced, error) {
	s, err := crd.ServedSchema(version)
	if err != nil {
		return nil, err
	}
	gk, puf := crd.GroupKind(), crd.PreserveUnknownFields()
	c, err := Coerce(obj, s, gk, puf, defaults)
	if err != nil {
		return nil, err
	}
	u := c.Object
	_, hasStatus := u["status"]
	dropStatus := hasStatus && crd.StatusSubresource(version)
	_, hasNamespace, _ := unstructured.NestedFieldNoCopy(u, "metadata", "namespace")
	dropNamespace := hasNamespace && crd.ClusterScoped()
	storage := crd.StorageVersion()
	if storage != "" && storage != version {
		c.StorageVersion = storage
		c.StorageUnknown = !crd.ConversionNone()
	}
	roundTrip := c.StorageVersion != "" && !c.StorageUnknown
	if !dropStatus && !dropNamespace && !roundTrip {
		// Storing changes nothing: defaulting the object again when it is
		// read back is a no-op on what defaulting already produced.
		return c, nil
	}

	c.Request = runtime.DeepCopyJSON(u)
	if dropStatus {
		delete(u, "status")
		c.StatusDropped = true
	}
	if dropNamespace {
		unstructured.RemoveNestedField(u, "metadata", "namespace")
		c.NamespaceDropped = true
	}
	if !roundTrip {
		// Reading it back from storage defaults it again: a status default
		// comes back after the status was dropped.
		if defaults && c.StorageVersion == "" {
			structuraldefaulting.Default(u, s)
		}
		return c, nil
	}
	if err := c.roundTrip(crd, s, defaults); err != nil {
		return nil, err
	}
	return c, nil
}

// roundTrip is the storage codec on c.Object, an object of the request's
// version (schema s): converted to c.StorageVersion (conversion None: only
// apiVersion changes) and coerced with that version's schema, which prunes
// what it lacks; read back, defaulted with that schema, converted back and
// coerced with s again. c.StoragePruned gets what it drops.
func (c *Coerced) roundTrip(crd *schema.CRD, s *structuralschema.Structural, defaults bool) error {
	gk, puf := crd.GroupKind(), crd.PreserveUnknownFields()
	ss, err := crd.VersionSchema(c.StorageVersion)
	if err != nil {
		return err
	}
	u := c.Object
	apiVersion := u["apiVersion"]
	u["apiVersion"] = gk.Group + "/" + c.StorageVersion
	stored, err := Coerce(u, ss, gk, puf, false)
	u["apiVersion"] = apiVersion
	if err != nil {
		return err
	}
	if defaults {
		structuraldefaulting.Default(stored.Object, ss)
	}
	stored.Object["apiVersion"] = apiVersion
	back, err := Coerce(stored.Object, s, gk, puf, false)
	if err != nil {
		return err
	}
	c.Object = back.Object
	c.StoragePruned = append(append(stored.UnknownFields, stored.UnknownMetadataFields...), back.UnknownFields...)
	return nil
}

// Rewrite is the next write of obj, an object of crd the server holds and
// reads in version, written back unchanged (a label, a status update, any
// write): the storage codec converts it to the storage version and prunes
// what that version's schema lacks, for good. With conversion None, and
// when the storage version is another: Changes(obj, c, s) then names what
// the write drops (Reason StorageVersion) and what reading it back
// defaults; otherwise the object is stored as it reads, nil. Status is
// kept, as the registry keeps it on a write of the main resource.
func Rewrite(obj map[string]interface{}, crd *schema.CRD, version string, defaults bool) (*Coerced, error) {
	storage := crd.StorageVersion()
	if storage == "" || storage == version || !crd.ConversionNone() {
		return nil, nil
	}
	s, err := crd.ServedSchema(version)
	if err != nil {
		return nil, err
	}
	c := &Coerced{Object: runtime.DeepCopyJSON(obj), Request: obj, StorageVersion: storage}
	if err := c.roundTrip(crd, s, defaults); err != nil {
		return nil, err
	}
	return c, nil
}
