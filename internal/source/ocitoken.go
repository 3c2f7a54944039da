package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// token is a bearer token of the registry's token service (the realm of
// its challenge), as docker and go-containerregistry get one: a registry
// token is one already; an identity token is exchanged by OAuth2's
// refresh_token grant (POST), falling back to the GET when the service
// has no such endpoint (404); else the GET with basic credentials, or
// anonymous. The realm is https but on loopback.
func (r *registryClient) token(ctx context.Context) (string, error) {
	if r.cred.registryToken != "" {
		return r.cred.registryToken, nil
	}
	realm, err := url.Parse(r.challenge.params["realm"])
	if err != nil || realm.Host == "" || realm.User != nil {
		return "", &Error{Input: true, Err: errors.New("the registry's challenge names no token service URL")}
	}
	if err := r.validRealm(realm); err != nil {
		return "", &Error{Input: true, Err: err}
	}
	var resp *http.Response
	if r.cred.identityToken != "" {
		resp, err = r.tokenPOST(ctx, realm)
		if err == nil && resp.StatusCode == http.StatusNotFound {
			resp.Body.Close()
			resp, err = r.tokenGET(ctx, realm)
		}
	} else {
		resp, err = r.tokenGET(ctx, realm)
	}
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", newRegistryError(resp)
	}
	var tok struct {
		Token        string `json:"token"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxTokenBytes)).Decode(&tok); err != nil {
		return "", fmt.Errorf("the answer of the token service %s: %w", realm.Host, err)
	}
	if tok.AccessToken != "" {
		tok.Token = tok.AccessToken
	}
	if tok.Token == "" {
		return "", fmt.Errorf("the token service %s answered no token", realm.Host)
	}
	if tok.RefreshToken != "" {
		r.cred = ociCred{identityToken: tok.RefreshToken}
	}
	return tok.Token, nil
}

func (r *registryClient) tokenGET(ctx context.Context, realm *url.URL) (*http.Response, error) {
	u := *realm
	q := u.Query()
	if s := r.challenge.params["service"]; s != "" {
		q.Set("service", s)
	}
	for _, s := range r.scopes {
		q.Add("scope", s)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	auth := ""
	if r.cred.user != "" || r.cred.pass != "" {
		auth = basicAuth(r.cred.user, r.cred.pass)
	}
	return r.realmClient(realm, auth).Do(req)
}

func (r *registryClient) tokenPOST(ctx context.Context, realm *url.URL) (*http.Response, error) {
	form := url.Values{}
	form.Set("scope", strings.Join(r.scopes, " "))
	if s := r.challenge.params["service"]; s != "" {
		form.Set("service", s)
	}
	form.Set("client_id", "kubectl-crd")
	form.Set("grant_type", "refresh_token")
	form.Set("refresh_token", r.cred.identityToken)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, realm.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r.realmClient(realm, "").Do(req)
}

// validRealm is nil for a token service the run may ask: over https, or
// plain http where the registry itself is (loopback, --source-plain-http;
// credentials go over plain http to loopback alone); on the registry's
// own host and port, or a host that is no IP address of loopback, a
// private or link-local network (the cloud's metadata service), as
// go-containerregistry has it.
func (r *registryClient) validRealm(realm *url.URL) error {
	where := Redact(realm.Scheme + "://" + realm.Host + realm.Path)
	switch s := strings.ToLower(realm.Scheme); {
	case s == "https":
	case s == "http" && (r.scheme == "http" || isLoopback(realm.Hostname())):
	default:
		return fmt.Errorf("the registry's token service %s: not https (plain http only where the registry is reached by it)", where)
	}
	if strings.EqualFold(realm.Host, r.ref.registry) {
		return nil
	}
	if ip, ok := parseIPLiteral(realm.Hostname()); ok && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsUnspecified()) {
		return fmt.Errorf("the registry's token service %s: a loopback, private or link-local address other than the registry's", where)
	}
	return nil
}

// parseIPLiteral parses an IP address, IPv4's legacy forms included
// (0x7f.1, 2130706433), which a resolver may take as one.
func parseIPLiteral(host string) (netip.Addr, bool) {
	host, _, _ = strings.Cut(host, "%")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.WithZone("").Unmap(), true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, part := range parts[:len(parts)-1] {
		v, err := strconv.ParseUint(part, 0, 8)
		if err != nil {
			return netip.Addr{}, false
		}
		b[i] = byte(v)
	}
	last, err := strconv.ParseUint(parts[len(parts)-1], 0, [...]int{32, 24, 16, 8}[len(parts)-1])
	if err != nil {
		return netip.Addr{}, false
	}
	for i := len(parts) - 1; i < 4; i++ {
		b[i] = byte(last >> (8 * (3 - i)))
	}
	return netip.AddrFrom4(b), true
}

// realmClient sends the requests of the token service: auth to the
// realm's origin alone (not along a redirect elsewhere), no client
// certificate.
func (r *registryClient) realmClient(realm *url.URL, auth string) *http.Client {
	t := registryTransport{c: r.c, registry: r.ref.registry, auth: auth, origin: originOf(realm), noCert: true}
	return &http.Client{Transport: t, Timeout: r.c.timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return &redirectError{Target: Redact(req.URL.String()), Why: fmt.Sprintf("a redirect after %d: not followed", maxRedirects)}
		}
		// A POST's form holds the identity token: a redirect of it is
		// not followed.
		if via[0].Method == http.MethodPost {
			return http.ErrUseLastResponse
		}
		if err := r.validRealm(req.URL); err != nil {
			return &redirectError{Target: Redact(req.URL.String()), Why: err.Error()}
		}
		return nil
	}}
}

// pickChallenge is the Bearer challenge of a registry's answer, else
// its Basic one, else nil.
func pickChallenge(headers []string) *ociChallenge {
	var basic *ociChallenge
	for _, h := range headers {
		for _, c := range parseChallenges(h) {
			switch c.scheme {
			case "bearer":
				return c
			case "basic":
				if basic == nil {
					basic = c
				}
			}
		}
	}
	return basic
}

// parseChallenges parses a WWW-Authenticate header (RFC 7235): schemes,
// each with its parameters, name=token or name="quoted string".
func parseChallenges(h string) []*ociChallenge {
	var out []*ociChallenge
	var cur *ociChallenge
	s := h
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return out
		}
		tok := s[:tokenEnd(s)]
		if tok == "" {
			return out
		}
		rest := strings.TrimLeft(s[len(tok):], " \t")
		if !strings.HasPrefix(rest, "=") || cur == nil {
			// A new scheme (a token68 after it is skipped with the
			// parameters it cannot have).
			cur = &ociChallenge{scheme: strings.ToLower(tok), params: map[string]string{}}
			out = append(out, cur)
			s = rest
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			val, rest = quotedString(rest)
		} else {
			n := tokenEnd(rest)
			val, rest = rest[:n], rest[n:]
		}
		cur.params[strings.ToLower(tok)] = val
		s = rest
	}
}

// tokenEnd is the length of the token at the start of s.
func tokenEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(" \t,=\"", s[i]) >= 0 {
			return i
		}
	}
	return len(s)
}

// quotedString is the value of the quoted string at the start of s, and
// what follows it.
func quotedString(s string) (string, string) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}
