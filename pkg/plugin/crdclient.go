package plugin

import (
	"fmt"
	"net/http"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// crdClient gets and lists the cluster's CustomResourceDefinitions: the
// apiextensions clientset's typed client, client-go's generic client with
// the same options, without the clientset. The clientset's scheme registers
// the apiextensions types in every version as the binary starts, whether a
// run reads the cluster or not (--help, --offline); crdScheme is made when
// a client is.
type crdClient = *gentype.ClientWithList[*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionList]

// crdScheme is the clientset's scheme: the apiextensions versions it
// serves, and metav1's options under "v1" for the query parameters.
var crdScheme = sync.OnceValues(func() (*runtime.Scheme, serializer.CodecFactory) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, runtimeschema.GroupVersion{Version: "v1"})
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1beta1.AddToScheme(scheme))
	return scheme, serializer.NewCodecFactory(scheme)
})

// newCRDClient is the clientset's NewForConfig for its ApiextensionsV1()
// CustomResourceDefinitions(): the user agent, one HTTP client, the rate
// limiter of cfg's QPS, and the REST client of apiextensions.k8s.io/v1.
func newCRDClient(cfg *rest.Config) (crdClient, error) {
	config := *cfg
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	httpClient, err := rest.HTTPClientFor(&config)
	if err != nil {
		return nil, err
	}
	return newCRDClientFor(&config, httpClient)
}

func newCRDClientFor(cfg *rest.Config, httpClient *http.Client) (crdClient, error) {
	config := *cfg
	if config.RateLimiter == nil && config.QPS > 0 {
		if config.Burst <= 0 {
			return nil, fmt.Errorf("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")
		}
		config.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(config.QPS, config.Burst)
	}
	scheme, codecs := crdScheme()
	gv := apiextensionsv1.SchemeGroupVersion
	config.GroupVersion = &gv
	config.APIPath = "/apis"
	config.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme, codecs).WithoutConversion()
	client, err := rest.RESTClientForConfigAndClient(&config, httpClient)
	if err != nil {
		return nil, err
	}
	return gentype.NewClientWithList("customresourcedefinitions", client, runtime.NewParameterCodec(scheme), "",
		func() *apiextensionsv1.CustomResourceDefinition { return &apiextensionsv1.CustomResourceDefinition{} },
		func() *apiextensionsv1.CustomResourceDefinitionList {
			return &apiextensionsv1.CustomResourceDefinitionList{}
		},
		gentype.PrefersProtobuf[*apiextensionsv1.CustomResourceDefinition]()), nil
}
