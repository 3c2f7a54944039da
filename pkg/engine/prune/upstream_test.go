package prune_test

// The reference the differential tests compare the engine with: the API
// server's own code paths, written out here with direct calls of the upstream
// packages and nothing of ours, so that a bug in the engine's wiring cannot
// hide in the reference as well.

import (
	"context"
	"fmt"
	"sort"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

var (
	upstreamScheme = runtime.NewScheme()
	upstreamCodecs = serializer.NewCodecFactory(upstreamScheme)
)

func init() {
	apiextensionsinstall.Install(upstreamScheme)
}

// upstreamDecodeCRD decodes a CRD (JSON or YAML, v1 or v1beta1) the way the
// API server does: into the internal version, applying the defaults of the
// version it is written in, then to v1 as the server serves it.
func upstreamDecodeCRD(data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	obj, gvk, err := upstreamCodecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	internal, ok := obj.(*apiextensionsinternal.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("decoded %v, not a CustomResourceDefinition", gvk)
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := upstreamScheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	upstreamScheme.Default(out)
	out.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return out, nil
}

// upstreamStructural converts one version's schema as the handler and the
// condition controller do: v1 → internal → structuralschema.NewStructural.
func upstreamStructural(v *apiextensionsv1.CustomResourceValidation) (*structuralschema.Structural, error) {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil, nil
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v, internal, nil); err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(internal.OpenAPIV3Schema)
}

// upstreamServedSchemas follows crdHandler.getOrCreateServingInfoFor in
// k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go: per
// version, NewStructural, and unless preserveUnknownFields a deep copy with
// the defaults pruned. An error means the server would not serve the CRD.
func upstreamServedSchemas(crd *apiextensionsv1.CustomResourceDefinition) (map[string]*structuralschema.Structural, error) {
	out := map[string]*structuralschema.Structural{}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil {
			continue
		}
		s, err := upstreamStructural(v.Schema)
		if !crd.Spec.PreserveUnknownFields && err != nil {
			return nil, fmt.Errorf("version %s: %v", v.Name, err)
		}
		if !crd.Spec.PreserveUnknownFields {
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("version %s: prune defaults: %v", v.Name, err)
			}
		}
		out[v.Name] = s
	}
	return out, nil
}

// upstreamCoerce is unstructuredSchemaCoercer.apply of customresource_handler.go
// as the request decoder runs it (returnUnknownFieldPaths=true because kubectl
// sends fieldValidation; dropInvalidMetadata=false; repairGeneration=false),
// followed, when defaults is set, by unstructuredDefaulter.Default. It works on
// a copy of obj and returns the unknown field paths sorted.
func upstreamCoerce(obj map[string]interface{}, s *structuralschema.Structural, gk runtimeschema.GroupKind, preserveUnknownFields, defaults bool) (map[string]interface{}, []string, error) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	var unknownFieldPaths []string

	kind, foundKind, err := unstructured.NestedString(u.UnstructuredContent(), "kind")
	if err != nil {
		return nil, nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.UnstructuredContent(), "apiVersion")
	if err != nil {
		return nil, nil, err
	}
	objectMeta, foundObjectMeta, metaUnknownFields, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		ReturnUnknownFieldPaths: true,
	})
	if err != nil {
		return nil, nil, err
	}
	unknownFieldPaths = append(unknownFieldPaths, metaUnknownFields...)

	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, nil, err
	}
	if gv.Group == gk.Group && kind == gk.Kind {
		if !preserveUnknownFields {
			unknownFieldPaths = append(unknownFieldPaths, structuralpruning.PruneWithOptions(u.Object, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
		}
		ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if ferr != nil {
			return nil, nil, ferr
		}
		unknownFieldPaths = append(unknownFieldPaths, paths...)
	}

	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, nil, err
		}
	}
	// The one documented difference from the decoder's output: the ObjectMeta
	// round trip writes metadata.creationTimestamp: null, which the create
	// strategy then replaces by the real time. The engine leaves a field the
	// user never wrote alone, so the reference does too.
	if _, had, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "creationTimestamp"); !had {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "creationTimestamp"); ok && v == nil {
			unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		}
	}

	if defaults && gv.Group == gk.Group && kind == gk.Kind {
		structuraldefaulting.Default(u.Object, s)
	}
	sort.Strings(unknownFieldPaths)
	return u.Object, unknownFieldPaths, nil
}

// upstreamStore is what the server stores of an object it accepts on create,
// read back in the version it was sent in: upstreamCoerce, then the custom
// resource strategy's PrepareForCreate (the upstream code: status dropped
// with the status subresource), then rest.BeforeCreate's namespace reset for
// cluster-scoped kinds, then the storage codec's round trip (coercion with
// the storage version's schema for conversion None, defaulting when read
// back, coercion with the request's schema). Server-assigned metadata is
// left out. Webhook conversion to another version is not modelled (ok false).
func upstreamStore(sent map[string]interface{}, crd *apiextensionsv1.CustomResourceDefinition, served map[string]*structuralschema.Structural, version string, defaults bool) (obj map[string]interface{}, unknown []string, ok bool, err error) {
	gk := runtimeschema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	puf := crd.Spec.PreserveUnknownFields
	s := served[version]
	obj, unknown, err = upstreamCoerce(sent, s, gk, puf, defaults)
	if err != nil {
		return nil, nil, false, err
	}
	u := &unstructured.Unstructured{Object: obj}

	var status *apiextensionsinternal.CustomResourceSubresourceStatus
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Subresources != nil && v.Subresources.Status != nil {
			status = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		}
		if v.Storage {
			storage = v.Name
		}
	}
	generation, hadGeneration, _ := unstructured.NestedFieldCopy(obj, "metadata", "generation")
	strategy := customresource.NewStrategy(nil, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, gk.WithVersion(version), nil, nil, nil, status, nil, nil)
	strategy.PrepareForCreate(context.Background(), u)
	// PrepareForCreate also sets metadata.generation, which the server assigns.
	if _, ok := u.Object["metadata"]; ok {
		if hadGeneration {
			_ = unstructured.SetNestedField(u.Object, generation, "metadata", "generation")
		} else {
			unstructured.RemoveNestedField(u.Object, "metadata", "generation")
			if md, _ := u.Object["metadata"].(map[string]interface{}); len(md) == 0 && !hadMetadata(sent) {
				delete(u.Object, "metadata")
			}
		}
	}
	if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
		if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "namespace"); ok {
			u.SetNamespace(metav1.NamespaceNone)
		}
	}

	if storage == version || storage == "" {
		if defaults {
			structuraldefaulting.Default(u.Object, s)
		}
		return u.Object, unknown, true, nil
	}
	if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter {
		return nil, nil, false, nil
	}
	apiVersion := u.GetAPIVersion()
	u.SetAPIVersion(gk.Group + "/" + storage)
	stored, _, err := upstreamCoerce(u.Object, served[storage], gk, puf, false)
	if err != nil {
		return nil, nil, false, err
	}
	if defaults {
		structuraldefaulting.Default(stored, served[storage])
	}
	stored["apiVersion"] = apiVersion
	back, _, err := upstreamCoerce(stored, s, gk, puf, false)
	return back, unknown, true, err
}

func hadMetadata(obj map[string]interface{}) bool {
	_, ok := obj["metadata"]
	return ok
}
