package source

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ociRef is an OCI reference, every part written out: the registry
// (host[:port]), the repository, and a tag or a digest. The forms and
// rules are go-containerregistry's strict ones (name.StrictValidation),
// which the plugin took before it had its own client: docker.io is
// index.docker.io, whose repositories are written with their namespace
// (library/...).
type ociRef struct {
	registry, repo string
	tag, digest    string
}

// name is registry/repository, as the lock's pin names it.
func (r ociRef) name() string { return r.registry + "/" + r.repo }

// identifier is the tag or the digest, as a manifest's URL names it.
func (r ociRef) identifier() string {
	if r.digest != "" {
		return r.digest
	}
	return r.tag
}

const (
	dockerHub     = "index.docker.io"
	ociTagChars   = "abcdefghijklmnopqrstuvwxyz0123456789_-.ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	ociRepoChars  = "abcdefghijklmnopqrstuvwxyz0123456789_-./"
	ociDigestHelp = "not an OCI reference oci://registry/repository:tag or @sha256:digest"
)

// parseOCIRef parses registry/repository:tag, or @digest (a tag before
// the digest is ignored).
func parseOCIRef(s string) (ociRef, error) {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return ociRef{}, fmt.Errorf("%s: could not parse reference: %s (no URL scheme)", ociDigestHelp, s)
	}
	if r, err := parseOCITag(s); err == nil {
		return r, nil
	}
	if r, err := parseOCIDigest(s); err == nil {
		return r, nil
	}
	return ociRef{}, fmt.Errorf("%s: could not parse reference: %s", ociDigestHelp, s)
}

func parseOCITag(s string) (ociRef, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || strings.Contains(parts[len(parts)-1], "/") {
		return ociRef{}, errors.New("no tag")
	}
	tag := parts[len(parts)-1]
	if err := checkOCIElement(tag, ociTagChars, 1, 128); err != nil {
		return ociRef{}, err
	}
	r, err := parseOCIRepo(strings.Join(parts[:len(parts)-1], ":"))
	r.tag = tag
	return r, err
}

func parseOCIDigest(s string) (ociRef, error) {
	parts := strings.Split(s, "@")
	if len(parts) != 2 {
		return ociRef{}, errors.New("not one @")
	}
	base, digest := parts[0], parts[1]
	if !validDigest(digest) {
		return ociRef{}, errors.New("not a digest")
	}
	if t, err := parseOCITag(base); err == nil {
		base = t.name()
	}
	r, err := parseOCIRepo(base)
	r.digest = digest
	return r, err
}

// digestHex are the lengths of the encoded digests of the algorithms a
// reference may name (go-digest's): only sha256 is fetched.
var digestHex = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

var lowerHex = regexp.MustCompile(`^[a-f0-9]+$`)

func validDigest(d string) bool {
	alg, hex, ok := strings.Cut(d, ":")
	n, known := digestHex[alg]
	return ok && known && len(hex) == n && lowerHex.MatchString(hex)
}

// parseOCIRepo parses registry/repository: the registry is the first
// component when it has a dot or a port, or is localhost.
func parseOCIRepo(s string) (ociRef, error) {
	reg, repo, ok := strings.Cut(s, "/")
	if !ok || !(reg == "localhost" || strings.ContainsAny(reg, ".:")) {
		return ociRef{}, errors.New("no registry")
	}
	if err := checkOCIElement(repo, ociRepoChars, 1, 255); err != nil {
		return ociRef{}, err
	}
	if u, err := url.Parse("//" + reg); err != nil || u.Host != reg {
		return ociRef{}, errors.New("not a registry")
	}
	if reg == "docker.io" {
		reg = dockerHub
	}
	if reg == dockerHub && !strings.Contains(repo, "/") {
		return ociRef{}, errors.New("missing library/")
	}
	return ociRef{registry: reg, repo: repo}, nil
}

func checkOCIElement(s, allowed string, minRunes, maxRunes int) error {
	n := utf8.RuneCountInString(s)
	if n < minRunes || n > maxRunes {
		return errors.New("length")
	}
	for _, r := range s {
		if !strings.ContainsRune(allowed, r) {
			return errors.New("characters")
		}
	}
	return nil
}
