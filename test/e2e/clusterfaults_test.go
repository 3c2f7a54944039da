package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// faultProxy is a reverse proxy on loopback in front of the suite's real API
// server, for the faults the server itself cannot stage: slowness and a stop in
// the middle of a run.
type faultProxy struct {
	srv       *httptest.Server
	delay     time.Duration // before each request is forwarded
	stopAfter int           // requests forwarded before the proxy dies; 0: never

	mu       sync.Mutex
	served   int
	requests []string // "GET /path?query", each request forwarded
	stopOnce sync.Once
}

func startFaultProxy(t *testing.T, delay time.Duration, stopAfter int) *faultProxy {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	real := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	caPEM, err := os.ReadFile(real.CertificateAuthority)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	target, err := url.Parse(real.Server)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	rp.ErrorLog = log.New(io.Discard, "", 0) // a client that gave up is expected here
	p := &faultProxy{delay: delay, stopAfter: stopAfter}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		dead := p.stopAfter > 0 && p.served >= p.stopAfter
		if !dead {
			p.served++
			p.requests = append(p.requests, r.Method+" "+r.URL.RequestURI())
		}
		p.mu.Unlock()
		if dead {
			// The server is gone: no new connections, and this one drops without an answer.
			p.stopOnce.Do(func() { p.srv.Listener.Close() })
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		select {
		case <-time.After(p.delay):
		case <-r.Context().Done():
			return
		}
		rp.ServeHTTP(w, r)
	}))
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	return p
}

// Served is the number of requests forwarded to the real server.
func (p *faultProxy) Served() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.served
}

// Requests are the requests forwarded to the real server, "GET /path?query".
func (p *faultProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// CAData is the PEM certificate a client must trust to talk to the proxy.
func (p *faultProxy) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
}

// faultKubeconfig writes a copy of the suite's kubeconfig whose cluster (the
// one every context uses) edit changed, if edit is not nil.
func faultKubeconfig(t *testing.T, edit func(*clientcmdapi.Cluster)) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster])
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// throughProxy points a cluster at the proxy, trusting the proxy's certificate.
func throughProxy(p *faultProxy) func(*clientcmdapi.Cluster) {
	return func(c *clientcmdapi.Cluster) {
		c.Server = p.srv.URL
		c.CertificateAuthority = ""
		c.CertificateAuthorityData = p.CAData()
	}
}

// Every fault of the cluster: one line on stderr that says what failed and
// where, nothing on stdout, exit 3. The 403s and the 401 are the real server's.
func TestLiveClusterFaults(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)

	// Another server's certificate as the CA: the real server's is not signed by it.
	other := httptest.NewTLSServer(http.NotFoundHandler())
	otherCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.Certificate().Raw})
	other.Close()
	wrongCA := faultKubeconfig(t, func(c *clientcmdapi.Cluster) {
		c.CertificateAuthority, c.CertificateAuthorityData = "", otherCA
	})
	// The real server's CA, but a name its certificate does not have.
	wrongName := faultKubeconfig(t, func(c *clientcmdapi.Cluster) { c.TLSServerName = "wrong.example.com" })
	unreachable := faultKubeconfig(t, func(c *clientcmdapi.Cluster) { c.Server = "https://127.0.0.1:1" })

	const (
		prune       = "prune"
		checkUpdate = "check-update"
	)
	jobs := []string{"-f", exampleJobs}
	for _, tc := range []struct {
		name       string
		kubeconfig string // default: the suite's
		args       []string
		want       []string
	}{
		{"unreachable, check-update", unreachable, append([]string{checkUpdate}, jobs...),
			[]string{"error: discovering the API groups: cannot reach the API server at https://127.0.0.1:1 (context \"crd-test\"): ", "connection refused", "pass --offline"}},
		{"unreachable, explain-structural", unreachable, []string{"explain-structural", exampleCRDName},
			[]string{"error: getting CustomResourceDefinition \"" + exampleCRDName + "\": cannot reach the API server at https://127.0.0.1:1 ", "connection refused"}},
		{"TLS, wrong CA", wrongCA, append([]string{prune}, jobs...),
			[]string{"error: discovering the API groups on https://127.0.0.1:", "TLS: the server's certificate is not trusted: tls: failed to verify certificate: x509: certificate signed by unknown authority (check the kubeconfig's certificate-authority and tls-server-name)"}},
		{"TLS, wrong CA, explain-structural", wrongCA, []string{"explain-structural", "--all"},
			[]string{"error: listing CustomResourceDefinitions on https://127.0.0.1:", "TLS: the server's certificate is not trusted: tls: failed to verify certificate: x509: certificate signed by unknown authority (check the kubeconfig's certificate-authority and tls-server-name)"}},
		{"TLS, server name mismatch", wrongName, append([]string{checkUpdate}, jobs...),
			[]string{"error: discovering the API groups on https://127.0.0.1:", "TLS: the server's certificate is not trusted: ", "x509: certificate is valid for localhost, not wrong.example.com (check the kubeconfig's certificate-authority and tls-server-name)"}},
		{"401, prune", "", append([]string{"--context", "crd-test-refused", prune}, jobs...),
			[]string{"error: discovering the API groups on https://127.0.0.1:", `(context "crd-test-refused"): unauthorized: the credentials of the kubeconfig were refused (`}},
		{"401, explain-structural", "", []string{"--context", "crd-test-refused", "explain-structural", exampleCRDName},
			[]string{"error: getting CustomResourceDefinition \"" + exampleCRDName + "\" on https://127.0.0.1:", "unauthorized: "}},
		// check-update reads the objects: this user may read the CRDs only.
		{"403 on objects, check-update", "", append([]string{"--context", "crd-test-crds-only", checkUpdate}, jobs...),
			[]string{"error: getting maintenancenightlyjobs.operations.example.com ops/backdoor-check on https://127.0.0.1:", `(context "crd-test-crds-only"): forbidden: `,
				`User "crds-only" cannot get resource "maintenancenightlyjobs" in API group "operations.example.com" in the namespace "ops"`}},
		// And the reverse: the objects but not the CRDs.
		{"403 on CRDs, prune", "", append([]string{"--context", "crd-test-objects-only", prune}, jobs...),
			[]string{"error: getting CustomResourceDefinition \"" + exampleCRDName + "\" on https://127.0.0.1:", `forbidden: `, `User "objects-only" cannot get resource "customresourcedefinitions"`}},
		{"403 on CRDs, check-update", "", append([]string{"--context", "crd-test-objects-only", checkUpdate}, jobs...),
			[]string{"error: getting CustomResourceDefinition \"" + exampleCRDName + "\" on https://127.0.0.1:", `User "objects-only" cannot get resource "customresourcedefinitions"`}},
		{"403 on CRDs, explain-structural", "", []string{"--context", "crd-test-objects-only", "explain-structural", exampleCRDName},
			[]string{"error: getting CustomResourceDefinition \"" + exampleCRDName + "\" on https://127.0.0.1:", `User "objects-only" cannot get resource "customresourcedefinitions"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := NewTest(t)
			if tc.kubeconfig != "" {
				x.WithEnv("KUBECONFIG=" + tc.kubeconfig)
			}
			checkFault(t, x.Run("kubectl-crd", tc.args...), tc.want)
		})
	}

	// The restricted users are not refused everything: what they may read works.
	for _, tc := range []struct {
		context string
		args    []string
	}{
		{"crd-test-crds-only", append([]string{prune}, jobs...)},
		{"crd-test-crds-only", []string{"explain-structural", exampleCRDName}},
		{"crd-test-objects-only", append([]string{checkUpdate, "--crd-file", exampleCRD}, jobs...)},
	} {
		r := NewTest(t).Run("kubectl-crd", append([]string{"--context", tc.context}, tc.args...)...)
		if r.Code != 0 || r.Stdout == "" {
			t.Errorf("%s %s: exit %d, stderr:\n%s", tc.context, strings.Join(tc.args, " "), r.Code, r.Stderr)
		}
	}

	t.Run("slow server", func(t *testing.T) {
		p := startFaultProxy(t, 5*time.Second, 0)
		kc := faultKubeconfig(t, throughProxy(p))
		for _, tc := range []struct {
			args []string
			what string // the first request
		}{
			{append([]string{prune}, jobs...), "discovering the API groups"},
			{append([]string{checkUpdate}, jobs...), "discovering the API groups"},
			{[]string{"explain-structural", "--all"}, "listing CustomResourceDefinitions"},
		} {
			args := tc.args
			start := time.Now()
			r := NewTest(t).WithEnv("KUBECONFIG="+kc).Run("kubectl-crd", append([]string{"--request-timeout=1s"}, args...)...)
			checkFault(t, r, []string{"error: " + tc.what + " on " + p.srv.URL, "timed out", "--request-timeout"})
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("%s: took %v with --request-timeout=1s", args[0], d)
			}
		}
	})

	// The proxy forwards the requests up to the example CRD's, then dies: the
	// objects check-update reads next, or the second CRD explain-structural
	// gets, find no server. How many requests come first (discovery's) is
	// counted on a run through a proxy that does not die.
	t.Run("server stopped mid-run", func(t *testing.T) {
		for _, args := range [][]string{
			append([]string{checkUpdate}, jobs...),
			{"explain-structural", exampleCRDName, "legacythings.example.com"},
		} {
			upTo := 0
			counting := startFaultProxy(t, 0, 0)
			NewTest(t).WithEnv("KUBECONFIG="+faultKubeconfig(t, throughProxy(counting))).Run("kubectl-crd", args...)
			for i, req := range counting.Requests() {
				if strings.HasPrefix(req, "GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+exampleCRDName) {
					upTo = i + 1
					break
				}
			}
			if upTo == 0 {
				t.Fatalf("%s: the example CRD is never read:\n%s", args[0], strings.Join(counting.Requests(), "\n"))
			}
			p := startFaultProxy(t, 0, upTo)
			kc := faultKubeconfig(t, throughProxy(p))
			r := NewTest(t).WithEnv("KUBECONFIG="+kc).Run("kubectl-crd", args...)
			checkFault(t, r, []string{"error: getting ", ": cannot reach the API server at " + p.srv.URL, "pass --offline"})
			if p.Served() != upTo {
				t.Errorf("%s: the proxy forwarded %d requests before it stopped, want %d", args[0], p.Served(), upTo)
			}
		}
	})
}

// checkFault checks a cluster fault: exit 3, one line on stderr with every
// string of want, nothing on stdout.
func checkFault(t *testing.T, r Result, want []string) {
	t.Helper()
	if r.Code != 3 || r.Stdout != "" {
		t.Errorf("exit %d (want 3), stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "goroutine ") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("want one line on stderr:\n%s", r.Stderr)
	}
}

// The kubeconfig's secrets (a bearer token, a basic-auth password, a client
// key) never appear in any output: not on stdout, not on stderr, not in any
// file a command writes, whatever the server does and whichever command runs.
func TestLiveSecretsNeverShown(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)
	const (
		token    = "tok3n-5ecret-Zq8vW2rT"
		password = "pa55w0rd-5ecret-Kx4mN7"
	)
	certPEM, keyPEM := clientCertificate(t)
	keyBody := strings.Join(strings.Split(strings.TrimSpace(string(keyPEM)), "\n")[1:2], "")
	secrets := map[string]string{
		"token":                       token,
		"password":                    password,
		"basic auth header":           base64.StdEncoding.EncodeToString([]byte("alice:" + password)),
		"client key":                  keyBody[:32],
		"client key, base64 of a PEM": base64.StdEncoding.EncodeToString(keyPEM)[:32],
	}
	users := map[string]*clientcmdapi.AuthInfo{
		"token":   {Token: token},
		"basic":   {Username: "alice", Password: password},
		"cert":    {ClientCertificateData: certPEM, ClientKeyData: keyPEM},
		"refused": {Token: "refused-" + token}, // 401
		"denied":  {Token: "denied-" + token},  // 403
	}
	withUsers := func(path string) string {
		kc, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		clusterName := kc.Contexts[kc.CurrentContext].Cluster
		for name, u := range users {
			kc.AuthInfos[name] = u
			kc.Contexts[name] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: name, Namespace: "default"}
		}
		if err := clientcmd.WriteToFile(*kc, path); err != nil {
			t.Fatal(err)
		}
		return path
	}

	// If the tool ever exposes klog's -v, every command runs at its most verbose:
	// client-go logs request headers from -v=7 on, and they must be masked.
	var verbose []string
	if r := NewTest(t).Run("kubectl-crd", "-v=10", "version"); r.Code == 0 {
		verbose = []string{"-v=10"}
	} else if !strings.Contains(r.Stderr, "unknown shorthand flag: 'v'") {
		t.Fatalf("-v=10: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}

	cm := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var krmInput []byte
	for _, f := range []string{"crd.yaml", "widget.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "krm", f))
		if err != nil {
			t.Fatal(err)
		}
		krmInput = append(append(krmInput, "---\n"...), b...)
	}

	slow := startFaultProxy(t, 5*time.Second, 0)
	stopped := startFaultProxy(t, 0, 1)
	for _, server := range []struct {
		name    string
		edit    func(*clientcmdapi.Cluster)
		failing bool
		flags   []string
	}{
		{"working", nil, false, nil},
		{"unreachable", func(c *clientcmdapi.Cluster) { c.Server = "https://127.0.0.1:1" }, true, nil},
		{"wrong CA", func(c *clientcmdapi.Cluster) {
			c.CertificateAuthority, c.CertificateAuthorityData = "", slow.CAData()
		}, true, nil},
		{"slow", throughProxy(slow), true, []string{"--request-timeout=500ms"}},
		{"stopped mid-run", throughProxy(stopped), true, nil},
	} {
		t.Run(server.name, func(t *testing.T) {
			kc := withUsers(faultKubeconfig(t, server.edit))
			// checkUser runs every command as user; on any goroutine.
			checkUser := func(t *testing.T, user string) {
				failing := server.failing || user == "refused" || user == "denied"
				for _, tc := range []struct {
					args    []string
					cluster bool // contacts the cluster: exit 3 when it fails
					works   int  // the highest exit code on a working cluster
					stdin   []byte
				}{
					// First: two requests, so that the stopping proxy stops in the middle.
					{[]string{"check-update", "-f", exampleJobs}, true, 0, nil},
					{[]string{"prune", "-f", exampleJobs, "--report", "report.json"}, true, 0, nil},
					// Discovery: the test server has no core API, so no ConfigMap (exit 2).
					{[]string{"prune", "-f", cm}, true, 2, nil},
					{[]string{"explain-structural", "--all", "-o", "json"}, true, 1, nil},
					{[]string{"explain-structural", exampleCRDName}, true, 0, nil},
					{[]string{"krm", "examples/krm/check.yaml", "-"}, false, 0, krmInput},
					{[]string{"__complete", "explain-structural", ""}, false, 0, nil},
					{[]string{"__complete", "prune", "-n", ""}, false, 0, nil},
					{[]string{"__complete", "prune", "--user", ""}, false, 0, nil},
					{[]string{"version"}, false, 0, nil},
				} {
					args := append(append(append([]string{"--context", user}, server.flags...), verbose...), tc.args...)
					out := t.TempDir()
					args = replaceArg(args, "report.json", filepath.Join(out, "report.json"))
					home := t.TempDir() // the discovery cache goes here
					what := user + ": kubectl-crd " + strings.Join(tc.args, " ")
					r, err := NewTest(t).WithEnv("KUBECONFIG="+kc, "HOME="+home).WithStdin(string(tc.stdin)).run("kubectl-crd", args...)
					if err != nil {
						t.Errorf("%s: %v", what, err)
						continue
					}
					switch {
					case tc.cluster && failing && r.Code != 3:
						t.Errorf("%s: exit %d, want 3\n%s", what, r.Code, r.Stderr)
					case tc.cluster && !failing && r.Code > tc.works:
						t.Errorf("%s: exit %d, want at most %d\n%s", what, r.Code, tc.works, r.Stderr)
					case !tc.cluster && r.Code != 0:
						t.Errorf("%s: exit %d, want 0\n%s", what, r.Code, r.Stderr)
					}
					outputs := map[string]string{"stdout": r.Stdout, "stderr": r.Stderr}
					for _, dir := range []string{out, home} {
						err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
							if err != nil || d.IsDir() {
								return err
							}
							b, err := os.ReadFile(path)
							outputs[path] = string(b)
							return err
						})
						if err != nil {
							t.Error(err)
						}
					}
					if slices.Contains(tc.args, "--report") && !failing && outputs[filepath.Join(out, "report.json")] == "" {
						t.Errorf("%s: no report written", what)
					}
					for where, text := range outputs {
						for name, s := range secrets {
							if strings.Contains(text, s) {
								t.Errorf("%s: the %s is in %s:\n%s", what, name, where, text)
							}
						}
					}
				}
			}
			// The users' commands run at once: most of their time is waiting
			// for a server that does not answer. Not through the stopping
			// proxy, whose first command is to get one request through.
			var wg sync.WaitGroup
			defer wg.Wait()
			for _, user := range []string{"token", "basic", "cert", "refused", "denied"} {
				if server.name != "stopped mid-run" {
					wg.Add(1)
					go func() {
						defer wg.Done()
						checkUser(t, user)
					}()
					continue
				}
				checkUser(t, user)
			}
		})
	}
	if stopped.Served() == 0 {
		t.Errorf("the stopping proxy forwarded nothing: it never stopped mid-run")
	}
}

func replaceArg(args []string, old, new string) []string {
	for i, a := range args {
		if a == old {
			args[i] = new
		}
	}
	return args
}

// clientCertificate is a self-signed client certificate and its key, in PEM.
func clientCertificate(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "secret-client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// prune and check-update read the CRDs of the objects' kinds, each with a
// GET of its name, which discovery gives (kubectl maps kinds the same way):
// never the list of every CRD of the cluster, which on a cluster with
// hundreds transfers tens of megabytes on every run. The list is still read
// where discovery does not know a kind.
func TestLiveReadsOnlyTheCRDsOfTheKinds(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)
	const list = "GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int  // -1: 0 or 1
		get   bool // the example CRD is read by name
		lists bool // the list of every CRD is read
	}{
		{"prune", "", []string{"prune", "-f", exampleJobs}, 0, true, false},
		{"check-update", "", []string{"check-update", "-f", exampleJobs}, -1, true, false},
		{"a kind discovery does not know", "apiVersion: nowhere.example.com/v1\nkind: Bar\nmetadata:\n  name: b\n", []string{"prune", "-f", "-"}, 2, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startFaultProxy(t, 0, 0)
			r := NewTest(t).WithEnv("KUBECONFIG="+faultKubeconfig(t, throughProxy(p))).WithStdin(tc.stdin).Run("kubectl-crd", tc.args...)
			if tc.code >= 0 && r.Code != tc.code || tc.code < 0 && r.Code > 1 {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.Code, tc.code, r.Stderr)
			}
			var got, listed bool
			for _, req := range p.Requests() {
				path, _, _ := strings.Cut(req, "?")
				got = got || path == list+"/"+exampleCRDName
				listed = listed || path == list
			}
			if got != tc.get || listed != tc.lists {
				t.Errorf("read the example CRD by name: %v (want %v); listed every CRD: %v (want %v); the requests:\n%s",
					got, tc.get, listed, tc.lists, strings.Join(p.Requests(), "\n"))
			}
		})
	}
}

// runBounded runs the built kubectl-crd as x would, but stops it (and
// fails the test) past limit, and returns its peak RSS in bytes: an upper
// bound, which counts this test process too (Go starts a child with vfork;
// see runMeasured).
func runBounded(t *testing.T, x *Test, limit time.Duration, args ...string) (r Result, took time.Duration, peak int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl-crd"), args...)
	cmd.Dir, cmd.Env, cmd.Stdin = x.dir, x.env, strings.NewReader(x.in)
	// A group of its own, stopped whole: a credential plugin it left behind
	// would hold stderr open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("kubectl-crd %s: still running after %v; stderr:\n%s", strings.Join(args, " "), limit, errOut.String())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("kubectl-crd %s: %v", strings.Join(args, " "), err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = int64(ru.Maxrss) << 10 // KiB on Linux
	}
	return Result{Code: cmd.ProcessState.ExitCode(), Stdout: out.String(), Stderr: errOut.String()}, took, peak
}

// pluginKubeconfig is a copy of the suite's kubeconfig whose current
// context's user is a credential plugin, the shell script script.
func pluginKubeconfig(t *testing.T, script string) string {
	t.Helper()
	plugin := filepath.Join(t.TempDir(), "plugin.sh")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc.AuthInfos["plugin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: plugin, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	kc.Contexts[kc.CurrentContext].AuthInfo = "plugin"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// A kubeconfig user's credential plugin (exec) is run bounded by
// --request-timeout, with whatever it started, and what it writes on stderr
// (here a secret, as a plugin's debug output may hold one) is shown only
// from -v=1 on. client-go ran it with no deadline: a plugin that never
// exits hung every command past 100 s, whatever --request-timeout said,
// and its stderr was passed through.
func TestLiveCredentialPlugin(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)
	const secret = "plugin-stderr-5ecret-Wm3"
	jobs := []string{"-f", exampleJobs}

	t.Run("answers", func(t *testing.T) {
		// The test server takes a restricted user's name as its token.
		kc := pluginKubeconfig(t, "echo "+secret+" >&2\n"+
			`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"crds-only"}}'`+"\n")
		x := func() *Test { return NewTest(t).WithEnv("KUBECONFIG=" + kc) }
		r := x().Run("kubectl-crd", append([]string{"prune"}, jobs...)...)
		if r.Code != 0 || r.Stdout == "" || strings.Contains(r.Stderr, secret) {
			t.Errorf("prune: exit %d, stderr:\n%s\nwant exit 0, the plugin's stderr not shown", r.Code, r.Stderr)
		}
		// The server knows the plugin's user: it may not read the objects.
		checkFault(t, x().Run("kubectl-crd", append([]string{"check-update"}, jobs...)...), []string{`User "crds-only" cannot get resource "maintenancenightlyjobs"`})
		if r := x().Run("kubectl-crd", append([]string{"-v=1", "prune"}, jobs...)...); r.Code != 0 || !strings.Contains(r.Stderr, "credential plugin ") || !strings.Contains(r.Stderr, secret) {
			t.Errorf("prune -v=1: exit %d, stderr:\n%s\nwant exit 0 and the plugin's stderr", r.Code, r.Stderr)
		}
	})

	t.Run("never exits", func(t *testing.T) {
		// The runs wait for their timeouts at once, each with a plugin of
		// its own (subtests run from goroutines, not t.Parallel: -parallel
		// is the number of CPUs).
		var wg sync.WaitGroup
		defer wg.Wait()
		for _, tc := range []struct {
			args    []string
			timeout time.Duration // of the flag; 0: the default, 30 s
		}{
			{append([]string{"prune"}, jobs...), 0},
			{append([]string{"prune"}, jobs...), 2 * time.Second},
			{append([]string{"check-update"}, jobs...), 2 * time.Second},
			{[]string{"explain-structural", "--all"}, 2 * time.Second},
		} {
			args, want := tc.args, 30*time.Second
			if tc.timeout != 0 {
				args, want = append([]string{"--request-timeout=" + tc.timeout.String()}, args...), tc.timeout
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(strings.Join(args, " "), func(t *testing.T) { neverExits(t, secret, want, args) })
			}()
		}
	})
}

// neverExits runs kubectl-crd with args and a credential plugin that never
// exits: it must stop the plugin, and what it started, after want.
func neverExits(t *testing.T, secret string, want time.Duration, args []string) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	kc := pluginKubeconfig(t, "echo "+secret+" >&2\nsleep 1000 &\necho $! > "+pidFile+"\nwait\n")
	r, took, _ := runBounded(t, NewTest(t).WithEnv("KUBECONFIG="+kc), want+30*time.Second, args...)
	checkFault(t, r, []string{"plugin.sh did not finish within --request-timeout (" + want.String() + "): it was stopped; -v=1 shows what it wrote on stderr"})
	if strings.Contains(r.Stderr, secret) {
		t.Errorf("%s: the plugin's stderr is shown:\n%s", args, r.Stderr)
	}
	if took < want || took > want+5*time.Second {
		t.Errorf("%s: took %v, want %v and a little", args, took, want)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20 && syscall.Kill(pid, 0) == nil && !zombie(pid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil && !zombie(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s: what the plugin started (%d) still runs", args, pid)
	}
}

// zombie reports whether pid has exited and waits to be reaped (a
// container's first process may never reap it).
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	_, after, _ := strings.Cut(string(stat), ") ")
	return err == nil && strings.HasPrefix(after, "Z")
}

// klogLine is a line of klog's, as client-go logs through it ("E1125 18:43:07.850689 22621 request.go:1198] ...").
var klogLine = regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^ ]+:\d+\]`)

// A server (or a proxy gone wrong) whose response never ends: the body is
// cut off at 128 MiB, even with no time limit, and the process stays well
// under a GiB. client-go reads a body whole: prune grew to 2.3 GB within
// --request-timeout=3s, and without a limit until killed; explain-structural
// --all died out of memory with a goroutine dump (exit 2) after klog's
// "E1125 ... Unexpected error when reading response body" line. Here a
// command each way (the limit, the timeout); every command both ways in
// TestLiveEndlessResponseSweep.
func TestLiveEndlessResponse(t *testing.T) {
	requireOwnCluster(t)
	if ran := endlessResponse(t, func(c endlessCase) bool { return endlessSample[c.args[0]+" "+c.timeout] }); ran != len(endlessSample) {
		t.Errorf("%d of the %d runs of endlessSample found", ran, len(endlessSample))
	}
}

// TestLiveEndlessResponseSweep is TestLiveEndlessResponse's property for
// the commands and timeouts it leaves out: run by .ci/run's matrix target.
func TestLiveEndlessResponseSweep(t *testing.T) {
	matrixSweep(t)
	requireOwnCluster(t)
	if endlessResponse(t, func(c endlessCase) bool { return !endlessSample[c.args[0]+" "+c.timeout] }) == 0 {
		t.Error("no command was run")
	}
}

// endlessSample are the runs TestLiveEndlessResponse makes, by command and
// --request-timeout: the body's limit without a timeout, the timeout.
var endlessSample = map[string]bool{"prune 0": true, "explain-structural 3s": true}

type endlessCase struct {
	args          []string
	what, timeout string
}

// endlessResponse runs the commands that talk to the cluster against a
// server whose response never ends, with and without a timeout, those that
// run says, and returns how many it ran.
func endlessResponse(t *testing.T, run func(endlessCase) bool) int {
	chunk := []byte(strings.Repeat(`{"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},`, 1000))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[`)
		for r.Context().Err() == nil { // until the client hangs up
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	kc := faultKubeconfig(t, func(c *clientcmdapi.Cluster) {
		c.Server, c.CertificateAuthority = srv.URL, ""
		c.CertificateAuthorityData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	})
	ran := 0
	for _, tc := range []endlessCase{
		{args: []string{"prune", "-f", exampleJobs}, what: "discovering the API groups"},
		{args: []string{"check-update", "-f", exampleJobs}, what: "discovering the API groups"},
		{args: []string{"explain-structural", "--all"}, what: "listing CustomResourceDefinitions"},
	} {
		for _, timeout := range []string{"0", "3s"} {
			if tc.timeout = timeout; !run(tc) {
				continue
			}
			ran++
			args := append([]string{"--request-timeout=" + timeout}, tc.args...)
			r, _, peak := runBounded(t, NewTest(t).WithEnv("KUBECONFIG="+kc), 60*time.Second, args...)
			want := "error: " + tc.what + " on " + srv.URL
			if timeout == "0" {
				want += ` (context "crd-test"): the response is larger than 128 MiB`
			}
			checkFault(t, r, []string{want})
			if klogLine.MatchString(r.Stderr) {
				t.Errorf("%s: a klog line:\n%s", args, r.Stderr)
			}
			if peak == 0 || peak > 1<<30 {
				t.Errorf("%s: peak RSS %d MiB, want under 1 GiB", args, peak>>20)
			}
			t.Logf("%s: peak RSS %d MiB", args, peak>>20)
		}
	}
	return ran
}
