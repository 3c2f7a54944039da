package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The client of an OCI registry (the distribution spec's pull): what
// the plugin needs of it and no more, so that it links no registry
// library (issue 44). Credentials go to the registry's origin alone and
// to the token service its challenge names, never on a redirect to
// another origin (a blob's to storage), never over plain http but to
// loopback; the client certificate to the registry's origin alone.

// ociAccept are the manifests asked for: OCI's and Docker's schema 2,
// an image or an index (which a plain artifact refuses, naming it).
var ociAccept = strings.Join([]string{
	ociManifestType, ociIndexType, dockerManifestType, dockerListType,
}, ",")

const (
	ociManifestType    = "application/vnd.oci.image.manifest.v1+json"
	ociIndexType       = "application/vnd.oci.image.index.v1+json"
	dockerManifestType = "application/vnd.docker.distribution.manifest.v2+json"
	dockerListType     = "application/vnd.docker.distribution.manifest.list.v2+json"
)

// maxTokenBytes bounds the answer of a token service, and of an error.
const maxTokenBytes = 1 << 20

// registryClient reaches one registry for one repository.
type registryClient struct {
	c    *client
	ref  ociRef
	cred ociCred
	// scheme is the registry's, found by the ping: https, or plain http
	// on loopback or with --source-plain-http.
	scheme string
	// auth is the Authorization of the registry's requests ("" none).
	auth      string
	challenge *ociChallenge
	scopes    []string
}

// ociCred are credentials for a registry: a user and password (basic),
// an identity token (exchanged at the token service) or a registry
// token (sent as the bearer token itself).
type ociCred struct {
	user, pass                   string
	identityToken, registryToken string
}

func (c ociCred) anonymous() bool { return c == ociCred{} }

// ociChallenge is a registry's WWW-Authenticate: Basic or Bearer, with
// its parameters (realm, service, scope).
type ociChallenge struct {
	scheme string
	params map[string]string
}

func newRegistryClient(c *client, ref ociRef, cred ociCred) *registryClient {
	return &registryClient{c: c, ref: ref, cred: cred, scopes: []string{"repository:" + ref.repo + ":pull"}}
}

// origin is the registry's, by the scheme the ping found.
func (r *registryClient) origin() origin {
	return originOf(&url.URL{Scheme: r.scheme, Host: r.ref.registry})
}

// httpClient sends the requests of the registry: redirects followed by
// the client's rules (registryTransport.allowed), the Authorization and
// the client certificate to the registry's origin alone.
func (r *registryClient) httpClient() *http.Client {
	t := registryTransport{c: r.c, registry: r.ref.registry, auth: r.auth}
	if r.scheme != "" {
		t.origin = r.origin()
	}
	return &http.Client{Transport: t, Timeout: r.c.timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return &redirectError{Target: Redact(req.URL.String()), Why: fmt.Sprintf("a redirect after %d: not followed", maxRedirects)}
		}
		return nil
	}}
}

// ping asks the registry's /v2/ how it authenticates, over https, and on
// failure over plain http where go-containerregistry asked too (loopback,
// private addresses, --source-plain-http): plainHTTPGuard refuses what
// may not go in the clear, and the error then says both.
func (r *registryClient) ping(ctx context.Context) error {
	err := r.pingOver(ctx, "https")
	if err == nil || !r.mayTryHTTP() {
		return err
	}
	if herr := r.pingOver(ctx, "http"); herr != nil {
		return errors.Join(err, herr)
	}
	return nil
}

func (r *registryClient) mayTryHTTP() bool {
	if r.c.plainHTTP {
		return true
	}
	host := r.ref.registry
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = strings.Trim(h, "[]")
	}
	if isLoopback(host) {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsPrivate() && ip.To4() != nil
}

func (r *registryClient) pingOver(ctx context.Context, scheme string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+r.ref.registry+"/v2/", nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kubectl-crd")
	resp, err := r.httpClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusUnauthorized:
	default:
		return newRegistryError(resp)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxTokenBytes))
	r.scheme = strings.ToLower(resp.Request.URL.Scheme)
	if resp.StatusCode == http.StatusUnauthorized {
		r.challenge = pickChallenge(resp.Header.Values("WWW-Authenticate"))
	}
	return r.authorize(ctx)
}

// authorize sets the Authorization of the registry's requests by its
// challenge and the credentials: none over plain http but to loopback.
func (r *registryClient) authorize(ctx context.Context) error {
	switch {
	case r.challenge == nil:
		return nil
	case r.scheme == "http" && !isLoopback(r.hostname()):
		return &Error{Input: true, Err: fmt.Errorf("the registry at http://%s asks for authentication, which goes over plain http to loopback alone: reach it over https", r.ref.registry)}
	}
	switch r.challenge.scheme {
	case "basic":
		if r.cred.user != "" || r.cred.pass != "" {
			r.auth = basicAuth(r.cred.user, r.cred.pass)
		}
	case "bearer":
		tok, err := r.token(ctx)
		if err != nil {
			return err
		}
		r.auth = "Bearer " + tok
	}
	return nil
}

func (r *registryClient) hostname() string {
	return (&url.URL{Host: r.ref.registry}).Hostname()
}

func basicAuth(user, pass string) string {
	req := http.Request{Header: http.Header{}}
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

// get is the response of a GET of the registry's path (/v2/...), a
// Bearer challenge with a new scope answered once; the caller closes
// its body.
func (r *registryClient) get(ctx context.Context, path, accept string) (*http.Response, error) {
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.scheme+"://"+r.ref.registry+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", "kubectl-crd")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := r.httpClient().Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		ch := pickChallenge(resp.Header.Values("WWW-Authenticate"))
		if try > 0 || resp.StatusCode != http.StatusUnauthorized || ch == nil || ch.scheme != "bearer" ||
			originOf(resp.Request.URL) != r.origin() {
			defer resp.Body.Close()
			return nil, newRegistryError(resp)
		}
		resp.Body.Close()
		if s := ch.params["scope"]; s != "" && !containsString(r.scopes, s) {
			r.scopes = append([]string{s}, r.scopes...)
		}
		r.challenge = ch
		if err := r.authorize(ctx); err != nil {
			return nil, err
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// manifest is the manifest of the reference, at most maxBytes, its
// digest checked when the reference names one, and its media type.
func (r *registryClient) manifest(ctx context.Context, maxBytes int64) ([]byte, string, string, error) {
	if r.ref.digest != "" && !strings.HasPrefix(r.ref.digest, "sha256:") {
		return nil, "", "", &Error{Input: true, Err: fmt.Errorf("digest %s: only sha256 is fetched", r.ref.digest)}
	}
	resp, err := r.get(ctx, "/v2/"+r.ref.repo+"/manifests/"+r.ref.identifier(), ociAccept)
	if err != nil {
		return nil, "", "", err
	}
	defer resp.Body.Close()
	tooLarge := &Error{Input: true, Err: errors.New("a manifest larger than the limit of a fetch")}
	if resp.ContentLength > maxBytes {
		return nil, "", "", tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, "", "", err
	}
	if int64(len(data)) > maxBytes {
		return nil, "", "", tooLarge
	}
	digest := sha256Digest(data)
	if r.ref.digest != "" && digest != r.ref.digest {
		return nil, "", "", &Error{Input: true, Err: fmt.Errorf("the manifest's digest is %s, not the %s of the reference", digest, r.ref.digest)}
	}
	return data, resp.Header.Get("Content-Type"), digest, nil
}

// blob is the blob of l, its size and digest checked, at most maxBytes.
func (r *registryClient) blob(ctx context.Context, l descriptor, maxBytes int64) ([]byte, error) {
	resp, err := r.get(ctx, "/v2/"+r.ref.repo+"/blobs/"+l.Digest, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	tooLarge := &Error{Input: true, Err: fmt.Errorf("layer %s: larger than %d MiB, the limit of a fetch", layerName(l), maxBytes>>20)}
	if resp.ContentLength > maxBytes {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxBytes {
		return nil, tooLarge
	}
	if int64(len(data)) != l.Size {
		return nil, &Error{Input: true, Err: fmt.Errorf("layer %s: %d bytes, not the %d of its manifest", layerName(l), len(data), l.Size)}
	}
	if d := sha256Digest(data); d != l.Digest {
		return nil, &Error{Input: true, Err: fmt.Errorf("layer %s: content of digest %s", layerName(l), d)}
	}
	return data, nil
}

func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// registryError is a registry's answer other than 200: its status and
// the codes and messages of its errors (the distribution spec's JSON),
// the URL without its query (a redirect's signature).
type registryError struct {
	Method, URL string
	StatusCode  int
	Status      string
	Messages    []string
}

func newRegistryError(resp *http.Response) *registryError {
	u := *resp.Request.URL
	u.RawQuery, u.ForceQuery, u.User = "", false, nil
	e := &registryError{Method: resp.Request.Method, URL: u.String(), StatusCode: resp.StatusCode, Status: resp.Status}
	var body struct {
		Errors []struct {
			Code, Message string
		}
	}
	if json.NewDecoder(io.LimitReader(resp.Body, maxTokenBytes)).Decode(&body) == nil {
		for _, d := range body.Errors {
			e.Messages = append(e.Messages, d.Code+": "+d.Message)
		}
	}
	return e
}

func (e *registryError) Error() string {
	msg := "unexpected status code " + e.Status
	if len(e.Messages) > 0 {
		msg = strings.Join(e.Messages, "; ")
	}
	return e.Method + " " + e.URL + ": " + msg
}
