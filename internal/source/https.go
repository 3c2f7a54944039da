package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// client is the HTTP client of every fetch: the proxy of the environment,
// the system's certificates and CAFile's, a timeout at each step, and the
// rules of credentials and redirects (origin.go).
type client struct {
	// bare shows no client certificate; withCert shows the client
	// certificate to the servers that ask for one, and is nil without
	// one: it serves the origin of the source alone.
	bare, withCert http.RoundTripper
	timeout        time.Duration
	maxBytes       int64
	clientCert     bool // a client certificate is shown to servers that ask
	// plainHTTP: a redirect to plain http on loopback is followed, and an
	// OCI registry elsewhere is reached without TLS.
	plainHTTP bool
}

func newClient(opts Options) (*client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.Insecure}
	if opts.CAFile != "" {
		pem, err := fileread.Read(opts.CAFile)
		if err != nil {
			return nil, err
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate", opts.CAFile)
		}
		tlsConfig.RootCAs = pool
	}
	if opts.ClientCertFile != "" {
		cert, err := clientCertificate(opts.ClientCertFile, opts.ClientKeyFile)
		if err != nil {
			return nil, err
		}
		tlsConfig.Certificates = []tls.Certificate{cert}
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	c := &client{bare: transport, timeout: opts.Timeout, maxBytes: maxBytes, plainHTTP: opts.PlainHTTP}
	if len(tlsConfig.Certificates) > 0 {
		bare := transport.Clone()
		bare.TLSClientConfig.Certificates = nil
		c.bare, c.withCert, c.clientCert = bare, transport, true
	}
	return c, nil
}

// clientCertificate is the certificate of certFile with the key of
// keyFile (certFile's own when ""). Its errors name the files and never
// quote them: a key is no message's.
func clientCertificate(certFile, keyFile string) (tls.Certificate, error) {
	if keyFile == "" {
		keyFile = certFile
	}
	certPEM, err := fileread.Read(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the client certificate: %w", err)
	}
	keyPEM, err := fileread.Read(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the client key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// crypto/tls's messages say what is wrong (no PEM data, a key of
		// another certificate) without the content.
		return tls.Certificate{}, fmt.Errorf("the client certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}

// httpsKind is a file (a YAML or JSON document, or a stream of them) at an
// https URL.
type httpsKind struct{}

func (httpsKind) fetch(ctx context.Context, f *Fetcher, arg, name string) (Pin, []File, error) {
	u, user, err := parseSource(arg)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	data, final, err := f.client.get(ctx, u, creds{origin: originOf(u), user: user}, name)
	if err != nil {
		return Pin{}, nil, err
	}
	digest, path, err := f.cache.put(data)
	if err != nil {
		return Pin{}, nil, err
	}
	pin := Pin{Source: name, Digest: digest}
	if final != name {
		pin.Resolved = final
	}
	return pin, []File{{Path: path, Name: name}}, nil
}

func (httpsKind) cached(c *blobs, name, digest string) ([]File, bool) {
	p, ok := c.has(digest)
	if !ok {
		return nil, false
	}
	return []File{{Path: p, Name: name}}, true
}

// get is the body of a GET of u (which has no user information), at
// most maxBytes, and the URL it came from after redirects (credentials
// removed, and the query of a redirect: a release asset's is a signature
// that expires, which a lock must neither hold nor change with). The
// credentials of cr go to their origin alone (client.do); a redirect
// that checkRedirect refuses is an input error.
func (c *client) get(ctx context.Context, u *url.URL, cr creds, name string) ([]byte, string, error) {
	return c.getAtMost(ctx, u, cr, name, c.maxBytes, "the limit of a fetch")
}

// getAtMost is get with a bound of its own, which limit names.
func (c *client) getAtMost(ctx context.Context, u *url.URL, cr creds, name string, maxBytes int64, limit string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", &Error{Source: name, Input: true, Err: errNotAURL}
	}
	resp, err := c.do(req, cr)
	if err != nil {
		var re *redirectError
		if errors.As(err, &re) {
			return nil, "", &Error{Source: name, Input: true, Err: re}
		}
		return nil, "", c.netError(name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", &Error{Source: name, Input: resp.StatusCode < 500, Err: fmt.Errorf("the server answered %s", resp.Status)}
	}
	if resp.ContentLength > maxBytes { // refused before it is read
		return nil, "", &Error{Source: name, Input: true, Err: fmt.Errorf("larger than %d MiB, %s", maxBytes>>20, limit)}
	}
	data, err := readAtMost(resp.Body, name, maxBytes, limit)
	if err != nil {
		return nil, "", err
	}
	final := *resp.Request.URL
	if final.String() != u.String() {
		final.RawQuery, final.ForceQuery = "", false
	}
	return data, Redact(final.String()), nil
}

// readAtMost reads a body of at most maxBytes, which limit names.
func readAtMost(body io.Reader, name string, maxBytes int64, limit string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxBytes+1))
	if err != nil {
		return nil, &Error{Source: name, Err: unwrapURL(err)}
	}
	if int64(len(data)) > maxBytes {
		return nil, &Error{Source: name, Input: true, Err: fmt.Errorf("larger than %d MiB, %s", maxBytes>>20, limit)}
	}
	return data, nil
}

// netError is an error of the connection to a source: the network's or
// the machine's (exit 3), unless the server refused the TLS handshake for
// want of a client certificate it trusts (tlsRefusal).
func (c *client) netError(name string, err error) error {
	if re := c.tlsRefusal(name, err); re != nil {
		return re
	}
	return &Error{Source: name, Err: unwrapURL(err)}
}

// tlsRefusal is an input error (exit 2, as a 401 is) when err is a
// server's refusal of the TLS handshake for want of a client certificate
// it trusts, else nil.
func (c *client) tlsRefusal(name string, err error) *Error {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" {
		return nil
	}
	switch alert := oe.Err.Error(); {
	case !c.clientCert && (alert == "tls: certificate required" || alert == "tls: bad certificate"):
		return &Error{Source: name, Input: true, Err: fmt.Errorf("the server asks for a client certificate, and none was given (--source-client-certificate): %w", oe)}
	case c.clientCert && strings.Contains(alert, "certificate"):
		return &Error{Source: name, Input: true, Err: fmt.Errorf("the server refused the client certificate: %w", oe)}
	}
	return nil
}

// unwrapURL drops the *url.Error around err: it names the URL, which the
// Error names already, without its credentials.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}
