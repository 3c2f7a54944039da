package main

import (
	"encoding/json"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testNamespaces are the namespaces the server lists: those of a new cluster and the one of the
// kubeconfig's "<context>-other" context.
var testNamespaces = []string{"default", "kube-node-lease", "kube-public", "kube-system", "other"}

// installNamespaces serves GET /api/v1/namespaces, read-only, for the plugin's completion of
// --namespace: this server has no core API, and the list is fixed. It sits behind the server's
// authentication and authorization like every other route, so the denied user gets a real 403.
func installNamespaces(s *apiserver.CustomResourceDefinitions) {
	list := corev1.NamespaceList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NamespaceList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "1"},
	}
	for _, name := range testNamespaces {
		list.Items = append(list.Items, corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		})
	}
	body, err := json.Marshal(list)
	if err != nil {
		panic(err)
	}
	s.GenericAPIServer.Handler.NonGoRestfulMux.HandleFunc("/api/v1/namespaces", func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet {
			http.Error(w, "the test server's namespaces are read-only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
