// Package serverpath is the API server's handling of custom resources
// written with the upstream packages only (k8s.io/apiextensions-apiserver,
// k8s.io/apiserver), nothing of kubectl-crd's: the reference hack/bench
// times kubectl crd against, and what its input builder uses to keep only
// the samples the server accepts. It follows the CRD handler of
// apiextensions-apiserver: a CRD is decoded to the internal version and
// served as v1, each version's schema converted to a structural schema with
// its defaults pruned; a request is decoded by the schema coercer (ObjectMeta
// handling, pruning, nulls, metadata coercion), then validated by the custom
// resource strategy.
package serverpath

import (
	"context"
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	apiextensionsinstall.Install(scheme)
}

// CRD is a CustomResourceDefinition as the CRD handler serves it.
type CRD struct {
	Object *apiextensionsv1.CustomResourceDefinition
	// served holds each version's structural schema, defaults pruned.
	served map[string]*structuralschema.Structural
	// strategies are built on first use (they compile the CEL rules).
	strategies map[string]rest.RESTCreateStrategy
}

// DecodeCRD decodes a CRD (JSON or YAML, v1 or v1beta1) as the server
// stores and serves it, and converts its schemas as the handler does. An
// error means the server would refuse or not serve it.
func DecodeCRD(data []byte) (*CRD, error) {
	obj, gvk, err := codecs.UniversalDecoder(apiextensionsinternal.SchemeGroupVersion).Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	internal, ok := obj.(*apiextensionsinternal.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("decoded %v, not a CustomResourceDefinition", gvk)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := scheme.Convert(internal, crd, nil); err != nil {
		return nil, err
	}
	scheme.Default(crd)
	c := &CRD{Object: crd, served: map[string]*structuralschema.Structural{}, strategies: map[string]rest.RESTCreateStrategy{}}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		in := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, in, nil); err != nil {
			return nil, err
		}
		s, err := structuralschema.NewStructural(in.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("version %s: %v", v.Name, err)
		}
		if !crd.Spec.PreserveUnknownFields {
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("version %s: %v", v.Name, err)
			}
		}
		c.served[v.Name] = s
	}
	return c, nil
}

// GroupKind of the CRD's custom resources.
func (c *CRD) GroupKind() runtimeschema.GroupKind {
	return runtimeschema.GroupKind{Group: c.Object.Spec.Group, Kind: c.Object.Spec.Names.Kind}
}

// Served reports whether version is served.
func (c *CRD) Served(version string) bool {
	for _, v := range c.Object.Spec.Versions {
		if v.Name == version {
			return v.Served
		}
	}
	return false
}

// Schema is the structural schema of version the request path uses (nil: none).
func (c *CRD) Schema(version string) *structuralschema.Structural { return c.served[version] }

// Coerce is the request decoder's unstructuredSchemaCoercer.apply as a
// request with fieldValidation runs it (unknown field paths returned,
// invalid metadata not dropped), in place on obj; defaults applies the
// unstructuredDefaulter after it.
func (c *CRD) Coerce(obj map[string]interface{}, defaults bool) (unknown []string, err error) {
	u := &unstructured.Unstructured{Object: obj}
	kind, foundKind, err := unstructured.NestedString(obj, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(obj, "apiVersion")
	if err != nil {
		return nil, err
	}
	meta, foundMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	unknown = append(unknown, metaUnknown...)
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	gk := c.GroupKind()
	s := c.served[gv.Version]
	if gv.Group == gk.Group && kind == gk.Kind {
		if !c.Object.Spec.PreserveUnknownFields {
			unknown = append(unknown, structuralpruning.PruneWithOptions(obj, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s)
		}
		err, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, s, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if err != nil {
			return nil, err
		}
		unknown = append(unknown, paths...)
	}
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(obj, meta); err != nil {
			return nil, err
		}
	}
	if defaults && s != nil {
		structuraldefaulting.Default(obj, s)
	}
	return unknown, nil
}

// ValidateCreate is the server's validation of a create of obj (coerced),
// in the request namespace ns for a namespaced kind: rest.BeforeCreate's
// steps and the custom resource strategy (schema, CEL rules, metadata, list
// types), on a copy.
func (c *CRD) ValidateCreate(obj map[string]interface{}, ns string) (field.ErrorList, error) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	gv, err := runtimeschema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		return nil, err
	}
	st, err := c.strategy(gv.Version)
	if err != nil {
		return nil, err
	}
	if !st.NamespaceScoped() {
		ns = ""
	} else if u.GetNamespace() != "" {
		ns = u.GetNamespace()
	}
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	rest.WipeObjectMetaSystemFields(u)
	if st.NamespaceScoped() {
		u.SetNamespace(ns)
	} else {
		u.SetNamespace("")
	}
	rest.FillObjectMetaSystemFields(u)
	st.PrepareForCreate(ctx, u)
	return rest.ValidateCreate(ctx, u, st), nil
}

// strategy builds the custom resource strategy of a version as the CRD
// handler does, once.
func (c *CRD) strategy(version string) (rest.RESTCreateStrategy, error) {
	if st, ok := c.strategies[version]; ok {
		return st, nil
	}
	var v *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range c.Object.Spec.Versions {
		if c.Object.Spec.Versions[i].Name == version {
			v = &c.Object.Spec.Versions[i]
		}
	}
	if v == nil {
		return nil, fmt.Errorf("no version %q", version)
	}
	var props *apiextensionsinternal.JSONSchemaProps
	if v.Schema != nil {
		in := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, in, nil); err != nil {
			return nil, err
		}
		props = in.OpenAPIV3Schema
	}
	validator, _, err := apiextensionsvalidation.NewSchemaValidator(props)
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
	st := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), c.Object.Spec.Scope == apiextensionsv1.NamespaceScoped,
		c.GroupKind().WithVersion(version), validator, statusValidator, c.served[version], status, scale, v.SelectableFields)
	c.strategies[version] = st
	return st, nil
}
