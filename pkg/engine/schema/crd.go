// Package schema loads CustomResourceDefinitions the way kube-apiserver does and
// derives what the server derives from them: the structural schema of every
// version, the NonStructuralSchema violations, and the skeleton pruning uses.
package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// apiextensions is the scheme of the apiextensions types in all versions,
// and its codecs, made on first use: a run that reads no CRD (--help) does
// not pay for them.
var apiextensions = sync.OnceValues(func() (*runtime.Scheme, serializer.CodecFactory) {
	scheme := runtime.NewScheme()
	apiextensionsinstall.Install(scheme)
	return scheme, serializer.NewCodecFactory(scheme)
})

// crdGroupKind is the GroupKind of CustomResourceDefinition objects.
var crdGroupKind = runtimeschema.GroupKind{Group: apiextensionsv1.GroupName, Kind: "CustomResourceDefinition"}

// IsCRD reports whether apiVersion and kind name a CustomResourceDefinition
// of a version this package can read.
func IsCRD(apiVersion, kind string) bool {
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == crdGroupKind.Group && kind == crdGroupKind.Kind
}

// DecodeCRD decodes a CustomResourceDefinition in apiextensions.k8s.io/v1 or
// v1beta1 (JSON or YAML) into v1, applying the server's defaulting and
// conversion: a v1beta1 top-level spec.validation becomes per-version schemas
// and spec.preserveUnknownFields defaults to true, exactly as when the server
// stores a v1beta1 CRD and serves it as v1.
func DecodeCRD(data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd, _, err := decodeCRD(data)
	return crd, err
}

// decodeCRD is DecodeCRD, also returning the internal version the decoder
// made on its way to v1. For a v1 CRD that is the object the server's CRD
// registry validates (the v1 one converted back gives the same), and its
// schemas are those the custom resource handler converts: both take it
// from here instead of converting the CRD again.
// decodeInternal decodes a CRD to the internal version, defaulted as its
// own version, as the server's decoder does.
func decodeInternal(data []byte) (*apiextensionsinternal.CustomResourceDefinition, error) {
	_, codecs := apiextensions()
	decoder := codecs.UniversalDecoder(apiextensionsinternal.SchemeGroupVersion)
	obj, gvk, err := decoder.Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	internal, ok := obj.(*apiextensionsinternal.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("expected a CustomResourceDefinition, got %v", gvk)
	}
	return internal, nil
}

func decodeCRD(data []byte) (*apiextensionsv1.CustomResourceDefinition, *apiextensionsinternal.CustomResourceDefinition, error) {
	// Decode to the internal version (defaulted as its own version), then
	// convert and default as v1: the path a stored v1beta1 CRD takes when
	// it is served as v1.
	internal, err := decodeInternal(data)
	if err != nil {
		return nil, nil, err
	}
	scheme, _ := apiextensions()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := scheme.Convert(internal, crd, nil); err != nil {
		return nil, nil, err
	}
	scheme.Default(crd)
	crd.APIVersion, crd.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	return crd, internal, nil
}

// CRD is a CustomResourceDefinition with its schemas converted once, the way
// the API server's custom resource handler converts them when it starts
// serving a CRD.
type CRD struct {
	// Object is the CRD as served (v1). A version's schema in it is nil
	// once the version's validator is built (ReleaseSchema).
	Object *apiextensionsv1.CustomResourceDefinition

	// served holds, per version name, the structural schema the request path
	// prunes and defaults with (defaults pruned as the handler does); nil
	// where the version has no schema.
	served map[string]*structuralschema.Structural
	// raw holds the structural representation of each version's schema as
	// written, for the NonStructuralSchema check and the skeleton.
	raw map[string]*structuralschema.Structural
	// convertErr holds versions whose schema cannot be represented as a
	// structural schema at all (unsupported fields).
	convertErr map[string]error
	// servedErr holds versions the custom resource handler could not serve.
	servedErr map[string]error

	// validate is the server's validation that applies to the CRD as read
	// (nil for a CRD of a cluster); invalid and warnings are its result,
	// computed once.
	validate    func() (field.ErrorList, []string)
	invalidOnce sync.Once
	invalid     field.ErrorList
	warnings    []string
	// legacy is a CRD read in apiextensions.k8s.io/v1beta1.
	legacy bool

	memoMu sync.Mutex
	memo   map[string]*memoEntry

	released released
}

type memoEntry struct {
	once sync.Once
	v    any
	err  error
}

// Memo returns what build returns for key, built once for the CRD however
// many goroutines ask at once: what is derived from the CRD alone and costly
// to build, such as a version's validator with its CEL programs. It lives
// as long as the CRD.
func (c *CRD) Memo(key string, build func() (any, error)) (any, error) {
	c.memoMu.Lock()
	e, ok := c.memo[key]
	if !ok {
		if c.memo == nil {
			c.memo = map[string]*memoEntry{}
		}
		e = &memoEntry{}
		c.memo[key] = e
	}
	c.memoMu.Unlock()
	e.once.Do(func() { e.v, e.err = build() })
	return e.v, e.err
}

// NewCRD converts the schemas of every version of crd once.
func NewCRD(crd *apiextensionsv1.CustomResourceDefinition) *CRD {
	return newCRD(crd, func(v *apiextensionsv1.CustomResourceDefinitionVersion) (*structuralschema.Structural, error) {
		return structuralFromV1(v.Schema)
	})
}

// newDecodedCRD is NewCRD for a CRD decodeCRD read: the schemas come from
// the internal version the decoder made, not converted again. Where the
// versions' schemas are all the same, the internal version holds one
// (spec.validation), and the server gives every version that one when it
// serves the CRD as v1: the versions then share one structural schema.
func newDecodedCRD(crd *apiextensionsv1.CustomResourceDefinition, internal *apiextensionsinternal.CustomResourceDefinition) *CRD {
	if internal.Spec.Validation != nil {
		s, err := structuralFromInternal(internal.Spec.Validation)
		return newCRD(crd, func(*apiextensionsv1.CustomResourceDefinitionVersion) (*structuralschema.Structural, error) {
			return s, err
		})
	}
	byName := make(map[string]*apiextensionsinternal.CustomResourceValidation, len(internal.Spec.Versions))
	for _, v := range internal.Spec.Versions {
		byName[v.Name] = v.Schema
	}
	return newCRD(crd, func(v *apiextensionsv1.CustomResourceDefinitionVersion) (*structuralschema.Structural, error) {
		return structuralFromInternal(byName[v.Name])
	})
}

// newCRD builds a CRD with the structural schema structural gives for each
// version. Versions given the same schema share what is derived from it.
func newCRD(crd *apiextensionsv1.CustomResourceDefinition, structural func(*apiextensionsv1.CustomResourceDefinitionVersion) (*structuralschema.Structural, error)) *CRD {
	c := &CRD{
		Object:     crd,
		served:     map[string]*structuralschema.Structural{},
		raw:        map[string]*structuralschema.Structural{},
		convertErr: map[string]error{},
		servedErr:  map[string]error{},
	}
	type servedSchema struct {
		s   *structuralschema.Structural
		err error
	}
	done := map[*structuralschema.Structural]servedSchema{}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		s, err := structural(v)
		if err != nil {
			c.convertErr[v.Name] = err
			continue
		}
		c.raw[v.Name] = s
		served, ok := done[s]
		if !ok {
			served = servedSchema{s: s}
			if s != nil && !crd.Spec.PreserveUnknownFields && hasDefaults(*s) {
				// As the custom resource handler does: defaults are pruned in
				// a copy. Without defaults, pruning them changes nothing: the
				// schema as written is served, and held once.
				served.s = s.DeepCopy()
				if err := structuraldefaulting.PruneDefaults(served.s); err != nil {
					served = servedSchema{err: err}
				} else if sameDefaults(*s, *served.s) {
					served.s = s // no default pruned: the schema as written
				}
			}
			if s != nil {
				done[s] = served
			}
		}
		if served.err != nil {
			c.servedErr[v.Name] = served.err
			continue
		}
		c.served[v.Name] = served.s
	}
	return c
}

// sameDefaults reports whether pruned, a copy of s whose defaults
// PruneDefaults pruned, has the defaults of s: whether nothing changed.
// It walks copies of the nodes, not pointers to them, which would move
// every node it looks at to the heap.
func sameDefaults(s, pruned structuralschema.Structural) bool {
	if (s.Default.Object != nil || pruned.Default.Object != nil) && !reflect.DeepEqual(s.Default.Object, pruned.Default.Object) {
		return false
	}
	if (s.Items == nil) != (pruned.Items == nil) || s.Items != nil && !sameDefaults(*s.Items, *pruned.Items) {
		return false
	}
	sa, pa := s.AdditionalProperties, pruned.AdditionalProperties
	if (sa == nil) != (pa == nil) || sa != nil && (sa.Structural == nil) != (pa.Structural == nil) ||
		sa != nil && sa.Structural != nil && !sameDefaults(*sa.Structural, *pa.Structural) {
		return false
	}
	if len(s.Properties) != len(pruned.Properties) {
		return false
	}
	for k, p := range s.Properties {
		if !sameDefaults(p, pruned.Properties[k]) {
			return false
		}
	}
	return true
}

// hasDefaults is whether s has a default anywhere that
// structuraldefaulting.PruneDefaults would prune: in s, its properties,
// items or additionalProperties. Like sameDefaults, it walks copies.
func hasDefaults(s structuralschema.Structural) bool {
	if s.Default.Object != nil {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(p) {
			return true
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil && hasDefaults(*s.AdditionalProperties.Structural) {
		return true
	}
	return s.Items != nil && hasDefaults(*s.Items)
}

func structuralFromV1(v *apiextensionsv1.CustomResourceValidation) (*structuralschema.Structural, error) {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil, nil
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v, internal, nil); err != nil {
		return nil, err
	}
	return structuralFromInternal(internal)
}

// structuralFromInternal is the structural schema of an internal version's
// schema: nil without one.
func structuralFromInternal(v *apiextensionsinternal.CustomResourceValidation) (*structuralschema.Structural, error) {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil, nil
	}
	return structuralschema.NewStructural(v.OpenAPIV3Schema)
}

// Name is the CRD's metadata.name.
func (c *CRD) Name() string { return c.Object.Name }

// GroupKind is the group and kind of the custom resources the CRD defines.
func (c *CRD) GroupKind() runtimeschema.GroupKind {
	return runtimeschema.GroupKind{Group: c.Object.Spec.Group, Kind: c.Object.Spec.Names.Kind}
}

// PreserveUnknownFields is spec.preserveUnknownFields: pruning is off.
func (c *CRD) PreserveUnknownFields() bool { return c.Object.Spec.PreserveUnknownFields }

// Versions lists the version names in the CRD's order.
func (c *CRD) Versions() []string {
	var out []string
	for i := range c.Object.Spec.Versions {
		out = append(out, c.Object.Spec.Versions[i].Name) // not a copy of the version: ReleaseSchema may be writing its schema
	}
	return out
}

// Version returns the CRD's entry for the named version.
func (c *CRD) Version(name string) (*apiextensionsv1.CustomResourceDefinitionVersion, bool) {
	for i := range c.Object.Spec.Versions {
		if c.Object.Spec.Versions[i].Name == name {
			return &c.Object.Spec.Versions[i], true
		}
	}
	return nil, false
}

// ServedSchema returns the structural schema the server uses on the request
// path of the given version: nil without a schema.
func (c *CRD) ServedSchema(version string) (*structuralschema.Structural, error) {
	v, ok := c.Version(version)
	if !ok {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no version %q (it has %v)", c.Name(), version, c.Versions())
	}
	if !v.Served {
		return nil, fmt.Errorf("version %q of CustomResourceDefinition %s is not served", version, c.Name())
	}
	if err := c.convertErr[version]; err != nil && !c.PreserveUnknownFields() {
		return nil, fmt.Errorf("the schema of version %q of CustomResourceDefinition %s cannot be used by the server: %w", version, c.Name(), err)
	}
	if err := c.servedErr[version]; err != nil {
		return nil, fmt.Errorf("the schema of version %q of CustomResourceDefinition %s cannot be used by the server: %w", version, c.Name(), err)
	}
	return c.served[version], nil
}

// Registry finds the CRD of a custom resource by group and kind.
type Registry struct {
	byGK map[runtimeschema.GroupKind]*CRD
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byGK: map[runtimeschema.GroupKind]*CRD{}} }

// Add registers crd, replacing an earlier CRD for the same group and kind
// (later sources override earlier ones).
func (r *Registry) Add(crd *CRD) { r.byGK[crd.GroupKind()] = crd }

// Lookup returns the CRD for the group of apiVersion and kind.
func (r *Registry) Lookup(apiVersion, kind string) (*CRD, bool) {
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	c, ok := r.byGK[runtimeschema.GroupKind{Group: gv.Group, Kind: kind}]
	return c, ok
}

// StorageVersion is the version the server stores objects in ("" if none is marked).
func (c *CRD) StorageVersion() string {
	for i := range c.Object.Spec.Versions {
		if v := &c.Object.Spec.Versions[i]; v.Storage { // not a copy, as in Versions
			return v.Name
		}
	}
	return ""
}

// VersionSchema returns the structural schema the handler holds for a
// version, served or not (the storage version need not be served).
func (c *CRD) VersionSchema(version string) (*structuralschema.Structural, error) {
	if err := c.convertErr[version]; err != nil && !c.PreserveUnknownFields() {
		return nil, err
	}
	if err := c.servedErr[version]; err != nil {
		return nil, err
	}
	return c.served[version], nil
}

// ConversionNone reports whether versions convert by changing apiVersion only
// (spec.conversion.strategy None, the default), so the server's own code
// does the conversion and what it keeps can be computed.
func (c *CRD) ConversionNone() bool {
	conv := c.Object.Spec.Conversion
	return conv == nil || conv.Strategy == "" || conv.Strategy == apiextensionsv1.NoneConverter
}

// StatusSubresource reports whether the version has the status subresource:
// then writes to the main resource ignore status.
func (c *CRD) StatusSubresource(version string) bool {
	v, ok := c.Version(version)
	return ok && v.Subresources != nil && v.Subresources.Status != nil
}

// ClusterScoped reports whether the objects have no namespace.
func (c *CRD) ClusterScoped() bool { return c.Object.Spec.Scope == apiextensionsv1.ClusterScoped }

// FromObject decodes obj, a decoded document, when it is a
// CustomResourceDefinition (ok false otherwise: no work for other objects),
// and refuses what the API server refuses: an unsupported apiVersion, and
// a CRD its validation v refuses (an *InvalidError, with the server's
// errors).
func FromObject(obj map[string]interface{}, v CRDValidator) (crd *CRD, ok bool, err error) {
	crd, ok, err = DecodeObject(obj, v)
	if err != nil || !ok {
		return nil, ok, err
	}
	if err := crd.InvalidErr(); err != nil {
		return nil, true, err
	}
	return crd, true, nil
}

// DecodeObject is FromObject without refusing what the server's validation
// refuses: Invalid tells that, for a report of it. A nil v validates
// nothing, as for a CRD of a cluster.
func DecodeObject(obj map[string]interface{}, v CRDValidator) (crd *CRD, ok bool, err error) {
	js, legacy, ok, err := crdJSON(obj)
	if err != nil || !ok {
		return nil, ok, err
	}
	decoded, internal, err := decodeCRD(js)
	if err != nil {
		return nil, true, fmt.Errorf("invalid CustomResourceDefinition: %w", err)
	}
	return newValidatedCRD(decoded, internal, legacy, v), true, nil
}

// newValidatedCRD is newDecodedCRD, validated by v as the server validates
// a create (legacy: of a CRD read in apiextensions.k8s.io/v1beta1).
func newValidatedCRD(decoded *apiextensionsv1.CustomResourceDefinition, internal *apiextensionsinternal.CustomResourceDefinition, legacy bool, v CRDValidator) *CRD {
	c := newDecodedCRD(decoded, internal)
	c.legacy = legacy
	switch {
	case v == nil:
	case !c.legacy:
		// The registry validates what the decoder made of the v1 CRD:
		// internal is that, and not needed afterwards.
		c.validate = func() (field.ErrorList, []string) { return v.ValidateDecodedCRDCreate(internal) }
	default:
		// A v1beta1 CRD is validated as the v1 CRD it is served as, whose
		// internal version is not the one of the v1beta1 document.
		c.validate = func() (field.ErrorList, []string) { return v.ValidateCRDLegacy(c.Object) }
	}
	return c
}

// crdJSON is obj as JSON when it is a CustomResourceDefinition (ok false
// otherwise), of an apiVersion the decoder takes (an error otherwise);
// legacy when it is apiextensions.k8s.io/v1beta1.
func crdJSON(obj map[string]interface{}) (js []byte, legacy, ok bool, err error) {
	if legacy, ok, err = crdKind(obj); err != nil || !ok {
		return nil, false, ok, err
	}
	js, err = json.Marshal(obj)
	if err != nil {
		return nil, false, true, err
	}
	return js, legacy, true, nil
}

// crdKind is crdJSON without the JSON.
func crdKind(obj map[string]interface{}) (legacy, ok bool, err error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if !IsCRD(apiVersion, kind) {
		return false, false, nil
	}
	switch apiVersion {
	case "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1":
	default:
		return false, true, fmt.Errorf("unsupported apiVersion %q for a CustomResourceDefinition: use apiextensions.k8s.io/v1 (or the legacy v1beta1)", apiVersion)
	}
	return apiVersion != "apiextensions.k8s.io/v1", true, nil
}

// Refusal is the error of FromObject on obj, a CustomResourceDefinition,
// and nothing else of it: the server's decoding and its validation by v,
// without the structural schemas a check of objects needs (and, for a CRD
// in apiextensions.k8s.io/v1, without the v1 CRD served). Nil when the
// server accepts it, or obj is no CRD; nil v validates nothing.
func Refusal(obj map[string]interface{}, v CRDValidator) error {
	_, err := Verdict(obj, v)
	return err
}

// Verdict is Refusal with, when the server accepts the CRD, the warnings
// it accepts it with (as Warnings of the CRD decoded: sorted, each once).
func Verdict(obj map[string]interface{}, v CRDValidator) (warnings []string, err error) {
	js, legacy, ok, err := crdJSON(obj)
	if err != nil || !ok {
		return nil, err
	}
	var c *CRD
	var name string
	if legacy {
		// Validated as the v1 CRD it is served as (DecodeObject).
		decoded, _, err := decodeCRD(js)
		if err != nil {
			return nil, fmt.Errorf("invalid CustomResourceDefinition: %w", err)
		}
		name = decoded.Name
		c = &CRD{validate: func() (field.ErrorList, []string) { return v.ValidateCRDLegacy(decoded) }}
	} else {
		internal, err := decodeInternal(js)
		if err != nil {
			return nil, fmt.Errorf("invalid CustomResourceDefinition: %w", err)
		}
		name = internal.Name
		c = &CRD{validate: func() (field.ErrorList, []string) { return v.ValidateDecodedCRDCreate(internal) }}
	}
	if v == nil {
		return nil, nil
	}
	c.validateOnce()
	if len(c.invalid) > 0 {
		return nil, &InvalidError{Name: name, Errs: c.invalid}
	}
	return c.warnings, nil
}

// Legacy reports whether the CRD was read in apiextensions.k8s.io/v1beta1,
// which no API server serves since Kubernetes 1.22: such a file cannot be
// applied, and stands for a CRD a cluster stored before then (see
// CRDValidator.ValidateCRDLegacy).
func (c *CRD) Legacy() bool { return c.legacy }

// Redefined reports whether crd, read after prev, is another definition of
// the same CustomResourceDefinition name: the later one replaces the earlier.
func Redefined(prev, crd *CRD) bool {
	return prev.Name() == crd.Name() && !apiequality.Semantic.DeepEqual(prev.Object, crd.Object)
}
