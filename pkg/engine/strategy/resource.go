package strategy

import (
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// Validator runs the API server's own update validation of custom
// resources of one CRD version: the custom resource strategy of
// k8s.io/apiextensions-apiserver, built as the CRD handler builds it
// (schema validation with ratcheting, x-kubernetes-validations with
// transition rules, metadata, list types, scale). Build it once per CRD
// version: it compiles the CEL rules.
type Validator struct {
	strategy strategy
	// status is the server's status strategy (writes of /status), nil
	// when the version has no status subresource.
	status  strategy
	crd     *schema.CRD
	version string
}

// strategy is what the server's custom resource strategy is to the
// registry: the create and the update strategy at once.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// Validators is the API server's validation of CustomResourceDefinitions
// and of custom resources: what the engine knows as schema.CRDValidator,
// prune.CreateValidator and update.UpdateValidator. It builds the
// validator of each CRD version once, when first asked for it (it compiles
// the CEL rules), and keeps it with the CRD (schema.CRD.Memo): by the CRD
// itself, not its name, as two definitions of one name (an upgrade's old
// and new) validate apart. It holds nothing itself, and goroutines share it.
type Validators struct{}

// For returns the validator of a served version of crd.
func (Validators) For(crd *schema.CRD, version string) (*Validator, error) {
	v, err := crd.Memo("strategy.Validator "+version, func() (any, error) { return newValidator(crd, version) })
	if err != nil {
		return nil, err
	}
	return v.(*Validator), nil
}

// UpdateValidator is For as the interface the update check takes.
func (vs Validators) UpdateValidator(crd *schema.CRD, version string) (update.UpdateValidator, error) {
	v, err := vs.For(crd, version)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// StatusValidator is For as the interface the update check of /status
// takes; a version without the status subresource has none (the server
// answers 404): an error.
func (vs Validators) StatusValidator(crd *schema.CRD, version string) (update.StatusValidator, error) {
	v, err := vs.For(crd, version)
	if err != nil {
		return nil, err
	}
	if v.status == nil {
		return nil, fmt.Errorf("version %q of CustomResourceDefinition %s has no status subresource", version, crd.Name())
	}
	return v, nil
}

// ValidateCreate returns what the server refuses of creating obj, a
// custom resource of crd in version, as the request decoding left it
// (pruned, defaulted; obj is changed by the server's steps: pass a copy);
// namespace is the request's for an object of a namespaced kind without
// one. It builds the version's validator once.
func (vs Validators) ValidateCreate(crd *schema.CRD, version string, obj map[string]interface{}, namespace string) (field.ErrorList, error) {
	v, err := vs.For(crd, version)
	if err != nil {
		return nil, err
	}
	return v.ValidateCreate(obj, namespace), nil
}

// newValidator builds the validator of a served version of crd.
func newValidator(crd *schema.CRD, version string) (*Validator, error) {
	v, ok := crd.Version(version)
	if !ok {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no version %q", crd.Name(), version)
	}
	if crd.SchemaReleased(version) {
		return nil, fmt.Errorf("the schema of version %q of CustomResourceDefinition %s was released before its validator was built", version, crd.Name())
	}
	structural, err := crd.ServedSchema(version)
	if err != nil {
		return nil, err
	}
	var internal *apiextensionsinternal.CustomResourceValidation
	if v.Schema != nil {
		internal = &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
			return nil, err
		}
	}
	var props *apiextensionsinternal.JSONSchemaProps
	if internal != nil {
		props = internal.OpenAPIV3Schema
	}
	schemaValidator, _, err := apiextensionsvalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, err
	}
	var (
		status          *apiextensionsinternal.CustomResourceSubresourceStatus
		statusValidator apiextensionsvalidation.SchemaValidator
		scale           *apiextensionsinternal.CustomResourceSubresourceScale
	)
	if v.Subresources != nil && v.Subresources.Status != nil {
		status = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		if props != nil {
			if s, ok := props.Properties["status"]; ok {
				if statusValidator, _, err = apiextensionsvalidation.NewSchemaValidator(&s); err != nil {
					return nil, err
				}
			}
		}
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		scale = &apiextensionsinternal.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(v.Subresources.Scale, scale, nil); err != nil {
			return nil, err
		}
	}
	gvk := crd.GroupKind().WithVersion(version)
	strategy := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), !crd.ClusterScoped(), gvk,
		schemaValidator, statusValidator, structural, status, scale, v.SelectableFields)
	out := &Validator{strategy: strategy, crd: crd, version: version}
	if status != nil {
		// The server's status REST storage: the same strategy, as
		// customresource.NewStorage builds it.
		out.status = customresource.NewStatusStrategy(strategy)
	}
	return out, nil
}

// ValidateUpdate returns what the server refuses of updating old (as
// stored) to new (as stored after the request decoding). It follows
// rest.BeforeUpdate of k8s.io/apiserver: the generation, UID and creation
// timestamp come from the old object, the strategy's PrepareForUpdate runs
// on a copy of new (status kept from old under the status subresource, the
// generation bumped), then rest.ValidateUpdate with the strategy.
func (v *Validator) ValidateUpdate(old, new map[string]interface{}) field.ErrorList {
	_, errs := v.validateUpdate(v.strategy, old, new)
	return errs
}

// ValidateStatusUpdate returns what the server stores of an update of the
// /status subresource of old (as stored) by new (as the request decoding
// left it), and what it refuses of that: ValidateUpdate's steps with the
// server's status strategy, whose PrepareForUpdate keeps everything of old
// but status, and whose ValidateUpdate validates status with its schema
// and the CEL rules (ratcheting) on that object. The version must have the
// status subresource (Validators.StatusValidator).
func (v *Validator) ValidateStatusUpdate(old, new map[string]interface{}) (map[string]interface{}, field.ErrorList) {
	return v.validateUpdate(v.status, old, new)
}

// validateUpdate is an update with strategy s (the object's or its
// status'): the object s prepared, and what s refuses of it.
func (v *Validator) validateUpdate(s strategy, old, new map[string]interface{}) (map[string]interface{}, field.ErrorList) {
	uOld := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(old)}
	uNew := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(new)}
	// The stored object has an identity that files do not carry.
	if uOld.GetResourceVersion() == "" {
		uOld.SetResourceVersion("1")
	}
	if uNew.GetResourceVersion() == "" {
		uNew.SetResourceVersion(uOld.GetResourceVersion())
	}
	if uOld.GetUID() == "" {
		uOld.SetUID("00000000-0000-0000-0000-000000000000")
	}
	if uOld.GetNamespace() != "" && uNew.GetNamespace() == "" {
		uNew.SetNamespace(uOld.GetNamespace())
	}
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), uNew.GetNamespace())

	uNew.SetGeneration(uOld.GetGeneration())
	s.PrepareForUpdate(ctx, uNew, uOld)
	if uNew.GetUID() == "" {
		uNew.SetUID(uOld.GetUID())
	}
	if t := uOld.GetCreationTimestamp(); !t.IsZero() {
		uNew.SetCreationTimestamp(t)
	}
	return uNew.Object, resourceAsMinor(ctx, operation.Update, rest.ValidateUpdate(ctx, uNew, uOld, s), uNew, uOld, s.NamespaceScoped())
}

// ValidateCreate returns what the server refuses of creating obj (as the
// request decoding left it: pruned, defaulted; the server's steps change
// obj, so it must be a copy of its own). namespace is the request's
// when obj has none (kubectl sends an object to its own namespace); it is
// ignored for a cluster-scoped kind. The steps are the server's, in its
// order: the create handler wipes the system fields of metadata and
// reconciles the namespace with the request's; the registry's Store.create
// fills them (creation timestamp, UID) and generates the name from
// generateName; then rest.BeforeCreate runs the strategy's PrepareForCreate
// (status dropped under the status subresource, generation 1) and
// rest.ValidateCreate (schema, x-kubernetes-validations, embedded and root
// metadata, list types, scale).
func (v *Validator) ValidateCreate(obj map[string]interface{}, namespace string) field.ErrorList {
	u := &unstructured.Unstructured{Object: obj}
	requestNamespace := ""
	if v.strategy.NamespaceScoped() {
		requestNamespace = u.GetNamespace()
		if requestNamespace == "" {
			requestNamespace = namespace
		}
	}
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), requestNamespace)

	rest.WipeObjectMetaSystemFields(u)
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForScope(requestNamespace, v.strategy.NamespaceScoped()), u); err != nil {
		// Unreachable: the request goes to the object's own namespace.
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), u.GetNamespace(), err.Error())}
	}
	rest.FillObjectMetaSystemFields(u)
	if u.GetGenerateName() != "" && u.GetName() == "" {
		u.SetName(v.strategy.GenerateName(u.GetGenerateName()))
	}
	v.strategy.PrepareForCreate(ctx, u)
	return resourceAsMinor(ctx, operation.Create, rest.ValidateCreate(ctx, u, v.strategy), u, nil, v.strategy.NamespaceScoped())
}
