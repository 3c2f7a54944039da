package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ociKind is a plain OCI artifact, as oras pushes files: an OCI manifest
// whose layers are files of CRDs, each named by its title annotation. It
// is pinned by the manifest's digest; the manifest and the layers are
// kept in the cache by theirs.
type ociKind struct{}

// ociTitle is the annotation that names a layer's file (oras push).
const ociTitle = "org.opencontainers.image.title"

func (ociKind) fetch(ctx context.Context, f *Fetcher, arg, name string) (Pin, []File, error) {
	_, user, err := parseSource(arg)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	ref, err := ociReference(arg, f.opts.PlainHTTP)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	auth, err := ociAuth(ctx, user, ref.Context())
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: fmt.Errorf("the Docker config: %w", err)}
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth), remote.WithUserAgent("kubectl-crd"),
		remote.WithTransport(registryTransport{c: f.client, registry: ref.Context().RegistryStr()})}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return Pin{}, nil, f.ociError(name, ref, auth, err)
	}
	if int64(len(desc.Manifest)) > f.client.maxBytes {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: errors.New("a manifest larger than the limit of a fetch")}
	}
	if hm, ok := helmManifest(desc.Manifest); ok {
		pin, files, err := f.ociChart(ctx, ref, desc.Manifest, hm, opts, name)
		if err != nil {
			return Pin{}, nil, f.ociError(name, ref, auth, err)
		}
		return pin, files, nil
	}
	m, err := artifactManifest(desc.MediaType, desc.Manifest)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	for _, l := range m.Layers {
		if err := f.ociLayer(ref.Context(), l, opts); err != nil {
			return Pin{}, nil, f.ociError(name, ref, auth, err)
		}
	}
	digest, _, err := f.cache.put(desc.Manifest)
	if err != nil {
		return Pin{}, nil, err
	}
	files, _ := ociKind{}.cached(f.cache, name, digest)
	return Pin{Source: name, Resolved: "oci://" + ref.Context().Name() + "@" + digest, Digest: digest}, files, nil
}

// ociLayer fetches a layer into the cache, unless the cache holds it: at
// most the limit of a fetch, its digest checked as it is read.
func (f *Fetcher) ociLayer(repo name.Repository, l v1.Descriptor, opts []remote.Option) error {
	if _, ok := f.cache.has(l.Digest.String()); ok {
		return nil
	}
	if l.Size > f.client.maxBytes {
		return &Error{Input: true, Err: fmt.Errorf("layer %s: %d bytes, larger than %d MiB, the limit of a fetch", layerName(l), l.Size, f.client.maxBytes>>20)}
	}
	layer, err := remote.Layer(repo.Digest(l.Digest.String()), opts...)
	if err != nil {
		return err
	}
	rc, err := layer.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, f.client.maxBytes+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > f.client.maxBytes {
		return &Error{Input: true, Err: fmt.Errorf("layer %s: larger than %d MiB, the limit of a fetch", layerName(l), f.client.maxBytes>>20)}
	}
	digest, _, err := f.cache.put(data)
	if err == nil && digest != l.Digest.String() {
		err = &Error{Input: true, Err: fmt.Errorf("layer %s: content of digest %s", layerName(l), digest)}
	}
	return err
}

func (ociKind) cached(c *blobs, name, digest string) ([]File, bool) {
	p, ok := c.has(digest)
	if !ok {
		return nil, false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	if hm, ok := helmManifest(data); ok {
		return ociChartCached(c, name, hm)
	}
	m, err := artifactManifest(types.OCIManifestSchema1, data)
	if err != nil {
		return nil, false
	}
	var files []File
	for _, l := range m.Layers {
		lp, ok := c.has(l.Digest.String())
		if !ok {
			return nil, false
		}
		files = append(files, File{Path: lp, Name: name + "/" + layerName(l)})
	}
	return files, true
}

// artifactManifest is the manifest of a plain artifact whose layers are
// files: not an index, not a Helm chart, no compressed layer.
func artifactManifest(mt types.MediaType, data []byte) (*v1.Manifest, error) {
	switch mt {
	case types.OCIImageIndex, types.DockerManifestList:
		return nil, errors.New("an image index, not an artifact of files: name one of its manifests by digest")
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
	default:
		return nil, fmt.Errorf("a manifest of media type %s, not an OCI artifact of files", mt)
	}
	m, err := v1.ParseManifest(strings.NewReader(string(data)))
	if err != nil {
		return nil, fmt.Errorf("the manifest: %w", err)
	}
	if m.Config.MediaType == "application/vnd.cncf.helm.config.v1+json" {
		return nil, errors.New("a Helm chart, not an artifact of files")
	}
	if len(m.Layers) == 0 {
		return nil, errors.New("an artifact without layers")
	}
	for _, l := range m.Layers {
		if mt := string(l.MediaType); strings.HasSuffix(mt, "+gzip") || strings.HasSuffix(mt, "+zstd") ||
			l.Annotations["io.deis.oras.content.unpack"] == "true" {
			return nil, fmt.Errorf("layer %s is an archive (%s): push the YAML files themselves, a layer each", layerName(l), mt)
		}
		if l.Digest.Algorithm != "sha256" {
			return nil, fmt.Errorf("layer %s: digest %s, not sha256", layerName(l), l.Digest)
		}
	}
	return m, nil
}

// layerName is a layer's file name: its title, else its digest.
func layerName(l v1.Descriptor) string {
	if t := l.Annotations[ociTitle]; t != "" {
		return t
	}
	return l.Digest.String()
}

// ociReference parses oci://registry/repository:tag or @sha256:digest,
// every part written out (no registry nor tag implied).
func ociReference(arg string, plainHTTP bool) (name.Reference, error) {
	s := Redact(arg)
	s = s[len("oci://"):]
	opts := []name.Option{name.StrictValidation}
	if plainHTTP {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(s, opts...)
	if err != nil {
		return nil, fmt.Errorf("not an OCI reference oci://registry/repository:tag or @sha256:digest: %w", err)
	}
	return ref, nil
}

// ociAuth is the user information of the reference (oci://user:token@...)
// as basic authentication, else the Docker config's credentials for the
// registry ($DOCKER_CONFIG/config.json, ~/.docker/config.json, their
// credential helpers), else anonymous. go-containerregistry adds them to
// the requests of the registry's host and port alone (a blob's redirect
// to storage goes without them), and to the token service the
// registry's challenge names (over https, unless the registry is reached
// over plain http), as docker does.
func ociAuth(ctx context.Context, user *url.Userinfo, repo name.Repository) (authn.Authenticator, error) {
	if user != nil {
		pass, _ := user.Password()
		return &authn.Basic{Username: user.Username(), Password: pass}, nil
	}
	return authn.Resolve(ctx, authn.DefaultKeychain, repo)
}

// ociError is a registry's error, its fault told apart from the network's:
// a refusal names the credentials it had (or lacked).
func (f *Fetcher) ociError(name string, ref name.Reference, auth authn.Authenticator, err error) error {
	var se *Error
	if errors.As(err, &se) {
		se.Source = name
		return se
	}
	// Before the registry's answer: on loopback, go-containerregistry
	// asks again over plain http when TLS fails, and joins both errors.
	if re := f.client.tlsRefusal(name, err); re != nil {
		return re
	}
	var re *redirectError
	if errors.As(err, &re) {
		return &Error{Source: name, Input: true, Err: re}
	}
	var te *transport.Error
	if !errors.As(err, &te) {
		return f.client.netError(name, err)
	}
	reg := ref.Context().RegistryStr()
	switch {
	case (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) && auth == authn.Anonymous:
		err = fmt.Errorf("the registry wants credentials, and the Docker config has none for %s (docker login %s, or DOCKER_CONFIG): %w", reg, reg, te)
	case te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden:
		err = fmt.Errorf("the registry refused the credentials for %s: %w", reg, te)
	case te.StatusCode == http.StatusNotFound:
		err = fmt.Errorf("not found in the registry: %w", te)
	}
	return &Error{Source: name, Input: te.StatusCode < 500, Err: err}
}

// plainHTTPGuard refuses plain http to a registry that is not on
// loopback, unless allowed (--source-plain-http): go-containerregistry
// falls back to http for private addresses by itself.
type plainHTTPGuard struct {
	next  http.RoundTripper
	allow bool
}

func (g plainHTTPGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := g.check(r); err != nil {
		return nil, err
	}
	return g.next.RoundTrip(r)
}

func (g plainHTTPGuard) check(r *http.Request) error {
	if r.URL.Scheme == "http" && !g.allow && !isLoopback(r.URL.Hostname()) {
		return fmt.Errorf("plain http to %s: only a registry on loopback is reached without TLS, unless --source-plain-http", r.URL.Host)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
