package e2e

import (
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// noFiles is cobra's ShellCompDirectiveNoFileComp, the directive of every
// completion from the cluster or the kubeconfig.
const noFiles = ":4"

// completed splits a __complete answer into the candidates (without their
// descriptions) and the directive line.
func completed(t *testing.T, r Result, what string) ([]string, string) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, r.Code, r.Stdout, r.Stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	var names []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		names = append(names, name)
	}
	return names, lines[len(lines)-1]
}

// clusterCRDs is what kubectl get says the cluster's CRDs are, sorted.
func clusterCRDs(t *testing.T) []string {
	t.Helper()
	r := NewTest(t).Run(kubectls[0].Path, "get", "crd", "-o", "jsonpath={.items[*].metadata.name}")
	if r.Code != 0 {
		t.Fatalf("kubectl get crd: exit %d\n%s", r.Code, r.Stderr)
	}
	names := strings.Fields(r.Stdout)
	sort.Strings(names)
	return names
}

// The contexts of the test server's kubeconfig and the namespaces it serves.
var (
	testContexts   = []string{"crd-test", "crd-test-crds-only", "crd-test-denied", "crd-test-objects-only", "crd-test-other", "crd-test-refused"}
	testNamespaces = []string{"default", "kube-node-lease", "kube-public", "kube-system", "other"}
)

func TestCompletionFromCluster(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)
	crds := clusterCRDs(t)
	x := NewTest(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// Every CRD of the cluster by its full name, one LIST.
		{[]string{"explain-structural", ""}, crds},
		{[]string{"explain-structural", "maint"}, []string{exampleCRDName}},
		// A CRD already named is not offered again.
		{[]string{"explain-structural", exampleCRDName, ""}, slices.DeleteFunc(slices.Clone(crds), func(n string) bool { return n == exampleCRDName })},
		{[]string{"explain-structural", "--all", ""}, nil},
		// --version: the versions of the named CRD, by any name kubectl accepts.
		{[]string{"explain-structural", exampleCRDName, "--version", ""}, crdVersions(t, exampleCRDName)},
		{[]string{"explain-structural", "legacythings", "--version", ""}, []string{"v1"}},
		{[]string{"explain-structural", "--version", ""}, nil},
		{[]string{"prune", "-n", ""}, testNamespaces},
		{[]string{"check-update", "--namespace", "kube-p"}, []string{"kube-public"}},
		{[]string{"prune", "--context", ""}, testContexts},
		{[]string{"--context", "crd-test-ot"}, []string{"crd-test-other"}},
	} {
		what := "kubectl-crd __complete " + strings.Join(tc.args, " ")
		got, directive := completed(t, x.Run("kubectl-crd", append([]string{"__complete"}, tc.args...)...), what)
		if diff := cmp.Diff(tc.want, got); diff != "" || directive != noFiles {
			t.Errorf("%s: directive %s, candidates (-want +got):\n%s", what, directive, diff)
		}
	}
	if len(crds) < 2 || !slices.Contains(crds, exampleCRDName) || !slices.Contains(crds, "legacythings.example.com") {
		t.Errorf("kubectl get crd: %q, want at least the example CRD and the legacy one", crds)
	}
}

// A user the cluster refuses gets no candidates, and no error in the shell.
func TestCompletionDenied(t *testing.T) {
	requireOwnCluster(t)
	x := NewTest(t)
	for _, args := range [][]string{
		{"--context", "crd-test-denied", "explain-structural", ""},
		{"explain-structural", "--context=crd-test-denied", "legacythings", "--version", ""},
		{"prune", "--context", "crd-test-denied", "-n", ""},
	} {
		r := x.Run("kubectl-crd", append([]string{"__complete"}, args...)...)
		if r.Code != 0 || r.Stdout != noFiles+"\n" || r.Stderr != "Completion ended with directive: ShellCompDirectiveNoFileComp\n" {
			t.Errorf("kubectl-crd __complete %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
}

// kubectl completes "kubectl crd ..." by running kubectl_complete-crd, found
// on PATH next to kubectl-crd.
func TestCompletionThroughKubectl(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)
	crds := clusterCRDs(t)
	for _, k := range kubectls {
		t.Run(k.Name, func(t *testing.T) {
			x := NewTest(t)
			for _, tc := range []struct {
				args []string
				want []string
			}{
				{[]string{"crd", "explain-structural", ""}, crds},
				{[]string{"crd", "explain-structural", exampleCRDName, "--version", ""}, crdVersions(t, exampleCRDName)},
				{[]string{"crd", "prune", "-n", ""}, testNamespaces},
				{[]string{"crd", "--context", ""}, testContexts},
				{[]string{"crd", "explain-structural", "--context", "crd-test-denied", ""}, nil},
			} {
				what := "kubectl __complete " + strings.Join(tc.args, " ")
				r := x.Run(k.Path, append([]string{"__complete"}, tc.args...)...)
				got, directive := completed(t, r, what)
				if diff := cmp.Diff(tc.want, got); diff != "" || directive != noFiles {
					t.Errorf("%s: directive %s, candidates (-want +got):\n%s\nstderr:\n%s", what, directive, diff, r.Stderr)
				}
				// kubectl passes the plugin's stderr on; the shell scripts drop it, but it holds no error.
				if strings.Contains(strings.ToLower(r.Stderr), "error") || strings.Contains(r.Stderr, "forbidden") {
					t.Errorf("%s: stderr:\n%s", what, r.Stderr)
				}
			}
			// The subcommands come from kubectl-crd too, with its descriptions.
			got, _ := completed(t, x.Run(k.Path, "__complete", "crd", "ex"), "kubectl __complete crd ex")
			if !cmp.Equal(got, []string{"explain-structural"}) {
				t.Errorf("kubectl __complete crd ex: %q", got)
			}
		})
	}
}

// In bash, with kubectl's completion script and the bash-completion package
// (which the script needs): TAB after "kubectl crd explain-structural ".
func TestCompletionInBash(t *testing.T) {
	requireOwnCluster(t)
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		// .ci/run installs it, and requires the test to run.
		if os.Getenv("KUBECTL_CRD_REQUIRE_BASH_COMPLETION") != "" {
			t.Fatalf("needs the bash-completion package (KUBECTL_CRD_REQUIRE_BASH_COMPLETION is set): %v", err)
		}
		t.Skipf("needs the bash-completion package: %v", err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash")
	}
	applyExampleCRD(t)
	k := kubectls[0].Path
	// The words as the shell splits them; COMPREPLY is what TAB offers.
	script := `source ` + bashCompletion + `
source <("$KUBECTL" completion bash)
complete_words() {
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
  COMPREPLY=(); __start_kubectl 2>/dev/null
  printf '%s\n' "${COMPREPLY[@]}"; echo --
}
complete_words "$KUBECTL" crd explain-structural ""
complete_words "$KUBECTL" crd prune --context crd-test-ot
complete_words "$KUBECTL" crd explain-structural --context crd-test-denied ""
`
	r := NewTest(t).WithEnv("KUBECTL="+k).Run(bash, "-c", script)
	if r.Code != 0 {
		t.Fatalf("bash: exit %d\n%s", r.Code, r.Stderr)
	}
	want := strings.Join(clusterCRDs(t), "\n") + "\n--\ncrd-test-other\n--\n\n--\n"
	if diff := cmp.Diff(want, r.Stdout); diff != "" {
		t.Errorf("COMPREPLY (-want +got):\n%s", diff)
	}
}

// crdVersions is what kubectl get says the CRD's versions are.
func crdVersions(t *testing.T, name string) []string {
	t.Helper()
	r := NewTest(t).Run(kubectls[0].Path, "get", "crd", name, "-o", "jsonpath={.spec.versions[*].name}")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) == "" {
		t.Fatalf("kubectl get crd %s: exit %d\n%s", name, r.Code, r.Stderr)
	}
	return strings.Fields(r.Stdout)
}
