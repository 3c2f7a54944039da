//go:build k8s_1_31 || k8s_1_32 || k8s_1_33 || k8s_1_34

package main

import (
	"net/http"

	"k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
)

// wrapAggregatedDiscovery serves aggregated discovery from agg, and legacy discovery from legacy.
// Up to 1.34 the wrapper has no handler of peers' discovery.
func wrapAggregatedDiscovery(legacy, agg http.Handler) *aggregated.WrappedHandler {
	return aggregated.WrapAggregatedDiscoveryToHandler(legacy, agg)
}
