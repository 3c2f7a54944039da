// Package prune computes what the API server stores for a custom resource it
// receives: unknown fields pruned, non-nullable nulls dropped, metadata
// coerced and, optionally, defaults applied. It calls the server's own
// packages (pruning, objectmeta, defaulting) in the order the server's
// request decoder calls them, and adds what the server does not say: every
// change with its path, its reason and its source line.
package prune

import (
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
)

// Coerced is the outcome of the server's decoding step for one object.
type Coerced struct {
	// Object is what the server keeps (in a copy; the input is not modified).
	Object map[string]interface{}
	// UnknownFields are the paths the pruning step dropped, as the server
	// reports them ("unknown field" warnings with fieldValidation=Warn).
	UnknownFields []string
	// UnknownMetadataFields are the unknown fields dropped from metadata (at
	// the root and in embedded resources), as the server reports them.
	UnknownMetadataFields []string

	// Set by Store, for what happens after the request decoding:
	// Request is the object as the request decoding left it (Object is then
	// the stored one).
	Request map[string]interface{}
	// StatusDropped: status was ignored (status subresource).
	StatusDropped bool
	// NamespaceDropped: metadata.namespace was dropped (cluster-scoped).
	NamespaceDropped bool
	// StorageVersion is the storage version when it differs from the sent one.
	StorageVersion string
	// StoragePruned are the paths the round trip through the storage version dropped.
	StoragePruned []string
	// StorageUnknown: the storage version differs and a conversion webhook
	// converts; what it keeps is not computed.
	StorageUnknown bool
}

// Coerce applies to a copy of obj what the server's request decoder does to
// a custom resource of a CRD with the given schema: it follows
// unstructuredSchemaCoercer.apply in k8s.io/apiextensions-apiserver (with
// unknown-field paths tracked and malformed metadata refused, as on the
// request path), then the decoder's defaulting when defaults is true.
//
// gk is the CRD's group and kind; an object of another group or kind only
// gets its root metadata coerced, as in the server. preserveUnknownFields is
// the CRD's spec.preserveUnknownFields.
//
// An error means the server refuses to decode the object.
func Coerce(obj map[string]interface{}, s *structuralschema.Structural, gk runtimeschema.GroupKind, preserveUnknownFields, defaults bool) (*Coerced, error) {
	u := runtime.DeepCopyJSON(obj)
	_, hadCreationTimestamp, _ := unstructured.NestedFieldNoCopy(u, "metadata", "creationTimestamp")

	kind, foundKind, err := unstructured.NestedString(u, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u, "apiVersion")
	if err != nil {
		return nil, err
	}
	out := &Coerced{Object: u}
	objectMeta, foundObjectMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u, schemaobjectmeta.ObjectMetaOptions{
		ReturnUnknownFieldPaths: true,
	})
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	out.UnknownMetadataFields = append(out.UnknownMetadataFields, metaUnknown...)

	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	if gv.Group == gk.Group && kind == gk.Kind {
		if !preserveUnknownFields {
			out.UnknownFields = structuralpruning.PruneWithOptions(u, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, s)
		}
		ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u, s, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if ferr != nil {
			return nil, ferr
		}
		out.UnknownMetadataFields = append(out.UnknownMetadataFields, paths...)
	}

	if foundKind {
		unstructured.SetNestedField(u, kind, "kind")
	}
	if foundAPIVersion {
		unstructured.SetNestedField(u, apiVersion, "apiVersion")
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u, objectMeta); err != nil {
			return nil, err
		}
		// The ObjectMeta round trip writes creationTimestamp: null; the
		// server sets the real timestamp on create, so a field the user
		// never wrote is not a change to report.
		if v, ok, _ := unstructured.NestedFieldNoCopy(u, "metadata", "creationTimestamp"); ok && v == nil && !hadCreationTimestamp {
			unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		}
	}

	if defaults && gv.Group == gk.Group && kind == gk.Kind {
		// The request decoder's defaulter (unstructuredDefaulter) runs after
		// the schema coercion, on the version the object was sent in.
		structuraldefaulting.Default(u, s)
	}
	return out, nil
}
