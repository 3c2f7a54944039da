package source

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Credentials go only to the origin they were given for: the same
// scheme, host and port. Go's client decides by the host alone which
// headers a redirect keeps (net/http's shouldCopyHeaderOnRedirect: the
// Authorization goes to another port, to a subdomain, over plain http),
// and crypto/tls shows the client certificate to any server that asks.
// So no request carries credentials when it is made: the transport of
// a fetch adds them to each request of their origin, the redirects
// included, and sends it by the transport that holds the certificate;
// any other request goes without either.

// origin is a URL's scheme, host and port (the scheme's when none is
// written), lower-cased: https://Example.com is https://example.com:443.
type origin string

func originOf(u *url.URL) origin {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return origin(scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port))
}

// creds are the credentials of a fetch: user (basic authentication) and
// the client's certificate go to origin, and with passAll (Helm's
// pass_credentials_all) user goes to any https origin too.
type creds struct {
	origin  origin
	user    *url.Userinfo
	passAll bool
}

// originTransport sends each request of a fetch with the credentials of
// its origin, if any.
type originTransport struct {
	c  *client
	cr creds
}

func (t originTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	same := originOf(r.URL) == t.cr.origin
	next := t.c.bare
	if same && t.c.withCert != nil {
		next = t.c.withCert
	}
	if t.cr.user != nil && (same || t.cr.passAll && strings.EqualFold(r.URL.Scheme, "https")) {
		r = r.Clone(r.Context())
		pass, _ := t.cr.user.Password()
		r.SetBasicAuth(t.cr.user.Username(), pass)
	}
	return next.RoundTrip(r)
}

// do sends req by the rules of credentials and of redirects.
func (c *client) do(req *http.Request, cr creds) (*http.Response, error) {
	hc := &http.Client{Transport: originTransport{c: c, cr: cr}, CheckRedirect: c.checkRedirect, Timeout: c.timeout}
	return hc.Do(req)
}

// maxRedirects is as many redirects as Go's client follows by default.
const maxRedirects = 10

// checkRedirect follows a redirect to https, and to plain http only on
// loopback with --source-plain-http (a test's server): https is never
// downgraded, and file:, a URL without a host and the like are the
// source's fault, not the network's.
func (c *client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return &redirectError{Target: Redact(req.URL.String()), Why: fmt.Sprintf("a redirect after %d: not followed", maxRedirects)}
	}
	return c.followable(req.URL)
}

// followable is nil for a URL a redirect may go to, else why not.
func (c *client) followable(u *url.URL) error {
	target := Redact(u.String())
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme != "https" && scheme != "http":
		return &redirectError{Target: target, Why: "only https:// is followed"}
	case u.Host == "":
		return &redirectError{Target: target, Why: "a URL without a host"}
	case scheme == "https":
		return nil
	case scheme == "http" && c.plainHTTP && isLoopback(u.Hostname()):
		return nil
	}
	return &redirectError{Target: target, Why: "https is never downgraded to plain http (only to a server on loopback, with --source-plain-http)"}
}

// redirectError is a redirect not followed: the source's fault (exit 2).
type redirectError struct {
	Target, Why string
}

func (e *redirectError) Error() string { return "redirected to " + e.Target + ": " + e.Why }

// registryTransport is the transport of an OCI registry's requests
// (ociclient.go) and of its token service's: plain http only to
// loopback, unless allowed (--source-plain-http), never as a redirect
// from https but to loopback with it allowed; the client certificate
// only to the registry itself; auth (an Authorization) only to origin,
// and never over plain http but to loopback.
type registryTransport struct {
	c        *client
	registry string // host[:port] of the registry
	auth     string
	origin   origin
	noCert   bool // the token service's requests show no certificate
}

func (t registryTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.allowed(r); err != nil {
		return nil, err
	}
	next := t.c.bare
	if t.c.withCert != nil && !t.noCert && strings.EqualFold(r.URL.Scheme, "https") && originOf(r.URL) == originOf(&url.URL{Scheme: "https", Host: t.registry}) {
		next = t.c.withCert
	}
	r = r.Clone(r.Context())
	r.Header.Del("Authorization")
	if t.auth != "" && originOf(r.URL) == t.origin && (strings.EqualFold(r.URL.Scheme, "https") || isLoopback(r.URL.Hostname())) {
		r.Header.Set("Authorization", t.auth)
	}
	for try := 0; ; try++ {
		resp, err := next.RoundTrip(r)
		if try == len(registryRetries) || r.Method != http.MethodGet || !retryable(resp, err) {
			return resp, err
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, maxTokenBytes))
			resp.Body.Close()
		}
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(registryRetries[try]):
		}
	}
}

// registryRetries are the waits before a registry's GET is sent again,
// as go-containerregistry's client did: after a network flake, or an
// answer of a server busy or failing (retryable).
var registryRetries = []time.Duration{time.Second, 3 * time.Second}

func retryable(resp *http.Response, err error) bool {
	if err != nil {
		var temp interface{ Temporary() bool }
		return errors.As(err, &temp) && temp.Temporary() || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
			errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 499, 522:
		return true
	}
	return false
}

// allowed is nil for a request a registry's fetch may make, else why
// not.
func (t registryTransport) allowed(r *http.Request) error {
	scheme := strings.ToLower(r.URL.Scheme)
	if r.Response != nil { // a redirect
		from := strings.ToLower(r.Response.Request.URL.Scheme)
		if scheme == "http" && from == "https" && !(t.c.plainHTTP && isLoopback(r.URL.Hostname())) {
			return &redirectError{Target: Redact(r.URL.String()), Why: "https is never downgraded to plain http (only to a server on loopback, with --source-plain-http)"}
		}
		if scheme != "http" && scheme != "https" || r.URL.Host == "" {
			return t.c.followable(r.URL)
		}
	}
	return plainHTTPGuard{allow: t.c.plainHTTP}.check(r)
}
