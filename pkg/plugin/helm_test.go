package plugin

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// fakeHelm is a helm that writes its arguments, one a line, to a file and
// prints out (a release) or fails with stderr. It returns the file.
func fakeHelm(t *testing.T, env map[string]string, out string, code int) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a shell script for helm")
	}
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + args + "\nprintf '%s' '" + out + "'\necho 'helm says no' >&2\nexit " + string(rune('0'+code)) + "\n"
	helm := filepath.Join(dir, "helm")
	if err := os.WriteFile(helm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env["HELM_BIN"] = helm
	old := getenv
	getenv = func(k string) string { return env[k] }
	t.Cleanup(func() { getenv = old })
	return args
}

// TestHelmUpgradeArgs: helm upgrade gets every argument but the check's
// own, after --dry-run=server --output=json; a release with nothing to
// apply is a warning, exit 0.
func TestHelmUpgradeArgs(t *testing.T) {
	args := fakeHelm(t, map[string]string{}, `{"name":"shop","namespace":"shop","manifest":""}`, 0)
	r := run(t, "", "helm", "upgrade", "shop", "./chart", "--strict", "--set", "a=b", "--fail-on", "Breaking", "-n", "shop",
		"--wait", "--ignore-missing-crds", "--check-output=json", "--reset-values")
	if r.code != ExitOK || !strings.Contains(r.stderr, "Warning: release shop: helm upgrade would apply no objects: nothing was checked") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	data, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"upgrade", "--dry-run=server", "--output=json", "shop", "./chart", "--set", "a=b", "-n", "shop", "--wait", "--reset-values"}
	if diff := cmp.Diff(want, strings.Fields(string(data))); diff != "" {
		t.Errorf("helm's arguments (-want +got):\n%s", diff)
	}
}

// TestHelmUpgradeRefuses: exit 2 for what the check cannot run, helm
// failing included, with what helm said.
func TestHelmUpgradeRefuses(t *testing.T) {
	fakeHelm(t, map[string]string{}, "", 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no release"},
		{[]string{"--strict"}, "no release"},
		{[]string{"shop", "c", "-o", "yaml"}, "-o: the check runs helm upgrade with --dry-run=server --output=json itself"},
		{[]string{"shop", "c", "--output=table"}, "--output=table: the check runs helm upgrade"},
		{[]string{"shop", "c", "--dry-run=client"}, "--dry-run=client: the check runs helm upgrade"},
		{[]string{"shop", "c", "--fail-on", "Nothing"}, "--fail-on"},
		{[]string{"shop", "c", "--chunk-size", "x"}, "chunk-size"},
		{[]string{"shop", "c"}, "helm says no"},
	} {
		r := run(t, "", append([]string{"helm", "upgrade"}, tc.args...)...)
		if r.code != ExitInput || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if r := run(t, "", "helm", "upgrade", "--help"); r.code != ExitOK || !strings.Contains(r.stdout, "helm crd-check upgrade my-release") || strings.Contains(r.stdout, "Global Flags") {
		t.Errorf("--help: exit %d\n%s", r.code, r.stdout)
	}
}

// TestHelmSettings: Helm's cluster settings become kubectl's flags, its
// flags over its environment, what kubectl's flags say over both.
func TestHelmSettings(t *testing.T) {
	flags := pflag.NewFlagSet("kube", pflag.ContinueOnError)
	cf := newConfigFlags(genericiooptions.NewTestIOStreamsDiscard(), flags, nil)
	if err := flags.Parse([]string{"--token=mine"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HELM_KUBECONTEXT": "env-context", "HELM_KUBEASGROUPS": "a,b", "HELM_NAMESPACE": "env-ns",
		"HELM_KUBETOKEN": "helms", "KUBECONFIG": "/not/read/here"}
	args := []string{"upgrade", "--kube-context", "flag-context", "--kube-insecure-skip-tls-verify", "rel", "-n=flag-ns", "--kube-ca-file=/ca", "--", "--kube-as-user", "x"}
	if err := helmSettings(flags, func(k string) string { return env[k] }, args); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"context": *cf.Context, "groups": *cf.ImpersonateGroup, "namespace": *cf.Namespace, "token": *cf.BearerToken,
		"insecure": *cf.Insecure, "ca": *cf.CAFile, "as": *cf.Impersonate, "kubeconfig": *cf.KubeConfig}
	want := map[string]any{"context": "flag-context", "groups": []string{"a", "b"}, "namespace": "flag-ns", "token": "mine",
		"insecure": true, "ca": "/ca", "as": "", "kubeconfig": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubectl's flags (-want +got):\n%s", diff)
	}
}

// TestHelmPostRenderFails: manifests that cannot be checked (no cluster)
// are not passed on: nothing on stdout, a non-zero exit.
func TestHelmPostRenderFails(t *testing.T) {
	fakeHelm(t, map[string]string{}, "", 0)
	manifests := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"
	r := run(t, manifests, "helm", "post-render", "--kubeconfig", filepath.Join(t.TempDir(), "none"), "--request-timeout=2s")
	if r.code == ExitOK || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, want a failure and nothing\n%s", r.code, r.stdout, r.stderr)
	}
	if !slices.Contains([]int{ExitInput, ExitInternal, ExitFindings}, r.code) {
		t.Errorf("exit %d", r.code)
	}
}
