package plugin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// crdClient stands in for the apiextensions clientset: the same requests
// (method, path, query, the headers content negotiation and the user agent
// set), and the same objects decoded from the answers.
func TestCRDClientAsTheClientset(t *testing.T) {
	crd := apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", ResourceVersion: "7"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}},
		},
	}
	var mu sync.Mutex
	var requests []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.String()+" accept="+r.Header.Get("Accept")+
			" content-type="+r.Header.Get("Content-Type")+" user-agent="+r.Header.Get("User-Agent"))
		mu.Unlock()
		var body any = &crd
		if r.URL.Path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" {
			body = &apiextensionsv1.CustomResourceDefinitionList{
				TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinitionList"},
				ListMeta: metav1.ListMeta{Continue: "next"},
				Items:    []apiextensionsv1.CustomResourceDefinition{crd},
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	defer server.Close()

	type answers struct {
		Requests []string
		Got      *apiextensionsv1.CustomResourceDefinition
		List     *apiextensionsv1.CustomResourceDefinitionList
	}
	run := func(get func(context.Context, string, metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error),
		list func(context.Context, metav1.ListOptions) (*apiextensionsv1.CustomResourceDefinitionList, error)) answers {
		requests = nil
		var a answers
		var err error
		if a.Got, err = get(context.Background(), crd.Name, metav1.GetOptions{ResourceVersion: "7"}); err != nil {
			t.Fatal(err)
		}
		if a.List, err = list(context.Background(), metav1.ListOptions{Limit: crdsPerPage, Continue: "c"}); err != nil {
			t.Fatal(err)
		}
		a.Requests = requests
		return a
	}

	cfg := &rest.Config{Host: server.URL, QPS: 5, Burst: 10}
	clientset, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	typed := clientset.ApiextensionsV1().CustomResourceDefinitions()
	want := run(typed.Get, typed.List)
	ours, err := newCRDClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := run(ours.Get, ours.List)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("crdClient differs from the clientset (-clientset +crdClient):\n%s", diff)
	}
	if len(got.Requests) != 2 || got.Got.Name != crd.Name || len(got.List.Items) != 1 {
		t.Errorf("unexpected answers: %+v", got)
	}
}
