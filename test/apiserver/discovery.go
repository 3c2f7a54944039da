package main

import (
	"net/http"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	listers "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

// installAPIsDiscovery serves GET /apis, which every kubectl and client-go command starts with.
// The apiextensions-apiserver turns it off because in a cluster the kube-aggregator in front of
// it serves /apis; here nothing is in front of it.
func installAPIsDiscovery(s *apiserver.CustomResourceDefinitions) {
	crds := s.Informers.Apiextensions().V1().CustomResourceDefinitions().Lister()
	legacy := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// apiextensions.k8s.io itself, then the CRD groups, which the server lists only under /apis/<group>.
		groups, _ := ownGroups(s.GenericAPIServer.DiscoveryGroupManager, req)
		crdGroups, err := servedCRDGroups(crds)
		if err != nil {
			responsewriters.ErrorNegotiated(apierrors.NewInternalError(err), apiserver.Codecs, schema.GroupVersion{}, w, req)
			return
		}
		list := &metav1.APIGroupList{Groups: append(groups, crdGroups...)}
		responsewriters.WriteObjectNegotiated(apiserver.Codecs, negotiation.DefaultEndpointRestrictions, schema.GroupVersion{}, w, req, http.StatusOK, list, false)
	})
	// Aggregated discovery (what kubectl asks for first) is already kept up to date by the
	// server's CRD discovery controller; it only lacks a route.
	wrapped := wrapAggregatedDiscovery(legacy, s.GenericAPIServer.AggregatedDiscoveryGroupManager)
	s.GenericAPIServer.Handler.GoRestfulContainer.Add(wrapped.GenerateWebService("/apis", metav1.APIGroupList{}))
}

// servedCRDGroups lists the groups of established CRDs with their served versions, ordered as
// the server orders /apis/<group>: the most stable, newest version first and preferred.
func servedCRDGroups(crds listers.CustomResourceDefinitionLister) ([]metav1.APIGroup, error) {
	all, err := crds.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	versions := map[string][]string{}
	for _, crd := range all {
		if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && !slices.Contains(versions[crd.Spec.Group], v.Name) {
				versions[crd.Spec.Group] = append(versions[crd.Spec.Group], v.Name)
			}
		}
	}

	var groups []metav1.APIGroup
	for group, vs := range versions {
		slices.SortFunc(vs, func(a, b string) int { return version.CompareKubeAwareVersionStrings(b, a) })
		g := metav1.APIGroup{Name: group}
		for _, v := range vs {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
		}
		g.PreferredVersion = g.Versions[0]
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b metav1.APIGroup) int { return strings.Compare(a.Name, b.Name) })
	return groups, nil
}
