//go:build k8s_1_31

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/discovery"
)

// ownGroups are the groups the server itself serves under /apis (apiextensions.k8s.io). The
// GroupManager of 1.31 does not list them (Groups came in 1.32): its own /apis answer, in JSON,
// does.
func ownGroups(m discovery.GroupManager, req *http.Request) ([]metav1.APIGroup, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("/apis of the group manager: %d", rec.Code)
	}
	var list metav1.APIGroupList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		return nil, err
	}
	return list.Groups, nil
}
