package source

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// dualServer is a server on loopback that answers https and plain http
// on the same port (by the first byte a client sends: a TLS handshake's
// is 0x16), as https://host and http://host:443 would be the same host
// to a client that compares hosts; it records what each request showed.
type dualServer struct {
	recorder
	addr string
}

func newDualServer(t *testing.T, h http.HandlerFunc) *dualServer {
	t.Helper()
	d := &dualServer{}
	ts := httptest.NewUnstartedServer(nil) // for its certificate
	ts.StartTLS()
	cfg := ts.TLS.Clone()
	ts.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.addr = l.Addr().String()
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.seen = append(d.seen, seenRequest{path: r.URL.Path, auth: r.Header.Get("Authorization"), cert: r.TLS != nil})
		d.mu.Unlock()
		h(w, r)
	})}
	go srv.Serve(sniffListener{Listener: l, tls: cfg})
	t.Cleanup(func() { srv.Close() })
	return d
}

// sniffListener hands out TLS connections for clients that begin with a
// handshake, plain ones else.
type sniffListener struct {
	net.Listener
	tls *tls.Config
}

func (l sniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	pc := &peekedConn{Conn: c, r: br}
	if err == nil && first[0] == 0x16 {
		return tls.Server(pc, l.tls), nil
	}
	return pc, nil
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// chartRepo is a chart repository on a dualServer: index.yaml, as set,
// and the archive at /keda-1.0.0.tgz.
type chartRepo struct {
	*dualServer
	mu    sync.Mutex
	index string
}

var testArchive = []byte("the bytes of a chart's archive")

func testArchiveDigest() string {
	sum := sha256.Sum256(testArchive)
	return hex.EncodeToString(sum[:])
}

func newChartRepo(t *testing.T) *chartRepo {
	r := &chartRepo{}
	r.dualServer = newDualServer(t, func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/index.yaml":
			r.mu.Lock()
			io.WriteString(w, r.index)
			r.mu.Unlock()
		case "/keda-1.0.0.tgz":
			w.Write(testArchive)
		default:
			http.NotFound(w, req)
		}
	})
	return r
}

// setIndex serves an index of keda 1.0.0 at url, with digest.
func (r *chartRepo) setIndex(url, digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.index = "apiVersion: v1\nentries:\n  keda:\n  - name: keda\n    version: 1.0.0\n    urls:\n    - " + url + "\n"
	if digest != "" {
		r.index += "    digest: " + digest + "\n"
	}
}

// A chart repository's archive: fetched with the repository's
// credentials from the repository's origin; from another https origin
// without them (with pass_credentials_all, with them); by plain http
// refused, even of the same host and port (but on loopback with
// --source-plain-http, without credentials); an index entry without a
// digest, or with another's, refused.
func TestChartRepositoryArchive(t *testing.T) {
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	repo := newChartRepo(t)
	other := newRecorder(t, true, func(w http.ResponseWriter, _ *http.Request) { w.Write(testArchive) })
	plain := newRecorder(t, false, func(w http.ResponseWriter, _ *http.Request) { w.Write(testArchive) })
	src := "https://user:secret@" + repo.addr + "#keda@1.0.0"
	basic := "Basic dXNlcjpzZWNyZXQ=" // user:secret
	digest := testArchiveDigest()
	fetch := func(opts Options, src string) error {
		f, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, _, err = helmRepoKind{}.fetch(context.Background(), f, src, Redact(src))
		return err
	}
	for _, c := range []struct {
		what, url, digest string
		plainHTTP         bool
		want              string // "" for success
		srv               interface{ requests() []seenRequest }
		auth              string // what the archive's server saw
	}{
		{"the same origin", "keda-1.0.0.tgz", digest, false, "", repo, basic},
		{"the same origin, sha256:", "https://" + repo.addr + "/keda-1.0.0.tgz", "sha256:" + digest, false, "", repo, basic},
		{"another https origin", other.URL + "/keda-1.0.0.tgz", digest, false, "", other, ""},
		{"plain http, the same host and port", "http://" + repo.addr + "/keda-1.0.0.tgz", digest, false,
			"names the archive of chart keda 1.0.0 by http://" + repo.addr + "/keda-1.0.0.tgz: https is never downgraded", repo, ""},
		{"plain http elsewhere", plain.URL + "/keda-1.0.0.tgz", digest, false, "https is never downgraded", plain, ""},
		{"plain http, --source-plain-http", plain.URL + "/keda-1.0.0.tgz", digest, true, "", plain, ""},
		{"no digest", "keda-1.0.0.tgz", "", false, "the repository's index.yaml gives no digest of chart keda 1.0.0: its archive could not be verified", repo, ""},
		{"no sha256", "keda-1.0.0.tgz", "abc", false, "a digest that is no sha256", repo, ""},
		{"another digest", "keda-1.0.0.tgz", strings.Repeat("ab", 32), false, "digest sha256:" + digest + ", not the sha256:" + strings.Repeat("ab", 32), repo, basic},
		{"a file", "file:///etc/passwd", digest, false, "names the archive of chart keda 1.0.0 by file:///etc/passwd: only https:// is followed", repo, ""},
	} {
		repo.setIndex(c.url, c.digest)
		repo.reset()
		other.reset()
		plain.reset()
		err := fetch(Options{Insecure: true, PlainHTTP: c.plainHTTP}, src)
		if c.want == "" && err != nil {
			t.Errorf("%s: %v", c.what, err)
		} else if c.want != "" {
			inputError(t, c.what, err, c.want)
		}
		var archive []seenRequest
		for _, r := range c.srv.requests() {
			if r.path != "/index.yaml" {
				archive = append(archive, r)
			}
		}
		switch {
		case c.want != "" && c.auth == "" && len(archive) != 0:
			t.Errorf("%s: the archive was asked for: %+v", c.what, archive)
		case (c.want == "" || c.auth != "") && (len(archive) != 1 || archive[0].auth != c.auth):
			t.Errorf("%s: the archive's server saw %+v, want one request with Authorization %q", c.what, archive, c.auth)
		}
	}
	for _, r := range repo.requests() {
		if r.path == "/index.yaml" && (r.auth != basic || !r.cert) {
			t.Errorf("index.yaml: %+v, want the credentials over https", r)
		}
	}

	// pass_credentials_all: the credentials go to another https origin, never
	// over plain http.
	config := filepath.Join(t.TempDir(), "repositories.yaml")
	entry := fmt.Sprintf("repositories:\n- name: r\n  url: https://%s\n  username: user\n  password: secret\n  pass_credentials_all: true\n", repo.addr)
	if err := os.WriteFile(config, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HELM_REPOSITORY_CONFIG", config)
	bare := "https://" + repo.addr + "#keda@1.0.0"
	for _, c := range []struct {
		srv  *recorder
		auth string
	}{{other, basic}, {plain, ""}} {
		c.srv.reset()
		repo.setIndex(c.srv.URL+"/keda-1.0.0.tgz", digest)
		if err := fetch(Options{Insecure: true, PlainHTTP: true}, bare); err != nil {
			t.Fatalf("pass_credentials_all, %s: %v", c.srv.URL, err)
		}
		if got := c.srv.requests(); len(got) != 1 || got[0].auth != c.auth {
			t.Errorf("pass_credentials_all, %s: %+v, want Authorization %q", c.srv.URL, got, c.auth)
		}
	}
}
