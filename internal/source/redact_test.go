package source

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

const testCRD = "kind: CustomResourceDefinition\n"

var testDigest = "sha256:" + strings.Repeat("0123456789abcdef", 4)

// inputError fails unless err is an input error (exit 2) whose message
// holds each of want.
func inputError(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	var se *Error
	if err == nil || !errors.As(err, &se) || !se.Input {
		t.Errorf("%s: %v, want an input error", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %v, want %q", what, err, w)
		}
	}
}

// Redact keeps the forms that hold an @ after their host, and removes a
// password however it is written: with a /, ?, #, space or bad escape
// (which url.Parse refuses, or reads as a host and a path), or a token
// with a / as the user name.
func TestRedactUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"oci://localhost:5000/repo@" + testDigest:                          "",
		"oci://user:secret@registry:5000/repo@" + testDigest:               "oci://registry:5000/repo@" + testDigest,
		"https://repo.example/charts#chart@1.2.3":                          "",
		"https://charts.jetstack.io#cert-manager@v1.16.0":                  "",
		"https://cdn.jsdelivr.net/gh/org/repo@v1.0/crd.yaml":               "",
		"https://user:secret@cdn.jsdelivr.net/gh/org/repo@v1.0/crd.yaml":   "https://cdn.jsdelivr.net/gh/org/repo@v1.0/crd.yaml",
		"https://cdn.jsdelivr.net/gh/org/repo@main/crd.yaml":               "",
		"https://unpkg.com/@scope/crds@1.2.3/crd.yaml":                     "",
		"https://example.com/crds/a@b.yaml":                                "",
		"https://user:pa/ss@host/x":                                        "https://host/x",
		"https://user:1234/5@reg.example/x":                                "https://reg.example/x",
		"https://user:/abc@host":                                           "https://host",
		"https://TOKEN/WITH/SLASH@host/x":                                  "https://host/x",
		"https://user:pa#ss@host.example/x":                                "https://host.example/x",
		"https://user:1234#5678@host.example/x":                            "https://host.example/x",
		"https://user:pa?ss@host.example/x":                                "https://host.example/x",
		"https://user:pa ss@host.example/x":                                "https://host.example/x",
		"https://user:pa%zzss@host.example/x":                              "https://host.example/x",
		"https://user:a@b.example/c@host.example/x":                        "https://host.example/x",
		"https://user:a@b.example/c@127.0.0.1:8443/x":                      "https://127.0.0.1:8443/x",
		"https://user:a/b@[::1]:8443/x":                                    "https://[::1]:8443/x",
		"oci://user:ab/cd+ef=@ghcr.io/org/crds:v1":                         "oci://ghcr.io/org/crds:v1",
		"oci://user:1234/5@ghcr.io/org/crds@" + testDigest:                 "oci://ghcr.io/org/crds@" + testDigest,
		"oci://dXNlcg/c2VjcmV0+Zm9v=@registry.example:5000/crds:v1":        "oci://registry.example:5000/crds:v1",
		"https://user:secret@host.example/a/b/c#chart@1.2.3":               "https://host.example/a/b/c#chart@1.2.3",
		"https://user:p@ss/w@rd@host.example/x":                            "https://host.example/x",
		"crds/local@v1.yaml":                                               "",
		"HTTPS://USER:PA/SS@HOST.EXAMPLE/X":                                "HTTPS://HOST.EXAMPLE/X",
		"https://user:pa/ss@host.example/gh/org/repo@v1.0/crd.yaml":        "https://host.example/gh/org/repo@v1.0/crd.yaml",
		"https://user:pa/ss@host.example:443/gh/org/repo@v1.0/crd.yaml#L1": "https://host.example:443/gh/org/repo@v1.0/crd.yaml#L1",
	} {
		if want == "" {
			want = in
		}
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A source whose password url.Parse refuses or reads as something else
// is refused before any request, and no message holds the password:
// the message says how to write it.
func TestSourcePasswordNeverPrinted(t *testing.T) {
	for src, secret := range map[string]string{
		"https://user:pa/ss@host.example/crds.yaml":          "pa/ss",
		"https://user:1234/5@host.example/crds.yaml":         "1234",
		"https://user:/abc@host.example/crds.yaml":           "/abc@",
		"https://TOKEN/WITH/SLASH@host.example/crds.yaml":    "TOKEN",
		"https://user:pa%zz@host.example/crds.yaml":          "pa%zz",
		"https://user:pa ss@host.example#chart@1.2.3":        "pa ss",
		"oci://user:ab/cd@host.example/crds:v1":              "ab/cd",
		"oci://user:1234/5@host.example/crds@" + testDigest:  "1234/5",
		"https://user:1234#5678@host.example/crds.yaml":      "1234",
		"https://user:a@b.example/cd@host.example/crds.yaml": "b.example/cd",
	} {
		f, err := New(Options{Dir: t.TempDir(), Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Files(context.Background(), src)
		f.Close()
		inputError(t, src, err, "percent-encoded")
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the message holds the password: %v", src, err)
		}
	}
}

// redactForms are the URLs FuzzRedact puts user information in (%s),
// https and oci, with and without a port, a fragment or a digest.
var redactForms = []string{
	"https://%s@host.example/crds.yaml",
	"https://%s@host.example:8443/v1/crds.yaml",
	"https://%s@host.example/charts#chart@1.2.3",
	"https://%s@host.example#chart",
	"https://%s@host.example/gh/org/repo@v1.0/crd.yaml",
	"https://%s@host.example",
	"oci://%s@host.example/org/crds:v1",
	"oci://%s@host.example:5000/org/crds@" + testDigest,
}

// FuzzRedact: for any user name and password (or a token as the user
// name) in any of redactForms, no substring of either of 4 bytes or more
// that is not in the rest of the input nor in the fixed words of the
// messages is in Redact's output, in the error of the Fetcher's Files
// for the source (offline with an empty cache, and with a lock that does
// not pin it), nor in the names of the files Files gives for a source
// the lock pins and the cache holds: what messages, the lock and the
// cache's refs hold of a source.
func FuzzRedact(f *testing.F) {
	for _, c := range []struct {
		user, password string
		asUser         bool
	}{
		{"user", "secret", false}, {"user", "pa/ss", false}, {"user", "1234/5", false}, {"user", "/abc", false},
		{"", "TOKEN/WITH/SLASH", true}, {"user", "pa#ss", false}, {"user", "pa?ss", false}, {"user", "pa ss", false},
		{"user", "pa%zzss", false}, {"user", "a@b.example/c", false}, {"user", "1234#5678", false},
		{"dXNlcg", "c2Vj/cmV0+Zm9v=", false}, {"", "ab/cd+ef=", true}, {"us.er", "5678/9abc", false},
	} {
		for form := range redactForms {
			f.Add(c.user, c.password, c.asUser, uint8(form))
		}
	}
	dir := f.TempDir()
	blob := []byte(testCRD)
	cache, err := openBlobs(dir, 64<<20)
	if err != nil {
		f.Fatal(err)
	}
	blobDigest, _, err := cache.put(blob)
	if err != nil {
		f.Fatal(err)
	}
	lockPath := filepath.Join(dir, "kubectl-crd.lock")
	// The fixed words of the messages Files gives here.
	vocabulary := strings.Join([]string{errNotAURL.Error(), errAmbiguousUserinfo.Error(), errNoHost.Error(),
		"not in the cache, and --offline fetches nothing: run once without --offline to fetch it",
		"not in the lock " + lockPath + " (--update-lock adds it)", "is not in the cache", blobDigest, dir}, "\n")
	f.Fuzz(func(t *testing.T, user, password string, asUser bool, form uint8) {
		if len(user) > 64 || len(password) > 64 {
			return
		}
		pattern := redactForms[int(form)%len(redactForms)]
		info, secrets := user+":"+password, []string{user, password}
		if asUser {
			info, secrets = password, []string{password}
		}
		src := fmt.Sprintf(pattern, info)
		rest := fmt.Sprintf(pattern, "") + "\n" + vocabulary
		check := func(what, out string) {
			for _, s := range secrets {
				for i := 0; i+4 <= len(s); i++ {
					for j := i + 4; j <= len(s); j++ {
						if sub := s[i:j]; !strings.Contains(rest, sub) && strings.Contains(out, sub) {
							t.Fatalf("%s of %q holds %q of a secret: %q", what, src, sub, out)
						}
					}
				}
			}
		}
		name := Redact(src)
		check("Redact", name)
		files := func(lock *Lock) ([]File, error) {
			fe, err := New(Options{Dir: dir, Offline: true, Lock: lock})
			if err != nil {
				t.Fatal(err)
			}
			defer fe.Close()
			return fe.Files(context.Background(), src)
		}
		for _, lock := range []*Lock{nil, {Path: lockPath, LockVersion: LockVersion}} {
			_, err := files(lock)
			var se *Error
			if err == nil || !errors.As(err, &se) {
				t.Fatalf("%s: %v, want an *Error", src, err)
			}
			check("the error's source", se.Source)
			check("the error", se.Err.Error())
		}
		if strings.HasSuffix(pattern, ".yaml") {
			lock := &Lock{Path: lockPath, LockVersion: LockVersion, Sources: []Pin{{Source: name, Digest: blobDigest}}}
			got, err := files(lock)
			var se *Error
			switch {
			case errors.As(err, &se):
				check("the error's source", se.Source)
				check("the error", se.Err.Error())
			case err != nil || len(got) != 1:
				t.Fatalf("%s by the lock: %v %v", src, got, err)
			default:
				check("the file's name", got[0].Name)
			}
		}
	})
}
