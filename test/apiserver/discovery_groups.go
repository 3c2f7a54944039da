//go:build !k8s_1_31

package main

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/discovery"
)

// ownGroups are the groups the server itself serves under /apis (apiextensions.k8s.io).
func ownGroups(m discovery.GroupManager, req *http.Request) ([]metav1.APIGroup, error) {
	return m.Groups(req.Context(), req)
}
