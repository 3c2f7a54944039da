package source

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// Redact is a source argument as messages, the lock and the cache name
// it: without the user information of its URL (user:password@). Where
// that information ends is decided on the text, before any parse and
// whether or not the URL parses: a password with a /, ?, #, space or a
// bad % escape makes url.Parse fail (and its errors quote the URL), a
// password of digits then a / (https://user:1234/5@host/x) or a token
// with a / as the user name (https://TOKEN/WITH/SLASH@host/x) makes it
// read a host that is not one. The rule:
//
// The user information is everything between :// and the last @ that
// may end it, that @ included. An @ may end it when it is
//
//   - the last @ before the first /, ? or #: where url.Parse takes it;
//   - followed by a host, then the end, /, ? or #. A host is a name of
//     two labels or more whose last label is neither all digits nor
//     yaml, yml, json or tgz, an IPv4 address, an [IPv6] address,
//     localhost, or any name with a :port;
//   - followed by a name of one label without a port (https://T/K@host),
//     when the host url.Parse finds is not a host as above, or when the
//     URL does not parse;
//   - the last @ of a URL that does not parse and has no @ as above.
//
// So a password holding /, ?, # or @ is cut off with the rest of the
// user information however it goes on, and what an @ after the host
// begins in the forms that hold one is no host: a digest
// (oci://localhost:5000/repo@sha256:...), a chart's version
// (https://repo.example/charts#chart@1.2.3), a release of a CDN's path
// (https://cdn.jsdelivr.net/gh/org/repo@v1.0/crd.yaml) and a file
// (a@b.yaml); they are printed whole. What the rule cannot tell is a
// password of the form 1234/x followed by a host of one label without
// a port and a user name that is a host (u.example:1234/x@intranet).
// A URL whose user information, so found, is not where url.Parse finds
// it is refused (errAmbiguousUserinfo), before anything is asked of
// the network: the host url.Parse read would be a piece of a password.
func Redact(arg string) string {
	start, at, _ := cutUserinfo(arg)
	if at < 0 {
		return arg
	}
	return arg[:start] + arg[start+at+1:]
}

// errAmbiguousUserinfo is a URL where an @ after its host may end its
// user information (Redact), and errNotAURL one that does not parse:
// their words quote nothing of the URL.
var (
	errAmbiguousUserinfo = errors.New("an @ after the host may end user information whose password holds a /, ? or #: " +
		"write a password's or a user name's /, ?, #, @ and % percent-encoded (%2F, %3F, %23, %40, %25), " +
		"or an @ of the path as %40 (what comes before the @ is not printed)")
	errNotAURL = errors.New("not a URL that parses: a password's or a user name's /, ?, #, @, % and spaces are written " +
		"percent-encoded (%2F, %3F, %23, %40, %25, %20); user information, if any, is not printed")
	errNoHost = errors.New("a URL without a host")
)

// cutUserinfo finds the user information of a source argument by
// Redact's rule: start is where it begins (after ://), at the index of
// the @ that ends it in arg[start:] (-1 when there is none), and
// ambiguous says that url.Parse would end it elsewhere.
func cutUserinfo(arg string) (start, at int, ambiguous bool) {
	i := strings.Index(arg, "://")
	if i < 0 {
		return 0, -1, false
	}
	start = i + 3
	rest := arg[start:]
	authority := len(rest)
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		authority = j
	}
	parsed := strings.LastIndex(rest[:authority], "@")
	_, err := url.Parse(arg)
	oneLabel := err != nil || hostAt(rest[parsed+1:]) != hostFull
	at = parsed
	for j := parsed + 1; j < len(rest); j++ {
		if rest[j] != '@' {
			continue
		}
		switch hostAt(rest[j+1:]) {
		case hostFull:
			at = j
		case hostOneLabel:
			if oneLabel {
				at = j
			}
		}
	}
	if err != nil && at == parsed {
		at = strings.LastIndex(rest, "@")
	}
	return start, at, at != parsed
}

// A hostKind is what the text after an @ begins with.
type hostKind int

const (
	hostNone     hostKind = iota
	hostOneLabel          // a name of one label, without a port
	hostFull              // a host by Redact's rule
)

// hostAt says whether s begins with a host and an optional port, then
// ends or goes on with /, ? or #.
func hostAt(s string) hostKind {
	if j := strings.IndexAny(s, "/?#"); j >= 0 {
		s = s[:j]
	}
	host, port, hasPort := s, "", false
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return hostNone
		}
		host, port = s[1:end], s[end+1:]
		if port != "" && port[0] != ':' {
			return hostNone
		}
		if !validPort(strings.TrimPrefix(port, ":")) || net.ParseIP(strings.Split(host, "%")[0]) == nil {
			return hostNone
		}
		return hostFull
	}
	if j := strings.LastIndex(s, ":"); j >= 0 {
		host, port = s[:j], s[j+1:]
		hasPort = port != "" // host: is a host of the default port
		if !validPort(port) {
			return hostNone
		}
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	for _, l := range labels {
		if l == "" || strings.IndexFunc(l, func(r rune) bool { return !isLabelRune(r) }) >= 0 {
			return hostNone
		}
	}
	last := strings.ToLower(labels[len(labels)-1])
	switch {
	case len(labels) == 4 && net.ParseIP(host) != nil:
		return hostFull
	case len(labels) == 1 && (hasPort || last == "localhost"):
		return hostFull
	case len(labels) == 1:
		return hostOneLabel
	case allDigits(last), last == "yaml", last == "yml", last == "json", last == "tgz":
		return hostNone
	}
	return hostFull
}

// isLabelRune says whether r may be in a label of a host name as a URL
// writes it: letters, digits, - and _, and any letter beyond ASCII (an
// internationalized name).
func isLabelRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r >= 0x80
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// validPort says whether p is a port as a URL writes one: at most five
// digits, or none.
func validPort(p string) bool {
	return len(p) <= 5 && (p == "" || allDigits(p))
}

// parseSource parses a source's URL, without its user information
// (returned apart): an error, which quotes nothing of the URL, for one
// that does not parse, whose user information is ambiguous (Redact), or
// that has no host.
func parseSource(arg string) (*url.URL, *url.Userinfo, error) {
	u, err := url.Parse(arg)
	if err != nil {
		return nil, nil, errNotAURL
	}
	if _, _, ambiguous := cutUserinfo(arg); ambiguous {
		return nil, nil, errAmbiguousUserinfo
	}
	user := u.User
	u.User = nil
	if u.Host == "" {
		return nil, nil, errNoHost
	}
	return u, user, nil
}
