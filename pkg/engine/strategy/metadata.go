package strategy

import (
	"context"

	"k8s.io/apimachinery/pkg/api/operation"
	genericvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// declarativeMetadata is the first minor whose server validates the
// metadata of a CustomResourceDefinition and of a custom resource with
// ValidateObjectMetaDeclaratively (k8s.io/apiextensions-apiserver v0.37:
// pkg/apis/apiextensions/validation and pkg/registry/customresource).
// Kubernetes 1.31 to 1.36 call the handwritten ValidateObjectMeta and
// ValidateObjectMetaUpdate there. Both are in the linked apimachinery, and
// they differ: the declarative validation replaces handwritten errors it
// covers by its own (three labels with two distinct invalid values give
// two errors at metadata.labels, where the handwritten give three), which
// the version parity test measured on twelve cert-manager CRDs.
const declarativeMetadata kubeversion.Minor = 37

// handwrittenMetadata returns errs, the errors of the linked server code on
// a write whose metadata is obj (old on an update, else nil), as a server
// older than declarativeMetadata returns them: the errors of the
// declarative metadata validation, all found in errs, are replaced by
// those of the handwritten one, in their place at the head of the list.
// A list the declarative validation did not make (it is empty, or errs
// lacks one of its errors, as when the type's metadata was refused before
// it ran) is left as it is. Name errors cancel out: both validations are
// given the same name check, and the server's own (a CRD's name must be
// plural.group) stay in errs.
func handwrittenMetadata(ctx context.Context, op operation.Type, errs field.ErrorList, obj, old *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	if kubeversion.Current().Minor >= declarativeMetadata || obj == nil || len(errs) == 0 {
		return errs
	}
	path := field.NewPath("metadata")
	var declarative, handwritten field.ErrorList
	beta := utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta)
	switch op {
	case operation.Create:
		declarative = genericvalidation.ValidateObjectMetaDeclaratively(ctx, op, obj, nil, namespaced, genericvalidation.NameIsDNSSubdomain, path, beta)
		handwritten = genericvalidation.ValidateObjectMeta(obj, namespaced, genericvalidation.NameIsDNSSubdomain, path)
	case operation.Update:
		if old == nil {
			return errs
		}
		declarative = genericvalidation.ValidateObjectMetaDeclaratively(ctx, op, obj, old, namespaced, nil, path, beta)
		handwritten = genericvalidation.ValidateObjectMetaUpdate(obj, old, path)
	default:
		return errs
	}
	if len(declarative) == 0 {
		return errs
	}
	others, ok := without(errs, declarative)
	if !ok {
		return errs
	}
	return append(handwritten, others...)
}

// without returns errs less one error equal to each of drop (type, field,
// value and detail), and whether every one of drop was found.
func without(errs, drop field.ErrorList) (field.ErrorList, bool) {
	used := make([]bool, len(errs))
	for _, d := range drop {
		found := false
		for i, e := range errs {
			if !used[i] && sameError(e, d) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return errs, false
		}
	}
	out := make(field.ErrorList, 0, len(errs)-len(drop))
	for i, e := range errs {
		if !used[i] {
			out = append(out, e)
		}
	}
	return out, true
}

// sameError: the same type and the same words (field, value, detail).
func sameError(a, b *field.Error) bool {
	return a.Type == b.Type && a.Error() == b.Error()
}

// asMinor returns errs, the errors of the linked server code on a write
// whose metadata is obj (old on an update, else nil), as the server of the
// minor that answers returns them: withoutRangeErrors, then
// handwrittenMetadata.
func asMinor(ctx context.Context, op operation.Type, errs field.ErrorList, obj, old *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	return handwrittenMetadata(ctx, op, withoutRangeErrors(errs), obj, old, namespaced)
}

// resourceAsMinor is asMinor on a write of a custom resource (old nil on a
// create): its metadata, converted from the object, is read only when the
// answering minor's metadata validation differs from the linked one's.
// When it cannot be read, the errors are left as the linked code gave them.
func resourceAsMinor(ctx context.Context, op operation.Type, errs field.ErrorList, obj, old *unstructured.Unstructured, namespaced bool) field.ErrorList {
	errs = withoutRangeErrors(errs)
	if len(errs) == 0 || kubeversion.Current().Minor >= declarativeMetadata {
		return errs
	}
	meta, ok := objectMeta(obj.Object)
	if !ok {
		return errs
	}
	var oldMeta *metav1.ObjectMeta
	if old != nil {
		if oldMeta, ok = objectMeta(old.Object); !ok {
			return errs
		}
	}
	return handwrittenMetadata(ctx, op, errs, meta, oldMeta, namespaced)
}

// objectMeta is the metadata of a custom resource as the server's
// validation reads it; ok is false when it cannot be read.
func objectMeta(obj map[string]interface{}) (meta *metav1.ObjectMeta, ok bool) {
	raw, isMap := obj["metadata"].(map[string]interface{})
	if !isMap {
		return nil, false
	}
	meta = &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, meta); err != nil {
		return nil, false
	}
	return meta, true
}
