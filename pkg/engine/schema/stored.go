package schema

import (
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// CRDPreparer is the CRD registry's preparation of a create, the server's
// code (strategy.Validators): system metadata, the namespace of a
// cluster-scoped kind, and the strategy's PrepareForCreate, on the
// internal version the decoder made.
type CRDPreparer interface {
	PrepareCRDCreate(crd *apiextensionsinternal.CustomResourceDefinition) error
}

// ServerSetMetadata are the fields of metadata the server sets on a create
// whatever the request says: what `kubectl get -o yaml` shows and a
// manifest does not hold. StoredCRD leaves them out, with status.
var ServerSetMetadata = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}

// StoredCRD is what the API server stores of obj, a CustomResourceDefinition
// in apiextensions.k8s.io/v1 sent to be created, as `kubectl get -o json`
// then returns it, less status and ServerSetMetadata: obj decoded as the
// request is (defaulted as v1, converted to the internal version), prepared
// by p as the registry's create does, written through the storage codec
// (apiextensions.k8s.io/v1beta1 JSON, as the apiextensions-apiserver stores
// CRDs) and read back from it (defaulted as v1beta1), then encoded as v1,
// all with the server's code; numbers as a document reads them. ok is false
// for an object that is no v1 CRD: a v1beta1 one cannot be created.
func StoredCRD(obj map[string]interface{}, p CRDPreparer) (stored map[string]interface{}, ok bool, err error) {
	js, legacy, ok, err := crdJSON(obj)
	if err != nil || !ok || legacy {
		return nil, false, err
	}
	internal, err := decodeInternal(js)
	if err != nil {
		return nil, true, fmt.Errorf("invalid CustomResourceDefinition: %w", err)
	}
	if err := p.PrepareCRDCreate(internal); err != nil {
		return nil, true, err
	}
	_, codecs := apiextensions()
	storage := codecs.LegacyCodec(apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion)
	data, err := runtime.Encode(storage, internal)
	if err != nil {
		return nil, true, err
	}
	read, _, err := storage.Decode(data, nil, nil)
	if err != nil {
		return nil, true, err
	}
	served, err := runtime.Encode(codecs.LegacyCodec(apiextensionsv1.SchemeGroupVersion), read)
	if err != nil {
		return nil, true, err
	}
	if err := utiljson.Unmarshal(served, &stored); err != nil {
		return nil, true, err
	}
	delete(stored, "status")
	if meta, ok := stored["metadata"].(map[string]interface{}); ok {
		for _, f := range ServerSetMetadata {
			delete(meta, f)
		}
	}
	return stored, true, nil
}
