package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
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
	ref, err := ociReference(arg)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	cred, err := ociAuth(ctx, user, ref)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: fmt.Errorf("the Docker config: %w", err)}
	}
	reg := newRegistryClient(f.client, ref, cred)
	if err := reg.ping(ctx); err != nil {
		return Pin{}, nil, f.ociError(name, ref, cred, err)
	}
	data, mediaType, digest, err := reg.manifest(ctx, f.client.maxBytes)
	if err != nil {
		return Pin{}, nil, f.ociError(name, ref, cred, err)
	}
	if hm, ok := helmManifest(data); ok {
		pin, files, err := f.ociChart(ctx, reg, data, hm, name)
		if err != nil {
			return Pin{}, nil, f.ociError(name, ref, cred, err)
		}
		return pin, files, nil
	}
	m, err := artifactManifest(mediaType, data)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	for _, l := range m.Layers {
		if err := f.ociLayer(ctx, reg, l); err != nil {
			return Pin{}, nil, f.ociError(name, ref, cred, err)
		}
	}
	if _, _, err := f.cache.put(data); err != nil {
		return Pin{}, nil, err
	}
	files, _ := ociKind{}.cached(f.cache, name, digest)
	return Pin{Source: name, Resolved: "oci://" + ref.name() + "@" + digest, Digest: digest}, files, nil
}

// ociLayer fetches a layer into the cache, unless the cache holds it: at
// most the limit of a fetch, its size and digest checked.
func (f *Fetcher) ociLayer(ctx context.Context, reg *registryClient, l descriptor) error {
	if _, ok := f.cache.has(l.Digest); ok {
		return nil
	}
	if l.Size > f.client.maxBytes {
		return &Error{Input: true, Err: fmt.Errorf("layer %s: %d bytes, larger than %d MiB, the limit of a fetch", layerName(l), l.Size, f.client.maxBytes>>20)}
	}
	data, err := reg.blob(ctx, l, f.client.maxBytes)
	if err != nil {
		return err
	}
	_, _, err = f.cache.put(data)
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
	m, err := artifactManifest(ociManifestType, data)
	if err != nil {
		return nil, false
	}
	var files []File
	for _, l := range m.Layers {
		lp, ok := c.has(l.Digest)
		if !ok {
			return nil, false
		}
		files = append(files, File{Path: lp, Name: name + "/" + layerName(l)})
	}
	return files, true
}

// descriptor is a blob of a manifest: its media type, digest, size and
// annotations (the OCI image spec's).
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ociManifest is an image manifest, OCI's or Docker's schema 2.
type ociManifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType,omitempty"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

// parseManifest parses an image manifest whose digests are sha256's.
func parseManifest(data []byte) (*ociManifest, error) {
	m := &ociManifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, err
	}
	for _, d := range append([]descriptor{m.Config}, m.Layers...) {
		if !validDigest(d.Digest) || !strings.HasPrefix(d.Digest, "sha256:") {
			return nil, fmt.Errorf("digest %q: not sha256:HEX", d.Digest)
		}
	}
	return m, nil
}

// artifactManifest is the manifest of a plain artifact whose layers are
// files: not an index, not a Helm chart, no compressed layer. (Its media
// type is a string's type: go-containerregistry's types in the tests.)
func artifactManifest[M ~string](mediaType M, data []byte) (*ociManifest, error) {
	switch mt := string(mediaType); mt {
	case ociIndexType, dockerListType:
		return nil, errors.New("an image index, not an artifact of files: name one of its manifests by digest")
	case ociManifestType, dockerManifestType:
	default:
		return nil, fmt.Errorf("a manifest of media type %s, not an OCI artifact of files", mt)
	}
	m, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("the manifest: %w", err)
	}
	if m.Config.MediaType == helmConfigMediaType {
		return nil, errors.New("a Helm chart, not an artifact of files")
	}
	if len(m.Layers) == 0 {
		return nil, errors.New("an artifact without layers")
	}
	for _, l := range m.Layers {
		if mt := l.MediaType; strings.HasSuffix(mt, "+gzip") || strings.HasSuffix(mt, "+zstd") ||
			l.Annotations["io.deis.oras.content.unpack"] == "true" {
			return nil, fmt.Errorf("layer %s is an archive (%s): push the YAML files themselves, a layer each", layerName(l), mt)
		}
	}
	return m, nil
}

// layerName is a layer's file name: its title, else its digest.
func layerName(l descriptor) string {
	if t := l.Annotations[ociTitle]; t != "" {
		return t
	}
	return l.Digest
}

// ociReference parses oci://registry/repository:tag or @sha256:digest,
// every part written out (no registry nor tag implied).
func ociReference(arg string) (ociRef, error) {
	s := Redact(arg)
	return parseOCIRef(s[len("oci://"):])
}

// ociAuth is the user information of the reference (oci://user:token@...)
// as basic authentication, else the Docker config's credentials for the
// registry ($DOCKER_CONFIG/config.json, ~/.docker/config.json, their
// credential helpers), else anonymous. The registry's client adds them
// to the requests of the registry's origin alone (a blob's redirect to
// storage goes without them), and to the token service the registry's
// challenge names (over https, unless on loopback), as docker does.
func ociAuth(ctx context.Context, user *url.Userinfo, ref ociRef) (ociCred, error) {
	if user != nil {
		pass, _ := user.Password()
		return ociCred{user: user.Username(), pass: pass}, nil
	}
	return dockerCredentials(ctx, ref)
}

// ociError is a registry's error, its fault told apart from the network's:
// a refusal names the credentials it had (or lacked).
func (f *Fetcher) ociError(name string, ref ociRef, cred ociCred, err error) error {
	var se *Error
	if errors.As(err, &se) {
		se.Source = name
		return se
	}
	// Before the registry's answer: on loopback, the ping asks again
	// over plain http when TLS fails, and joins both errors.
	if re := f.client.tlsRefusal(name, err); re != nil {
		return re
	}
	var re *redirectError
	if errors.As(err, &re) {
		return &Error{Source: name, Input: true, Err: re}
	}
	var te *registryError
	if !errors.As(err, &te) {
		return f.client.netError(name, err)
	}
	reg := ref.registry
	switch {
	case (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) && cred.anonymous():
		err = fmt.Errorf("the registry wants credentials, and the Docker config has none for %s (docker login %s, or DOCKER_CONFIG): %w", reg, reg, te)
	case te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden:
		err = fmt.Errorf("the registry refused the credentials for %s: %w", reg, te)
	case te.StatusCode == http.StatusNotFound:
		err = fmt.Errorf("not found in the registry: %w", te)
	}
	return &Error{Source: name, Input: te.StatusCode < 500, Err: err}
}

// plainHTTPGuard refuses plain http to a registry that is not on
// loopback, unless allowed (--source-plain-http): the ping falls back to
// http for private addresses, as go-containerregistry did.
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
