package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// helmManifest is the manifest of an OCI Helm chart (its config's media
// type is Helm's): false for any other.
func helmManifest(data []byte) (*v1.Manifest, bool) {
	m, err := v1.ParseManifest(strings.NewReader(string(data)))
	if err != nil || m.Config.MediaType != helmConfigMediaType {
		return nil, false
	}
	return m, true
}

// chartLayer is the layer of a chart's archive.
func chartLayer(m *v1.Manifest) (v1.Descriptor, error) {
	for _, l := range m.Layers {
		if l.MediaType == helmChartMediaType {
			if l.Digest.Algorithm != "sha256" {
				return v1.Descriptor{}, fmt.Errorf("the chart's layer: digest %s, not sha256", l.Digest)
			}
			return l, nil
		}
	}
	return v1.Descriptor{}, fmt.Errorf("a Helm chart without a layer of %s", helmChartMediaType)
}

// ociChart fetches the archive of an OCI Helm chart into the cache: the
// chart is pinned by its manifest's digest, as an artifact is.
func (f *Fetcher) ociChart(ctx context.Context, ref name.Reference, manifest []byte, m *v1.Manifest, opts []remote.Option, name string) (Pin, []File, error) {
	l, err := chartLayer(m)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	if err := f.ociLayer(ref.Context(), l, opts); err != nil {
		return Pin{}, nil, err
	}
	digest, _, err := f.cache.put(manifest)
	if err != nil {
		return Pin{}, nil, err
	}
	files, _ := ociChartCached(f.cache, name, m)
	return Pin{Source: name, Resolved: "oci://" + ref.Context().Name() + "@" + digest, Digest: digest}, files, nil
}

// ociChartCached is the cached archive of an OCI Helm chart.
func ociChartCached(c *blobs, name string, m *v1.Manifest) ([]File, bool) {
	l, err := chartLayer(m)
	if err != nil {
		return nil, false
	}
	p, ok := c.has(l.Digest.String())
	if !ok {
		return nil, false
	}
	return []File{{Path: p, Name: name, chart: true}}, true
}
