//go:build unix

package plugin

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/term"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// credentials runs a kubeconfig's credential plugin as client-go's exec
// authenticator does (k8s.io/client-go/plugin/pkg/client/auth/exec), which
// no deadline reaches: the same config through both, the plugin sees the
// same arguments, environment (KUBERNETES_EXEC_INFO, the kubeconfig's env,
// what is inherited) and ExecCredential, the server the same token; a
// plugin that fails fails both, and so does interactiveMode Always without
// a terminal, the plugin not run.
func TestCredentialsAsClientGo(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv("KUBECTL_CRD_TEST_RECORD", record)
	t.Setenv("KUBECTL_CRD_TEST_INHERITED", "from the parent")
	t.Setenv("KUBECTL_CRD_TEST_OVERRIDDEN", "from the parent")
	env := []clientcmdapi.ExecEnvVar{{Name: "KUBECTL_CRD_TEST_OVERRIDDEN", Value: "from the kubeconfig"},
		{Name: "KUBERNETES_EXEC_INFO", Value: "from the kubeconfig"}}
	type run struct {
		err     bool
		record  string
		request []string
	}
	through := func(cg bool, conf clientcmdapi.ExecConfig) run {
		t.Helper()
		os.Remove(record)
		mu.Lock()
		auth = nil
		mu.Unlock()
		c := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, ExecProvider: &conf}
		if !cg {
			c = (&credentials{}).apply(c)
		}
		var r run
		client, err := rest.HTTPClientFor(c)
		if err == nil {
			var resp *http.Response
			if resp, err = client.Get(srv.URL + "/api"); err == nil {
				resp.Body.Close()
			}
		}
		r.err = err != nil
		data, _ := os.ReadFile(record)
		r.record = string(data)
		mu.Lock()
		r.request = auth
		mu.Unlock()
		return r
	}
	const recordScript = "{ printf 'args:'; printf ' [%s]' \"$@\"; echo; env | LC_ALL=C sort; } > \"$KUBECTL_CRD_TEST_RECORD\"\n"
	for _, tc := range []struct {
		name, script, apiVersion string
		mode                     clientcmdapi.ExecInteractiveMode
		clusterInfo, fails       bool
	}{
		{name: "v1", apiVersion: "client.authentication.k8s.io/v1", mode: clientcmdapi.NeverExecInteractiveMode},
		{name: "v1beta1, cluster info", apiVersion: "client.authentication.k8s.io/v1beta1", mode: clientcmdapi.IfAvailableExecInteractiveMode, clusterInfo: true},
		{name: "v1, cluster info, if available", apiVersion: "client.authentication.k8s.io/v1", mode: clientcmdapi.IfAvailableExecInteractiveMode, clusterInfo: true},
		{name: "fails", apiVersion: "client.authentication.k8s.io/v1", mode: clientcmdapi.NeverExecInteractiveMode, script: "exit 7\n", fails: true},
		{name: "always, no terminal", apiVersion: "client.authentication.k8s.io/v1", mode: clientcmdapi.AlwaysExecInteractiveMode, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode == clientcmdapi.AlwaysExecInteractiveMode && term.IsTerminal(int(os.Stdin.Fd())) {
				t.Skip("standard input is a terminal")
			}
			script := tc.script
			if script == "" {
				script = fmt.Sprintf(`echo '{"apiVersion":%q,"kind":"ExecCredential","status":{"token":"plugin-token"}}'`, tc.apiVersion)
			}
			path := filepath.Join(t.TempDir(), "plugin.sh")
			if err := os.WriteFile(path, []byte("#!/bin/sh\n"+recordScript+script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			conf := clientcmdapi.ExecConfig{Command: path, Args: []string{"get-token", "--a b", ""}, Env: env,
				APIVersion: tc.apiVersion, InteractiveMode: tc.mode, ProvideClusterInfo: tc.clusterInfo}
			want, got := through(true, conf), through(false, conf)
			if got.err != want.err || want.err != tc.fails {
				t.Errorf("failed: client-go %v, kubectl crd %v; want %v", want.err, got.err, tc.fails)
			}
			if got.record != want.record {
				t.Errorf("the plugin saw, of its arguments and environment, %q, and client-go's %q", lineDiff(got.record, want.record), lineDiff(want.record, got.record))
			}
			if tc.mode == clientcmdapi.AlwaysExecInteractiveMode && want.record != "" {
				t.Errorf("client-go ran the plugin:\n%s", want.record)
			}
			if fmt.Sprint(got.request) != fmt.Sprint(want.request) {
				t.Errorf("the server was sent %q, want (client-go) %q", got.request, want.request)
			}
			if !tc.fails && fmt.Sprint(want.request) != "[Bearer plugin-token]" {
				t.Errorf("client-go sent %q", want.request)
			}
		})
	}
}

// lineDiff are the lines of a that b lacks.
func lineDiff(a, b string) []string {
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !slices.Contains(strings.Split(b, "\n"), l) {
			out = append(out, l)
		}
	}
	return out
}
