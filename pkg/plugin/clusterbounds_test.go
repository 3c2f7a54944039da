package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// recordingServer answers every request 500 with a Status, and records the
// requests it gets: enough for a run to reach it and fail, exit 3.
type recordingServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
}

func startRecordingServer(t *testing.T) *recordingServer {
	t.Helper()
	s := &recordingServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"recorded","code":500}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *recordingServer) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// kubeconfigFor is a kubeconfig for server whose user is user (YAML, in
// flow style).
func kubeconfigFor(t *testing.T, server, user string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: %s
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`, server, user)
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// credentialPlugin writes a shell script as a credential plugin and returns
// the kubeconfig user that runs it.
func credentialPlugin(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plugin.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never}}`, path)
}

// runBounded runs kubectl crd in process with args, and fails the test
// (leaving the run behind) past limit.
func runBounded(t *testing.T, limit time.Duration, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
		done <- result{code, out.String(), errOut.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errOut, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("kubectl crd %s: still running after %v", strings.Join(args, " "), limit)
	}
	return
}

// pluginSecret is what the plugins of these tests print on stderr, as a
// plugin with debug output prints a token.
const pluginSecret = "plugin-stderr-5ecret-Tq7"

// A credential plugin that never exits is stopped after --request-timeout,
// with what it started: exit 3, one line that names it, and its stderr
// (a secret here) is not shown; -v=1 shows it. client-go ran it with no
// deadline, and every command hung.
func TestCredentialPluginIsStopped(t *testing.T) {
	srv := startRecordingServer(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	user := credentialPlugin(t, fmt.Sprintf("echo %s >&2\nsleep 1000 &\necho $! > %s\nwait\n", pluginSecret, pidFile))
	kubeconfig := kubeconfigFor(t, srv.URL, user)
	for _, args := range [][]string{
		{"prune", "-f", exampleJob},
		{"explain-structural", "--all"},
		{"-v=1", "explain-structural", "foos.example.com"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			args = append(args, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "--request-timeout", "1s")
			code, stdout, stderr, took := runBounded(t, 20*time.Second, args...)
			verbose := args[0] == "-v=1"
			if code != ExitInternal || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 3", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "error: ") || !strings.Contains(stderr, "plugin.sh did not finish within --request-timeout (1s): it was stopped") {
				t.Errorf("stderr:\n%s\nwant the plugin named, and the timeout", stderr)
			}
			if took > 6*time.Second {
				t.Errorf("took %v with --request-timeout 1s", took)
			}
			if got := strings.Contains(stderr, pluginSecret); got != verbose {
				t.Errorf("the plugin's stderr shown: %v, want %v (at -v=1 only):\n%s", got, verbose, stderr)
			}
			if !verbose && strings.Count(stderr, "\n") != 1 {
				t.Errorf("want one line:\n%s", stderr)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests reached the server without credentials", n)
			}
			// What the plugin started is stopped with it.
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			// SIGKILL is sent to the group at once, and takes effect soon after.
			for i := 0; i < 20 && alive(pid); i++ {
				time.Sleep(100 * time.Millisecond)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the plugin's child %d still runs", pid)
			}
		})
	}
}

// alive reports whether pid runs (a zombie, which nobody reaps in some
// containers, does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "no such process")
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// A credential plugin that answers: its token is sent, the ExecCredential
// it is given is client-go's, and its stderr is not shown.
func TestCredentialPluginToken(t *testing.T) {
	srv := startRecordingServer(t)
	infoFile := filepath.Join(t.TempDir(), "info")
	user := credentialPlugin(t, fmt.Sprintf(`echo %s >&2
printf '%%s' "$KUBERNETES_EXEC_INFO" > %s
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"plugin-token"}}'
`, pluginSecret, infoFile))
	code, stdout, stderr, _ := runBounded(t, 20*time.Second, "explain-structural", "foos.example.com",
		"--kubeconfig", kubeconfigFor(t, srv.URL, user), "--cache-dir", t.TempDir())
	if code != ExitInternal || stdout != "" || !strings.Contains(stderr, "recorded") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant the server's 500, exit 3", code, stdout, stderr)
	}
	if strings.Contains(stderr, pluginSecret) {
		t.Errorf("the plugin's stderr is shown:\n%s", stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer plugin-token" {
			t.Errorf("%s %s: Authorization %q, want the plugin's token", r.Method, r.URL, got)
		}
	}
	info, err := os.ReadFile(infoFile)
	if err != nil {
		t.Fatal(err)
	}
	var cred map[string]interface{}
	if err := json.Unmarshal(info, &cred); err != nil {
		t.Fatalf("KUBERNETES_EXEC_INFO %q: %v", info, err)
	}
	if cred["apiVersion"] != "client.authentication.k8s.io/v1" || cred["kind"] != "ExecCredential" ||
		fmt.Sprint(cred["spec"]) != "map[interactive:false]" {
		t.Errorf("KUBERNETES_EXEC_INFO %s", info)
	}
}

// A plugin that fails or answers nonsense: exit 3, one line naming it, and
// its stderr is not shown.
func TestCredentialPluginFails(t *testing.T) {
	srv := startRecordingServer(t)
	for _, tc := range []struct {
		script, want string
	}{
		{"echo " + pluginSecret + " >&2\nexit 7\n", "plugin.sh failed (exit status 7); -v=1 shows what it wrote on stderr"},
		{"echo " + pluginSecret + " >&2\necho not json\n", "plugin.sh: its output is not an ExecCredential"},
		{`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}'`, "plugin.sh answered with neither a token nor a client certificate and key"},
		{"head -c 5000000 /dev/zero\nsleep 1000\n", "plugin.sh wrote more than 4 MiB on stdout"},
	} {
		code, stdout, stderr, _ := runBounded(t, 20*time.Second, "explain-structural", "--all",
			"--kubeconfig", kubeconfigFor(t, srv.URL, credentialPlugin(t, tc.script)), "--cache-dir", t.TempDir())
		if code != ExitInternal || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 3 and %q", code, stdout, stderr, tc.want)
		}
		if strings.Contains(stderr, pluginSecret) {
			t.Errorf("the plugin's stderr is shown:\n%s", stderr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server without credentials", n)
	}
}

// --request-timeout that kubectl refuses is a usage error, exit 2, before
// any cluster is read (it was exit 3, a kubeconfig error).
func TestRequestTimeoutUsage(t *testing.T) {
	for _, v := range []string{"abc", "-5s", "1x"} {
		code, _, stderr, _ := runBounded(t, 20*time.Second, "prune", "-f", exampleJob, "--request-timeout="+v)
		if code != ExitInput || !strings.Contains(stderr, "error: --request-timeout="+v+": want ") {
			t.Errorf("--request-timeout=%s: exit %d, stderr:\n%s\nwant exit 2", v, code, stderr)
		}
	}
	if code, _, stderr, _ := runBounded(t, 20*time.Second, "-v=-1", "version"); code != ExitInput {
		t.Errorf("-v=-1: exit %d, stderr:\n%s\nwant exit 2", code, stderr)
	}
}

// --request-timeout=0 is no limit for every request, discovery's too
// (client-go's discovery makes 0 32 s); each request says its limit to
// the server as kubectl's do (?timeout=30s), and none with 0.
func TestRequestTimeoutZeroIsNoLimit(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "30s"},
		{[]string{"--request-timeout=5s"}, "5s"},
		{[]string{"--request-timeout=0"}, ""},
	} {
		srv := startRecordingServer(t)
		args := append([]string{"prune", "-f", exampleJob, "--kubeconfig", kubeconfigFor(t, srv.URL, "{token: t}"), "--cache-dir", t.TempDir()}, tc.flags...)
		runBounded(t, 20*time.Second, args...)
		reqs := srv.Requests()
		if len(reqs) == 0 {
			t.Fatalf("%v: no request", tc.flags)
		}
		for _, r := range reqs {
			if got := r.URL.Query().Get("timeout"); got != tc.want {
				t.Errorf("%v: %s %s: timeout %q, want %q", tc.flags, r.Method, r.URL, got, tc.want)
			}
		}
	}
}

// endlessServer answers every request with a JSON body that never ends.
func endlessServer(t *testing.T) *httptest.Server {
	t.Helper()
	chunk := []byte(strings.Repeat(`{"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},`, 1000))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[`)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A response body that never ends is cut off at maxResponseBytes, even
// with no time limit: exit 3, one line that says so.
func TestEndlessResponseIsCutOff(t *testing.T) {
	srv := endlessServer(t)
	kubeconfig := kubeconfigFor(t, srv.URL, "{token: t}")
	for _, tc := range []struct {
		args []string
		what string
	}{
		{[]string{"prune", "-f", exampleJob}, "discovering the API groups"},
		{[]string{"explain-structural", "--all"}, "listing CustomResourceDefinitions"},
	} {
		args := append(tc.args, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "--request-timeout=0")
		code, stdout, stderr, _ := runBounded(t, 60*time.Second, args...)
		want := "error: " + tc.what + " on " + srv.URL + ` (context "c"): the response is larger than 128 MiB`
		if code != ExitInternal || stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %d bytes, stderr:\n%s\nwant exit 3, one line: %s", tc.args[0], code, len(stdout), stderr, want)
		}
	}
}

// The body bound: a body of exactly the bound is read whole, one byte more
// fails, and a Content-Length over it fails at the first read.
func TestLimitedBody(t *testing.T) {
	const limit = 1000
	for _, tc := range []struct {
		size          int
		contentLength int64
		wantErr       bool
	}{
		{limit, limit, false},
		{limit, -1, false},
		{limit + 1, -1, true},
		{10, limit + 1, true},
	} {
		rt := limitResponses(limit)(roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{Body: io.NopCloser(bytes.NewReader(make([]byte, tc.size))), ContentLength: tc.contentLength}, nil
		}))
		resp, err := rt.RoundTrip(&http.Request{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		var tooLarge *responseTooLargeError
		if got := errors.As(err, &tooLarge); got != tc.wantErr || len(b) > limit {
			t.Errorf("%d bytes, Content-Length %d: read %d, error %v; want an error: %v", tc.size, tc.contentLength, len(b), err, tc.wantErr)
		}
		if !tc.wantErr && len(b) != tc.size {
			t.Errorf("%d bytes: read %d", tc.size, len(b))
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
