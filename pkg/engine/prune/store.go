package prune

import (
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
	ss, err := crd.VersionSchema(storage)
	if err != nil {
		return nil, err
	}
	apiVersion := u["apiVersion"]
	u["apiVersion"] = gk.Group + "/" + storage
	stored, err := Coerce(u, ss, gk, puf, false)
	if err != nil {
		return nil, err
	}
	if defaults {
		structuraldefaulting.Default(stored.Object, ss)
	}
	stored.Object["apiVersion"] = apiVersion
	back, err := Coerce(stored.Object, s, gk, puf, false)
	if err != nil {
		return nil, err
	}
	c.Object = back.Object
	c.StoragePruned = append(append(stored.UnknownFields, stored.UnknownMetadataFields...), back.UnknownFields...)
	return c, nil
}
