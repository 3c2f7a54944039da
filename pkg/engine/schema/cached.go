package schema

import (
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Encoded is the CRD as DecodeObject made it (Object, the v1 CRD served)
// in the protobuf of the apiextensions types, for a cache of decoded CRDs
// to keep and DecodeEncoded to read: decoding it is a fraction of the
// JSON decoding, defaulting and two conversions DecodeObject does. Call it
// before any version's schema is released (ReleaseSchema).
func (c *CRD) Encoded() ([]byte, error) {
	c.released.mu.Lock() // ReleaseSchema writes the schemas under it
	defer c.released.mu.Unlock()
	if len(c.released.versions) > 0 {
		return nil, fmt.Errorf("CRD %s: a version's schema is released", c.Name())
	}
	return c.Object.Marshal()
}

// DecodeEncoded is DecodeObject of obj, a CRD the server accepts, from
// encoded (Encoded of the CRD DecodeObject made of obj) rather than from
// obj: the same CRD, its internal version converted from the v1 one once.
// obj says what it is (an error as DecodeObject's for what is no CRD the
// decoder takes); an error when encoded is not a CRD's.
func DecodeEncoded(obj map[string]interface{}, encoded []byte, v CRDValidator) (crd *CRD, ok bool, err error) {
	legacy, ok, err := crdKind(obj)
	if err != nil || !ok {
		return nil, ok, err
	}
	decoded := &apiextensionsv1.CustomResourceDefinition{}
	if err := decoded.Unmarshal(encoded); err != nil {
		return nil, true, err
	}
	decoded.APIVersion, decoded.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	scheme, _ := apiextensions()
	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := scheme.Convert(decoded, internal, nil); err != nil {
		return nil, true, err
	}
	return newValidatedCRD(decoded, internal, legacy, v), true, nil
}
