package plugin

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// complete runs "kubectl-crd __complete args..." and returns the candidates
// and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	r := run(t, "", append([]string{"__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

const (
	directiveNoFiles  = ":4" // cobra.ShellCompDirectiveNoFileComp
	directiveFileExts = ":8" // cobra.ShellCompDirectiveFilterFileExt
)

// -o completes each command's formats, and each of them is one the command accepts.
func TestCompleteOutput(t *testing.T) {
	for _, tc := range []struct {
		args    []string // a run that succeeds, or finds something, with -o FORMAT appended
		formats []string
	}{
		{[]string{"explain-structural", "-f", exampleCRD}, []string{"text", "yaml", "json", "sarif", "junit", "github"}},
		{[]string{"prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob}, []string{"yaml", "json", "sarif", "junit", "github"}},
		{[]string{"check-update", "--offline", "--crd-file", exampleCRD, "--old", exampleJob, "-f", exampleJob}, []string{"text", "json", "sarif", "junit", "github"}},
		{[]string{"test", exampleSuite}, []string{"json", "sarif", "junit", "github"}},
	} {
		cmd := tc.args[0]
		for _, flag := range []string{"-o", "--output"} {
			got, directive := complete(t, cmd, flag, "")
			if diff := cmp.Diff(tc.formats, got); diff != "" || directive != directiveNoFiles {
				t.Errorf("%s %s: directive %s, candidates (-want +got):\n%s", cmd, flag, directive, diff)
			}
		}
		if got, _ := complete(t, cmd, "-o", "j"); !cmp.Equal(got, []string{"json", "junit"}) {
			t.Errorf("%s -o j: %q, want json, junit", cmd, got)
		}
		for _, format := range tc.formats {
			if r := run(t, "", append(tc.args, "-o", format)...); r.code != ExitOK && r.code != ExitFindings {
				t.Errorf("%s -o %s: completed, but exit %d:\n%s", cmd, format, r.code, r.stderr)
			}
		}
	}
}

// File flags complete YAML and JSON files (and directories, which the shells add).
func TestCompleteFileFlags(t *testing.T) {
	for _, args := range [][]string{
		{"explain-structural", "-f"},
		{"explain-structural", "--filename"},
		{"prune", "-f"},
		{"prune", "--crd-file"},
		{"prune", "--report"},
		{"check-update", "-f"},
		{"check-update", "--old"},
		{"check-update", "--crd-file"},
	} {
		got, directive := complete(t, append(args, "")...)
		if !cmp.Equal(got, []string{"yaml", "yml", "json"}) || directive != directiveFileExts {
			t.Errorf("%s: %q %s, want the extensions yaml, yml, json and %s", strings.Join(args, " "), got, directive, directiveFileExts)
		}
	}
}

// The subcommands complete under the display name "kubectl crd", and
// commands without arguments complete no files.
func TestCompleteCommands(t *testing.T) {
	got, directive := complete(t, "")
	var names []string
	for _, c := range got {
		name, desc, _ := strings.Cut(c, "\t")
		if desc == "" {
			t.Errorf("%q has no description", name)
		}
		names = append(names, name)
	}
	want := []string{"check-update", "completion", "explain-structural", "helm", "help", "holes", "lower-mutability", "prune", "test", "version"}
	if diff := cmp.Diff(want, names); diff != "" || directive != directiveNoFiles {
		t.Errorf("directive %s, commands (-want +got):\n%s", directive, diff)
	}
	if got, _ := complete(t, "ex"); len(got) != 1 || !strings.HasPrefix(got[0], "explain-structural\t") {
		t.Errorf("ex: %q", got)
	}
	for _, cmd := range []string{"prune", "check-update", "version"} {
		if got, directive := complete(t, cmd, ""); len(got) != 0 || directive != directiveNoFiles {
			t.Errorf("%s: %q %s, want nothing and no files", cmd, got, directive)
		}
	}
	got, _ = complete(t, "completion", "")
	if !cmp.Equal(got, shells) {
		t.Errorf("completion: %q, want %q", got, shells)
	}
}

func TestCompletionCommand(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "__start_kubectl-crd",
		"zsh":        "#compdef kubectl-crd",
		"fish":       "complete -c kubectl-crd",
		"powershell": "Register-ArgumentCompleter -CommandName 'kubectl-crd'",
	} {
		r := run(t, "", "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, want) || r.stderr != "" {
			t.Errorf("completion %s: exit %d, stdout lacks %q (%d bytes), stderr:\n%s", shell, r.code, want, len(r.stdout), r.stderr)
		}
		// The scripts ask kubectl-crd itself for the candidates.
		if !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: the script does not call __complete", shell)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "ksh"}, {"completion", "bash", "zsh"}} {
		if r := run(t, "", args...); r.code != ExitInput || r.stdout != "" {
			t.Errorf("%s: exit %d, want %d; stdout:\n%s", strings.Join(args, " "), r.code, ExitInput, r.stdout)
		}
	}
	r := run(t, "", "completion", "--help")
	for _, want := range []string{"kubectl crd completion bash|zsh|fish|powershell", "source <(kubectl crd completion bash)", "kubectl_complete-crd"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("completion --help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// writeKubeconfigOfContexts writes a kubeconfig of three contexts, two clusters and two users.
func writeKubeconfigOfContexts(t *testing.T, server string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["prod"] = &clientcmdapi.Cluster{Server: server}
	kc.Clusters["staging"] = &clientcmdapi.Cluster{Server: server}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "x"}
	kc.AuthInfos["viewer"] = &clientcmdapi.AuthInfo{Token: "y"}
	kc.Contexts["prod-admin"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "admin"}
	kc.Contexts["staging-viewer"] = &clientcmdapi.Context{Cluster: "staging", AuthInfo: "viewer"}
	kc.Contexts["staging-admin"] = &clientcmdapi.Context{Cluster: "staging", AuthInfo: "admin"}
	kc.CurrentContext = "prod-admin"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompleteKubeconfigNames(t *testing.T) {
	kubeconfig := writeKubeconfigOfContexts(t, "https://127.0.0.1:1")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--context", ""}, []string{"prod-admin", "staging-admin", "staging-viewer"}},
		{[]string{"--context", "staging-"}, []string{"staging-admin", "staging-viewer"}},
		{[]string{"prune", "--context", "p"}, []string{"prod-admin"}},
		{[]string{"explain-structural", "--context=s"}, []string{"staging-admin", "staging-viewer"}},
		{[]string{"--cluster", ""}, []string{"prod", "staging"}},
		{[]string{"check-update", "--user", "v"}, []string{"viewer"}},
	} {
		got, directive := complete(t, append([]string{"--kubeconfig", kubeconfig}, tc.args...)...)
		if diff := cmp.Diff(tc.want, got); diff != "" || directive != directiveNoFiles {
			t.Errorf("%s: directive %s, candidates (-want +got):\n%s", strings.Join(tc.args, " "), directive, diff)
		}
	}
}

// hangingServer accepts connections and never answers.
func hangingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(done)
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// Without a cluster, completions from the cluster are empty: no error on
// stdout or stderr, no file completion, and no wait beyond --request-timeout.
func TestCompleteWithoutCluster(t *testing.T) {
	emptyKubeconfig := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(emptyKubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, kubeconfigArgs := range map[string][]string{
		"hanging server":  {"--kubeconfig", writeKubeconfig(t, hangingServer(t)), "--request-timeout", "300ms"},
		"refused":         {"--kubeconfig", writeKubeconfig(t, "https://127.0.0.1:1")},
		"no cluster":      {"--kubeconfig", emptyKubeconfig},
		"no such context": {"--kubeconfig", writeKubeconfig(t, "https://127.0.0.1:1"), "--context", "nope"},
	} {
		for _, args := range [][]string{
			{"explain-structural", ""},
			{"explain-structural", "certificates.cert-manager.io", "--version", ""},
			{"prune", "-n", ""},
		} {
			args := append(append([]string{"__complete"}, kubeconfigArgs...), args...)
			start := time.Now()
			r := run(t, "", args...)
			took := time.Since(start)
			if r.code != 0 || r.stdout != directiveNoFiles+"\n" || r.stderr != "Completion ended with directive: ShellCompDirectiveNoFileComp\n" {
				t.Errorf("%s: %s: exit %d, stdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
			if took > 3*time.Second {
				t.Errorf("%s: %s took %v", name, strings.Join(args, " "), took)
			}
		}
	}
}

// --offline commands never contact the cluster, not even to complete.
func TestCompleteOffline(t *testing.T) {
	kubeconfig := writeKubeconfig(t, hangingServer(t))
	start := time.Now()
	got, directive := complete(t, "--kubeconfig", kubeconfig, "prune", "--offline", "-n", "")
	if len(got) != 0 || directive != directiveNoFiles {
		t.Errorf("prune --offline -n: %q %s", got, directive)
	}
	// With a request, this would wait for completionTimeout.
	if took := time.Since(start); took > completionTimeout/2 {
		t.Errorf("prune --offline -n took %v: it asked the cluster", took)
	}
}

func TestCompletionContext(t *testing.T) {
	for _, tc := range []struct {
		timeout, want time.Duration
	}{
		{0, completionTimeout},
		{2 * time.Second, 2 * time.Second},
		{time.Minute, time.Minute},
	} {
		ctx, cancel := completionContext(&rest.Config{Timeout: tc.timeout})
		deadline, ok := ctx.Deadline()
		cancel()
		if left := time.Until(deadline); !ok || left > tc.want || left < tc.want-time.Second {
			t.Errorf("--request-timeout %v: deadline in %v, want %v", tc.timeout, left, tc.want)
		}
	}
}

// kubectl runs kubectl_complete-crd with the words after "crd"; it must hand
// them to cobra's __complete unchanged.
func TestCompletionShim(t *testing.T) {
	const shim = "../../completion/kubectl_complete-crd"
	b, err := os.ReadFile(shim)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != "#!/usr/bin/env sh" || lines[len(lines)-1] != `exec kubectl-crd __complete "$@"` {
		t.Errorf("%s:\n%s", shim, b)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if !strings.HasPrefix(l, "#") {
			t.Errorf("%s: more than a comment between the shebang and the exec: %q", shim, l)
		}
	}
	if fi, err := os.Stat(shim); err != nil || fi.Mode().Perm()&0o111 != 0o111 {
		t.Errorf("%s is not executable: %v %v", shim, fi.Mode(), err)
	}
}
