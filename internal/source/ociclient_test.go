package source

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// The registry client (ociclient.go, ocitoken.go, dockerconfig.go)
// against go-containerregistry's registry behind the authentication of
// a test, and against registries of a test's own making.

// tokenHandler is a token service: it gives token for the credentials
// of user:secret, or for the identity token "refresh-me" by the
// refresh_token grant; it records the forms it got.
func tokenHandler(token string, forms *[]string) http.HandlerFunc {
	var mu sync.Mutex
	return func(w http.ResponseWriter, r *http.Request) {
		ok := false
		switch r.Method {
		case http.MethodGet:
			user, pass, basic := r.BasicAuth()
			ok = basic && user == "user" && pass == "secret" && r.URL.Query().Get("scope") == "repository:crds:pull" &&
				r.URL.Query().Get("service") == "test-registry"
		case http.MethodPost:
			r.ParseForm()
			mu.Lock()
			*forms = append(*forms, r.PostForm.Encode())
			mu.Unlock()
			ok = r.PostForm.Get("grant_type") == "refresh_token" && r.PostForm.Get("refresh_token") == "refresh-me" &&
				r.PostForm.Get("scope") == "repository:crds:pull" && r.PostForm.Get("service") == "test-registry"
		}
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"token": token})
	}
}

// bearerRegistry is go-containerregistry's registry over TLS that takes
// the Bearer token alone, its challenge naming realm (its own /token,
// which tokens serves, when ""); its blobs redirect to storage.
func bearerRegistry(t *testing.T, realm, token string, tokens http.HandlerFunc, storage *recorder, blobs map[string]string) *recorder {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var srv *recorder
	srv = newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			tokens(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			at := realm
			if at == "" {
				at = srv.URL + "/token"
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+at+`",service="test-registry",scope="repository:crds:pull"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		for digest := range blobs {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+digest) {
				http.Redirect(w, r, storage.URL+"/blob/"+digest, http.StatusTemporaryRedirect)
				return
			}
		}
		reg.ServeHTTP(w, r)
	})
	return srv
}

// pushTLS pushes files to the registry at host (TLS, the token of auth)
// through go-containerregistry's client, and returns the layers' digests
// and contents.
func pushTLS(t *testing.T, host, bearer string, files ...string) map[string]string {
	t.Helper()
	m, blobs := artifactOf(files...)
	put := func(method, path, contentType string, body []byte) {
		req, _ := http.NewRequest(method, "https://"+host+path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", contentType)
		resp, err := insecureHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %s", method, path, resp.Status)
		}
	}
	for d, data := range blobs {
		put(http.MethodPost, "/v2/crds/blobs/uploads/?digest="+d, "application/octet-stream", []byte(data))
	}
	put(http.MethodPut, "/v2/crds/manifests/v1", ociManifestType, m)
	return blobs
}

var insecureHTTP = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// artifactOf is the manifest of an artifact of files (title, content),
// as oras pushes it, and its blobs by digest.
func artifactOf(files ...string) ([]byte, map[string]string) {
	blobs := map[string]string{sha256Digest([]byte("{}")): "{}"}
	m := ociManifest{SchemaVersion: 2, MediaType: ociManifestType,
		Config: descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: sha256Digest([]byte("{}")), Size: 2}}
	for i := 0; i+1 < len(files); i += 2 {
		d := sha256Digest([]byte(files[i+1]))
		blobs[d] = files[i+1]
		m.Layers = append(m.Layers, descriptor{MediaType: "application/yaml", Digest: d, Size: int64(len(files[i+1])),
			Annotations: map[string]string{ociTitle: files[i]}})
	}
	data, _ := json.Marshal(m)
	return data, blobs
}

// writeDockerConfig writes config as $DOCKER_CONFIG/config.json of the
// test, and no other config is read.
func writeDockerConfig(t *testing.T, config string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", "")
}

// The distribution spec's token flow: the registry's challenge names its
// token service; the run gets a token there with the Docker config's
// basic credentials, or by the refresh_token grant of an identity token,
// and pulls with it. The credentials go to the token service alone, the
// token to the registry alone: the storage that the blobs redirect to
// gets neither. A token service on another port of loopback (an address
// of the machine's, not the registry's) is not asked.
func TestOCIBearerToken(t *testing.T) {
	storageBlobs := map[string]string{}
	storage := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, storageBlobs[strings.TrimPrefix(r.URL.Path, "/blob/")])
	})
	var forms []string
	srv := bearerRegistry(t, "", "tok-123", tokenHandler("tok-123", &forms), storage, storageBlobs)
	host := strings.TrimPrefix(srv.URL, "https://")
	for d, data := range pushTLS(t, host, "tok-123", "a.yaml", crdA) {
		if data == crdA {
			storageBlobs[d] = data
		}
	}
	src := "oci://" + host + "/crds:v1"
	for _, c := range []struct{ what, config string }{
		{"basic credentials", `{"auths": {"` + host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("user:secret")) + `"}}}`},
		{"an identity token", `{"auths": {"https://` + host + `/v1/": {"identitytoken": "refresh-me"}}}`},
	} {
		writeDockerConfig(t, c.config)
		srv.reset()
		storage.reset()
		files, err := run(t, Options{}, "", src)
		wantFiles(t, c.what, files, err, src+"/a.yaml", crdA)
		tokenAsked := false
		for _, r := range srv.requests() {
			tokenAsked = tokenAsked || r.path == "/token"
			if r.path != "/token" && r.auth != "" && r.auth != "Bearer tok-123" {
				t.Errorf("%s: the registry got %q at %s", c.what, r.auth, r.path)
			}
		}
		if !tokenAsked {
			t.Errorf("%s: the token service was not asked", c.what)
		}
		if got := storage.requests(); len(got) != 1 || got[0].auth != "" {
			t.Errorf("%s: the storage saw %+v, want one request without credentials", c.what, got)
		}
	}
	if len(forms) != 1 || !strings.Contains(forms[0], "client_id=kubectl-crd") {
		t.Errorf("the refresh_token grant: %q", forms)
	}

	writeDockerConfig(t, `{"auths": {"`+host+`": {"username": "user", "password": "wrong"}}}`)
	_, err := run(t, Options{}, "", src)
	wantInputError(t, "wrong credentials", err, src+": the registry refused the credentials for "+host, "GET "+srv.URL+"/token: unexpected status code 401")
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error quotes the password: %v", err)
	}

	elsewhere := newRecorder(t, true, tokenHandler("tok-123", &forms))
	other := bearerRegistry(t, elsewhere.URL+"/token", "tok-123", nil, storage, nil)
	writeDockerConfig(t, `{"auths": {"`+strings.TrimPrefix(other.URL, "https://")+`": {"username": "user", "password": "secret"}}}`)
	_, err = run(t, Options{}, "", "oci://"+strings.TrimPrefix(other.URL, "https://")+"/crds:v1")
	wantInputError(t, "a token service on loopback elsewhere", err, "the registry's token service "+elsewhere.URL+"/token: a loopback, private or link-local address other than the registry's")
	if got := elsewhere.requests(); len(got) != 0 {
		t.Errorf("the token service elsewhere on loopback was asked: %+v", got)
	}
}

// A token service over plain http elsewhere than loopback is never
// asked when the registry is reached over https.
func TestOCITokenRealmPlainHTTP(t *testing.T) {
	reg := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="http://auth.example/token",service="s"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	src := "oci://user:secret@" + strings.TrimPrefix(reg.URL, "https://") + "/crds:v1"
	_, err := run(t, Options{}, "", src)
	wantInputError(t, "a realm over http", err, "the registry's token service http://auth.example/token: not https")
}

// The Docker config's forms: auth (base64 user:password), username and
// password, a key with its scheme and path, the registry token, a
// credential helper by registry (credHelpers) and the store of all
// (credsStore), its "<token>" an identity token, its "not found" none.
func TestDockerConfigCredentials(t *testing.T) {
	bin := t.TempDir()
	helper := `#!/bin/sh
read -r server
case "$1:$server" in
get:reg.example:5000) echo '{"ServerURL":"reg.example:5000","Username":"helper-user","Secret":"helper-pass"}' ;;
get:https://index.docker.io/v1/) echo '{"Username":"<token>","Secret":"identity"}' ;;
*) echo "credentials not found in native keychain"; exit 1 ;;
esac
`
	for _, name := range []string{"docker-credential-test", "docker-credential-broken"} {
		script := helper
		if name == "docker-credential-broken" {
			script = "#!/bin/sh\necho 'a secret it should not print'\nexit 3\n"
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	userPass := base64.StdEncoding.EncodeToString([]byte("u:p:with:colons"))
	hub := ociRef{registry: dockerHub, repo: "library/app", tag: "v1"}
	reg := ociRef{registry: "reg.example:5000", repo: "team/crds", tag: "v1"}
	other := ociRef{registry: "other.example", repo: "crds", tag: "v1"}
	for _, c := range []struct {
		config string
		ref    ociRef
		want   ociCred
		err    string
	}{
		{`{"auths": {"reg.example:5000": {"auth": "` + userPass + `"}}}`, reg, ociCred{user: "u", pass: "p:with:colons"}, ""},
		{`{"auths": {"reg.example:5000": {"username": "u", "password": "p"}}}`, reg, ociCred{user: "u", pass: "p"}, ""},
		{`{"auths": {"https://reg.example:5000/v2/": {"username": "u", "password": "p"}}}`, reg, ociCred{user: "u", pass: "p"}, ""},
		{`{"auths": {"reg.example:5000/team/crds": {"registrytoken": "rt"}, "reg.example:5000": {"username": "u"}}}`, reg, ociCred{registryToken: "rt"}, ""},
		{`{"auths": {"https://index.docker.io/v1/": {"identitytoken": "it"}}}`, hub, ociCred{identityToken: "it"}, ""},
		{`{"auths": {"reg.example": {"username": "u", "password": "p"}}}`, reg, ociCred{}, ""},
		{`{"credHelpers": {"reg.example:5000": "test"}, "auths": {"reg.example:5000": {"username": "file"}}}`, reg, ociCred{user: "helper-user", pass: "helper-pass"}, ""},
		{`{"credsStore": "test"}`, hub, ociCred{identityToken: "identity"}, ""},
		{`{"credsStore": "test"}`, other, ociCred{}, ""},
		{`{"credsStore": "broken"}`, other, ociCred{}, "docker-credential-broken get for other.example/crds: exit status 3"},
		{`{"credsStore": "absent"}`, other, ociCred{}, "docker-credential-absent get for other.example/crds: executable file not found"},
		{`{"auths": {"reg.example:5000": {"auth": "%%%"}}}`, reg, ociCred{}, "the auth of reg.example:5000: not base64"},
	} {
		writeDockerConfig(t, c.config)
		got, err := dockerCredentials(context.Background(), c.ref)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "secret") {
				t.Errorf("%s for %s: %v, want %q", c.config, c.ref.name(), err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s for %s: %+v %v, want %+v", c.config, c.ref.name(), got, err, c.want)
		}
	}
}

// A fetch through a credential helper: the registry gets what the
// helper gives for its host (the Basic challenge's credentials).
func TestOCICredentialHelper(t *testing.T) {
	reg := newTestRegistry(t)
	src, _ := reg.push(t, "crds/app:v1", "a.yaml", crdA)
	private := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "helper-user" || pass != "helper-pass" {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		reg.Config.Handler.ServeHTTP(w, r)
	})
	host := strings.TrimPrefix(private.URL, "http://")
	bin := t.TempDir()
	script := "#!/bin/sh\nread -r server\n[ \"$server\" = '" + host + "' ] || { echo 'credentials not found in native keychain'; exit 1; }\necho '{\"Username\":\"helper-user\",\"Secret\":\"helper-pass\"}'\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-test"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	writeDockerConfig(t, `{"credHelpers": {"`+host+`": "test"}}`)
	src = strings.Replace(src, reg.host, host, 1)
	files, err := run(t, Options{}, "", src)
	wantFiles(t, "by the helper", files, err, src+"/a.yaml", crdA)
	writeDockerConfig(t, `{}`)
	_, err = run(t, Options{}, "", src)
	wantInputError(t, "no credentials", err, src+": the registry wants credentials, and the Docker config has none for "+host)
}

// fakeRegistry serves a manifest at crds:v1 and blobs as given, over
// plain http on loopback; it counts the blob requests.
type fakeRegistry struct {
	*recorder
	host string
}

func newFakeRegistry(t *testing.T, manifest []byte, blobs map[string]string) *fakeRegistry {
	f := &fakeRegistry{}
	f.recorder = newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v2/":
		case strings.HasPrefix(r.URL.Path, "/v2/crds/manifests/"):
			w.Header().Set("Content-Type", ociManifestType)
			w.Write(manifest)
		case strings.HasPrefix(r.URL.Path, "/v2/crds/blobs/"):
			data, ok := blobs[strings.TrimPrefix(r.URL.Path, "/v2/crds/blobs/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, data)
		default:
			http.NotFound(w, r)
		}
	})
	f.host = strings.TrimPrefix(f.URL, "http://")
	return f
}

func (f *fakeRegistry) blobRequests() int {
	n := 0
	for _, r := range f.requests() {
		if strings.Contains(r.path, "/blobs/") {
			n++
		}
	}
	return n
}

// What does not match its digest or size is refused (exit 2), and kept
// out of the cache: a manifest other than the reference's digest, a
// layer of other content, a layer of another size; so is what is larger
// than the limit of a fetch, a layer whose manifest says so before it
// is asked for.
func TestOCIDigestAndSizeRefused(t *testing.T) {
	m, blobs := artifactOf("a.yaml", crdA)
	good := newFakeRegistry(t, m, blobs)
	other := sha256Digest([]byte("another manifest"))
	_, err := run(t, Options{}, "", "oci://"+good.host+"/crds@"+other)
	wantInputError(t, "a pinned reference", err, "the manifest's digest is "+sha256Digest(m)+", not the "+other)
	files, err := run(t, Options{}, "", "oci://"+good.host+"/crds@"+sha256Digest(m))
	wantFiles(t, "by its digest", files, err, "oci://"+good.host+"/crds@"+sha256Digest(m)+"/a.yaml", crdA)

	d := sha256Digest([]byte(crdA))
	changed := map[string]string{}
	for k, v := range blobs {
		changed[k] = v
	}
	changed[d] = strings.Replace(crdA, "name: a", "name: z", 1)
	_, err = run(t, Options{}, "", "oci://"+newFakeRegistry(t, m, changed).host+"/crds:v1")
	wantInputError(t, "a layer of other content", err, "layer a.yaml: content of digest "+sha256Digest([]byte(changed[d])))
	changed[d] = crdA + "# more\n"
	_, err = run(t, Options{}, "", "oci://"+newFakeRegistry(t, m, changed).host+"/crds:v1")
	wantInputError(t, "a layer of another size", err, fmt.Sprintf("layer a.yaml: %d bytes, not the %d of its manifest", len(changed[d]), len(crdA)))

	large := strings.Repeat("# padding\n", 110000) // 1.05 MiB
	m, blobs = artifactOf("large.yaml", large)
	reg := newFakeRegistry(t, m, blobs)
	_, err = run(t, Options{MaxBytes: 1 << 20}, "", "oci://"+reg.host+"/crds:v1")
	wantInputError(t, "a layer too large", err, "layer large.yaml: 1100000 bytes, larger than 1 MiB, the limit of a fetch")
	if n := reg.blobRequests(); n != 0 {
		t.Errorf("a layer larger than the limit was asked for %d times", n)
	}
	var lied ociManifest
	json.Unmarshal(m, &lied)
	lied.Layers[0].Size = 10
	m, _ = json.Marshal(lied)
	_, err = run(t, Options{MaxBytes: 1 << 20}, "", "oci://"+newFakeRegistry(t, m, blobs).host+"/crds:v1")
	wantInputError(t, "a layer larger than its manifest says", err, "layer large.yaml: larger than 1 MiB, the limit of a fetch")

	huge := append([]byte(`{"schemaVersion":2,"annotations":{"pad":"`), []byte(strings.Repeat("x", 1<<20))...)
	huge = append(huge, `"}}`...)
	_, err = run(t, Options{MaxBytes: 1 << 20}, "", "oci://"+newFakeRegistry(t, huge, nil).host+"/crds:v1")
	wantInputError(t, "a manifest too large", err, "a manifest larger than the limit of a fetch")
}

// The references taken, as go-containerregistry's strict validation
// took them, and those refused.
func TestParseOCIRef(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	for s, want := range map[string]ociRef{
		"registry.example/crds:v1":                               {registry: "registry.example", repo: "crds", tag: "v1"},
		"localhost:5000/team/crds:v1.2_3-x":                      {registry: "localhost:5000", repo: "team/crds", tag: "v1.2_3-x"},
		"localhost/crds:v1":                                      {registry: "localhost", repo: "crds", tag: "v1"},
		"docker.io/library/nginx:1":                              {registry: dockerHub, repo: "library/nginx", tag: "1"},
		"[::1]:5000/crds:v1":                                     {registry: "[::1]:5000", repo: "crds", tag: "v1"},
		"registry.example/crds@" + d:                             {registry: "registry.example", repo: "crds", digest: d},
		"registry.example:443/crds:v1@" + d:                      {registry: "registry.example:443", repo: "crds", digest: d},
		"ghcr.io/org/repo/sub:latest":                            {registry: "ghcr.io", repo: "org/repo/sub", tag: "latest"},
		"127.0.0.1:5000/crds@sha512:" + strings.Repeat("0", 128): {registry: "127.0.0.1:5000", repo: "crds", digest: "sha512:" + strings.Repeat("0", 128)},
	} {
		got, err := parseOCIRef(s)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{
		"registry.example/crds", "crds:v1", "library/nginx:1", "docker.io/nginx:1", "registry.example/Crds:v1",
		"registry.example/crds:", "registry.example/crds@sha256:abc", "registry.example/crds@md5:" + strings.Repeat("0", 32),
		"registry.example/crds@" + strings.ToUpper(d), "https://registry.example/crds:v1", "registry.example/crds:v1:v2/x",
		"registry.example/crds:" + strings.Repeat("t", 129), "reg istry.example/crds:v1",
	} {
		if r, err := parseOCIRef(s); err == nil || !strings.Contains(err.Error(), "not an OCI reference") {
			t.Errorf("%s: %+v %v, want an error", s, r, err)
		}
	}
}

// WWW-Authenticate headers: the Bearer challenge with its quoted
// parameters is chosen over Basic; Basic alone; none.
func TestPickChallenge(t *testing.T) {
	c := pickChallenge([]string{`Basic realm="r"`, `Bearer realm="https://auth.example/token?x=1",service="registry.example",scope="repository:a/b:pull,push", error="insufficient_scope"`})
	if c == nil || c.scheme != "bearer" || c.params["realm"] != "https://auth.example/token?x=1" || c.params["service"] != "registry.example" ||
		c.params["scope"] != "repository:a/b:pull,push" || c.params["error"] != "insufficient_scope" {
		t.Errorf("bearer: %+v", c)
	}
	if c := pickChallenge([]string{`basic realm=registry, charset="UTF-8"`}); c == nil || c.scheme != "basic" || c.params["realm"] != "registry" || c.params["charset"] != "UTF-8" {
		t.Errorf("basic: %+v", c)
	}
	if c := pickChallenge([]string{`Bearer realm="a\"b"`}); c == nil || c.params["realm"] != `a"b` {
		t.Errorf("an escaped quote: %+v", c)
	}
	if c := pickChallenge(nil); c != nil {
		t.Errorf("none: %+v", c)
	}
}

// A registry that fails a request once (503, as one busy does) is asked
// again, as go-containerregistry's client did; one that goes on failing
// is an error of the registry's (exit 3), after three tries.
func TestOCIRetry(t *testing.T) {
	waits := registryRetries
	registryRetries = []time.Duration{time.Millisecond, 3 * time.Millisecond}
	t.Cleanup(func() { registryRetries = waits })
	m, blobs := artifactOf("a.yaml", crdA)
	inner := newFakeRegistry(t, m, blobs)
	var mu sync.Mutex
	failures := 1
	flaky := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fail := failures > 0 && strings.Contains(r.URL.Path, "/blobs/")
		if fail {
			failures--
		}
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		inner.Config.Handler.ServeHTTP(w, r)
	})
	src := "oci://" + strings.TrimPrefix(flaky.URL, "http://") + "/crds:v1"
	files, err := run(t, Options{}, "", src)
	wantFiles(t, "a 503 once", files, err, src+"/a.yaml", crdA)

	failures = 3
	_, err = run(t, Options{}, "", src)
	var se *Error
	if !errors.As(err, &se) || se.Input || !strings.Contains(err.Error(), "503") {
		t.Fatalf("a 503 three times: %v, want the registry's error", err)
	}
	if failures != 0 {
		t.Errorf("%d tries left", failures)
	}
}

// A registry elsewhere than loopback reached over plain http
// (--source-plain-http) that asks for authentication is refused, saying
// why: no credentials go over plain http but to loopback.
func TestOCIPlainHTTPNoCredentials(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	c := &client{plainHTTP: true, maxBytes: 1 << 20, bare: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Scheme == "https" {
			return nil, errors.New("no TLS here")
		}
		mu.Lock()
		seen = append(seen, r.URL.String()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		h := http.Header{}
		h.Set("WWW-Authenticate", `Basic realm="registry"`)
		return &http.Response{StatusCode: http.StatusUnauthorized, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	ref, err := parseOCIRef("registry.example:5000/crds:v1")
	if err != nil {
		t.Fatal(err)
	}
	err = newRegistryClient(c, ref, ociCred{user: "user", pass: "secret"}).ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the registry at http://registry.example:5000 asks for authentication, which goes over plain http to loopback alone") {
		t.Errorf("the ping: %v", err)
	}
	if len(seen) != 1 || seen[0] != "http://registry.example:5000/v2/ " {
		t.Errorf("the registry saw %q, want one request without credentials", seen)
	}
}
