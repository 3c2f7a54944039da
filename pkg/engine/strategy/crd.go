package strategy

import (
	"context"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdregistry "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// scheme holds the apiextensions types in all versions, as the server's.
// It and crdStrategy are made on first use: a run that validates no CRD
// (--help) does not pay for them.
var scheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
})

// crdStrategy is the CRD registry's REST strategy, the code the server runs
// on every write of a CustomResourceDefinition.
var crdStrategy = sync.OnceValue(func() rest.RESTCreateUpdateStrategy { return crdregistry.NewStrategy(scheme()) })

// requestContext is the context of a request on customresourcedefinitions,
// as the API server's handler chain builds it: cluster-scoped, with its
// request info.
func requestContext(verb, name string) context.Context {
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), "")
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true,
		Verb:              verb,
		APIPrefix:         "apis",
		APIGroup:          apiextensionsv1.GroupName,
		APIVersion:        apiextensionsv1.SchemeGroupVersion.Version,
		Resource:          "customresourcedefinitions",
		Name:              name,
	})
}

// toInternal converts a v1 CRD to the internal version the registry
// validates, as the server decodes a v1 request body (identical per-version
// schemas, subresources and columns become top-level, so the server's
// paths name spec.validation where all versions share one schema).
func toInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsinternal.CustomResourceDefinition, error) {
	out := &apiextensionsinternal.CustomResourceDefinition{}
	if err := scheme().Convert(crd.DeepCopy(), out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidateCRDCreate returns the errors with which the API server refuses to
// create crd (an apiextensions.k8s.io/v1 CRD, decoded and defaulted): the
// steps of the generic registry's create (system metadata, generated name,
// namespace of a cluster-scoped kind), then the CRD strategy's
// PrepareForCreate and the create validation (ValidateCustomResourceDefinition
// and the common metadata checks), all upstream code. When it accepts the
// CRD, warnings are those the server returns with it (the strategy's
// WarningsOnCreate: an unrecognized format, a list-type set of objects), in
// its words, as kubectl prints them after "Warning: "; a refused create
// returns none, as the server's does.
func (v Validators) ValidateCRDCreate(crd *apiextensionsv1.CustomResourceDefinition) (errs field.ErrorList, warnings []string) {
	obj, err := toInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}, nil
	}
	return v.ValidateDecodedCRDCreate(obj)
}

// ValidateDecodedCRDCreate is ValidateCRDCreate on the internal version the
// server's decoder makes of a v1 CRD, as the registry gets it; it changes
// obj as the create's steps do.
func (v Validators) ValidateDecodedCRDCreate(obj *apiextensionsinternal.CustomResourceDefinition) (errs field.ErrorList, warnings []string) {
	ctx := requestContext("create", "")
	if err := v.PrepareCRDCreate(obj); err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata", "namespace"), err)}, nil
	}
	if errs := asMinor(ctx, operation.Create, rest.ValidateCreate(ctx, obj, crdStrategy()), &obj.ObjectMeta, nil, false); len(errs) > 0 {
		return errs, nil
	}
	// As rest.BeforeCreate: the warnings once the create is valid.
	return nil, crdStrategy().WarningsOnCreate(ctx, obj)
}

// PrepareCRDCreate changes obj, the internal version the server's decoder
// makes of a v1 CRD, as a create does before validating it: the generic
// registry's system metadata, generated name and namespace (cleared: the
// kind is cluster-scoped), then the CRD strategy's PrepareForCreate (status
// cleared, generation 1, fields of disabled features dropped). What the
// server then stores is obj (schema.StoredCRD).
func (Validators) PrepareCRDCreate(obj *apiextensionsinternal.CustomResourceDefinition) error {
	rest.FillObjectMetaSystemFields(&obj.ObjectMeta)
	if obj.GenerateName != "" && obj.Name == "" {
		obj.Name = crdStrategy().GenerateName(obj.GenerateName)
	}
	// The kind is cluster-scoped: this clears metadata.namespace, it never fails.
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForScope("", crdStrategy().NamespaceScoped()), &obj.ObjectMeta); err != nil {
		return err
	}
	crdStrategy().PrepareForCreate(requestContext("create", ""), obj)
	return nil
}

// ValidateCRDLegacy returns the errors with which the API server refuses a
// CRD written in apiextensions.k8s.io/v1beta1 (decoded and converted to v1).
//
// No server of this version creates such a CRD: v1beta1 is no longer
// served, and its create rules (no schema, non-structural schemas,
// preserveUnknownFields: true were allowed) are gone from the code. What a
// v1beta1 file stands for is a CRD stored in those days in a cluster since
// upgraded, which the server still holds and checks only when it is written
// again, ratcheting every rule the stored object already breaks. So it is
// validated as that: as stored (PrepareForCreate gives the status a stored
// CRD has), then as an unchanged update of itself (PrepareForUpdate and the
// update validation). The non-structural schema and preserveUnknownFields
// then remain what explain-structural reports as violations, as the server's
// NonStructuralSchema condition does, while what no server ever stored (no
// storage version or two, no versions, bad spec.names, a CEL rule that does
// not compile) is refused. The create-only rule that metadata.name is
// plural.group is not part of an update and so is not checked. The
// warnings are the update's (WarningsOnUpdate), which ratchets what the
// stored CRD already has: a rewrite of it unchanged has none.
func (Validators) ValidateCRDLegacy(crd *apiextensionsv1.CustomResourceDefinition) (errs field.ErrorList, warnings []string) {
	stored, err := toInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}, nil
	}
	rest.FillObjectMetaSystemFields(&stored.ObjectMeta)
	// As stored: without namespace (the kind is cluster-scoped), with a
	// resourceVersion (an update must name the one it replaces).
	stored.Namespace, stored.ResourceVersion = "", "1"
	ctx := requestContext("update", stored.Name)
	crdStrategy().PrepareForCreate(ctx, stored)
	obj := stored.DeepCopy()
	crdStrategy().PrepareForUpdate(ctx, obj, stored)
	if errs := asMinor(ctx, operation.Update, rest.ValidateUpdate(ctx, obj, stored, crdStrategy()), &obj.ObjectMeta, &stored.ObjectMeta, false); len(errs) > 0 {
		return errs, nil
	}
	// As rest.BeforeUpdate: the warnings once the update is valid.
	return nil, crdStrategy().WarningsOnUpdate(ctx, obj, stored)
}

// ValidateCRDUpdate returns the errors with which the API server refuses to
// replace old, a CRD as the cluster stores it, with new (both v1, decoded
// and defaulted): the CRD strategy's PrepareForUpdate (the status is kept
// from old, the new storage version joins status.storedVersions) and its
// update validation, which ratchets the rules old already breaks and holds
// the group, plural, and (once established) scope and kind immutable.
//
// An old CRD without conditions comes from a file, not from a cluster: it
// is taken as the server holds a CRD it has served, created (its
// status.storedVersions, which decoding defaults to its storage version)
// and established under its own names. That is the least a cluster with
// objects of it holds; a cluster's CRD says more (older stored versions).
func (Validators) ValidateCRDUpdate(old, new *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	stored, err := toInternal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	obj, err := toInternal(new)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	ctx := requestContext("update", stored.Name)
	if len(stored.Status.Conditions) == 0 {
		storedVersions := stored.Status.StoredVersions
		rest.FillObjectMetaSystemFields(&stored.ObjectMeta)
		crdStrategy().PrepareForCreate(ctx, stored)
		if len(storedVersions) > 0 {
			stored.Status.StoredVersions = storedVersions
		}
		stored.Status.AcceptedNames = stored.Spec.Names
		stored.Status.Conditions = []apiextensionsinternal.CustomResourceDefinitionCondition{
			{Type: apiextensionsinternal.NamesAccepted, Status: apiextensionsinternal.ConditionTrue},
			{Type: apiextensionsinternal.Established, Status: apiextensionsinternal.ConditionTrue},
		}
	}
	stored.Namespace = ""
	if stored.ResourceVersion == "" {
		stored.ResourceVersion = "1"
	}
	// What rest.BeforeUpdate takes from the stored object: a file does not
	// carry the identity the server keeps.
	obj.Namespace = ""
	if obj.ResourceVersion == "" {
		obj.ResourceVersion = stored.ResourceVersion
	}
	if obj.UID == "" {
		obj.UID = stored.UID
	}
	obj.CreationTimestamp = stored.CreationTimestamp
	obj.Generation = stored.Generation
	crdStrategy().PrepareForUpdate(ctx, obj, stored)
	return asMinor(ctx, operation.Update, rest.ValidateUpdate(ctx, obj, stored, crdStrategy()), &obj.ObjectMeta, &stored.ObjectMeta, false)
}
