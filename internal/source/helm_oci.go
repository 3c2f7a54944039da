package source

import (
	"context"
	"fmt"
)

// helmManifest is the manifest of an OCI Helm chart (its config's media
// type is Helm's): false for any other.
func helmManifest(data []byte) (*ociManifest, bool) {
	m, err := parseManifest(data)
	if err != nil || m.Config.MediaType != helmConfigMediaType {
		return nil, false
	}
	return m, true
}

// chartLayer is the layer of a chart's archive.
func chartLayer(m *ociManifest) (descriptor, error) {
	for _, l := range m.Layers {
		if l.MediaType == helmChartMediaType {
			return l, nil
		}
	}
	return descriptor{}, fmt.Errorf("a Helm chart without a layer of %s", helmChartMediaType)
}

// ociChart fetches the archive of an OCI Helm chart into the cache: the
// chart is pinned by its manifest's digest, as an artifact is.
func (f *Fetcher) ociChart(ctx context.Context, reg *registryClient, manifest []byte, m *ociManifest, name string) (Pin, []File, error) {
	l, err := chartLayer(m)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	if err := f.ociLayer(ctx, reg, l); err != nil {
		return Pin{}, nil, err
	}
	digest, _, err := f.cache.put(manifest)
	if err != nil {
		return Pin{}, nil, err
	}
	files, _ := ociChartCached(f.cache, name, m)
	return Pin{Source: name, Resolved: "oci://" + reg.ref.name() + "@" + digest, Digest: digest}, files, nil
}

// ociChartCached is the cached archive of an OCI Helm chart.
func ociChartCached(c *blobs, name string, m *ociManifest) ([]File, bool) {
	l, err := chartLayer(m)
	if err != nil {
		return nil, false
	}
	p, ok := c.has(l.Digest)
	if !ok {
		return nil, false
	}
	return []File{{Path: p, Name: name, chart: true}}, true
}
