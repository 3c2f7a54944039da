package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/release"
)

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// realHelm is a real helm: its command (helm.sh/helm/v4/cmd/helm) at the
// version go.mod requires (crd-helm's), a tool of the module (go.mod's
// "tool" line), so that it is built with the modules this one builds with
// (Helm's own go.mod asks for k8s.io v0.37.1, this one v0.37.2: installed
// apart, a fresh machine compiled client-go and the rest a second time, some
// 4 minutes), into _output/bin. Built on the first call only, so that the
// suite's other tests do not wait for it.
func realHelm(t *testing.T) string {
	t.Helper()
	helmOnce.Do(func() {
		list := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "helm.sh/helm/v4")
		list.Dir = repoRoot()
		v, err := list.Output()
		if err != nil {
			helmErr = fmt.Errorf("reading the helm.sh/helm/v4 version of go.mod: %v", err)
			return
		}
		version := strings.TrimSpace(string(v))
		path := filepath.Join(repoRoot(), "_output", "bin", "helm-"+version, "helm")
		if helmErr = goBuild(repoRoot(), ".", path, "", "helm.sh/helm/v4/cmd/helm"); helmErr == nil {
			helmPath = path
		}
	})
	if helmErr != nil {
		t.Fatal(helmErr)
	}
	return helmPath
}

// helmPluginDir lays out the directory of the Helm plugin as the release
// archive holds it (internal/release): the binaries (the suite's, linked)
// and the plugin files rendered from helm-plugin/ for this platform.
func helmPluginDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kubectl-crd")
	p := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	for _, name := range []string{p.Binary(), p.Companion()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(binDir, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range release.HelmPluginFiles {
		tmpl, err := os.ReadFile(filepath.Join(repoRoot(), release.HelmPluginDir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		data, err := release.RenderHelmPlugin(name, tmpl, "v0.0.0-e2e", p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// helmTest is a Test with Helm's directories of its own (HELM_PLUGINS
// under HELM_DATA_HOME) and the plugin crd-check and its post-renderer
// installed there from the archive's layout, as docs/upgrades.md says.
func helmTest(t *testing.T) (*Test, string) {
	x := NewTest(t)
	helm := realHelm(t)
	home := t.TempDir()
	x.WithEnv("HELM_DATA_HOME="+filepath.Join(home, "data"), "HELM_PLUGINS="+filepath.Join(home, "data", "plugins"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DRIVER=memory", "HELM_MEMORY_DRIVER_DATA="+helmReleases(t, "[]"))
	dir := helmPluginDir(t)
	for _, src := range []string{dir, filepath.Join(dir, "crd-check-post-renderer")} {
		if r := x.Run(helm, "plugin", "install", src); r.Code != 0 {
			t.Fatalf("helm plugin install %s: exit %d\n%s%s", src, r.Code, r.Stdout, r.Stderr)
		}
	}
	r := x.Run(helm, "plugin", "list")
	for _, name := range []string{"crd-check", "crd-check-post-renderer"} {
		if !strings.Contains(r.Stdout, name) {
			t.Fatalf("helm plugin list does not list %s:\n%s%s", name, r.Stdout, r.Stderr)
		}
	}
	return x, helm
}

// TestHelmPlugin: the Helm plugin installed into a real helm, a release of
// examples/helm-plugin/orders-1 installed on the test API server with a
// value that widens its CRD's enum (sizes={S,M,L}), and an order of a
// user's of size L. helm crd-check upgrade then: 0 to orders-2 with the
// release's values (the enum keeps L); 1 with --reset-values (the chart's
// sizes drop L), naming the order; 1 to orders-3 (quantity required),
// naming it; and the release, the CRD and the order untouched.
func TestHelmPlugin(t *testing.T) {
	requireOwnCluster(t)
	x, helm := helmTest(t)
	const ns = "shop"
	chart := func(name string) string { return filepath.Join(repoRoot(), "examples", "helm-plugin", name) }
	run := func(args ...string) Result {
		t.Helper()
		r := x.Run(helm, args...)
		t.Logf("helm %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		return r
	}
	kubectl := kubectls[0].Path
	t.Cleanup(func() { x.Run(kubectl, "delete", "crd", "orders.shop.example.com", "--ignore-not-found", "--wait") })
	helmInstall(t, x, helm, kubectl, ns, "shop", chart("orders-1"), "--set", "sizes={S,M,L}")
	if r := x.Run(kubectl, "wait", "--for=condition=Established", "--timeout=60s", "crd/orders.shop.example.com"); r.Code != 0 {
		t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := x.Run(kubectl, "apply", "-n", ns, "-f", chart("big-order.yaml")); r.Code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		hurt bool
	}{
		{[]string{"orders-2"}, 0, false},
		{[]string{"orders-2", "--reset-values"}, 1, true},
		{[]string{"orders-3"}, 1, true},
	} {
		r := run(append([]string{"crd-check", "upgrade", "shop", chart(tc.args[0]), "-n", ns}, tc.args[1:]...)...)
		hurt := strings.Contains(r.Stdout+r.Stderr, "Order "+ns+"/big")
		if r.Code != tc.code || hurt != tc.hurt {
			t.Errorf("helm crd-check upgrade shop %s: exit %d, names Order %s/big: %v; want exit %d, %v", strings.Join(tc.args, " "), r.Code, ns, hurt, tc.code, tc.hurt)
		}
	}
	// Read only: the CRD has its enum, the order is there.
	if r := x.Run(kubectl, "get", "crd", "orders.shop.example.com", "-o", "jsonpath={.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.enum}"); r.Stdout != `["S","M","L"]` {
		t.Errorf("the CRD's enum after the checks: %q %s", r.Stdout, r.Stderr)
	}
	if r := x.Run(kubectl, "get", "order", "big", "-n", ns, "-o", "name"); r.Code != 0 {
		t.Errorf("the order after the checks: exit %d %s", r.Code, r.Stderr)
	}
	helmPostRender(t, x, helm, ns, chart("orders-2"))
}

// helmReleases writes a file of releases for Helm's memory driver.
func helmReleases(t *testing.T, list string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "releases.json")
	if err := os.WriteFile(file, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// helmInstall installs a release on the test API server. The server has
// no core API, so no Secrets, where Helm keeps its releases: the helm
// runs use Helm's memory driver (HELM_DRIVER=memory, set by helmTest),
// loaded from a file (HELM_MEMORY_DRIVER_DATA, Helm's own for tests), with
// which Helm talks to no cluster. So helm install records the release, and
// kubectl applies the manifest it printed to the server, which is what
// Helm would have applied; the runs after it load the release. The plugin
// does not know: it hands helm its environment.
func helmInstall(t *testing.T, x *Test, helm, kubectl, ns string, args ...string) {
	t.Helper()
	install := x.Run(helm, append([]string{"install", "-n", ns, "-o", "json"}, args...)...)
	if install.Code != 0 {
		t.Fatalf("helm install: exit %d\n%s", install.Code, install.Stderr)
	}
	var rel struct{ Manifest string }
	if err := json.Unmarshal([]byte(install.Stdout), &rel); err != nil || rel.Manifest == "" {
		t.Fatalf("helm install printed no release with a manifest (%v):\n%s", err, install.Stdout)
	}
	if r := x.WithStdin(rel.Manifest).Run(kubectl, "apply", "-n", ns, "-f", "-"); r.Code != 0 {
		t.Fatalf("kubectl apply of the release's manifest: exit %d\n%s", r.Code, r.Stderr)
	}
	x.WithStdin("").WithEnv("HELM_MEMORY_DRIVER_DATA=" + helmReleases(t, "["+install.Stdout+"]"))
}

// helmPostRender: the post-renderer on helm template's manifests of
// orders-2, against the cluster of TestHelmPlugin: with sizes={S,M,L} they
// are clean and come out byte for byte, as kubectl-crd helm post-render
// (Helm 3's executable) and as Helm 4's plugin crd-check-post-renderer;
// with the chart's sizes, which drop L, both fail, naming the order.
func helmPostRender(t *testing.T, x *Test, helm, ns, chart string) {
	template := func(args ...string) Result {
		t.Helper()
		r := x.WithStdin("").Run(helm, append([]string{"template", "shop", chart, "-n", ns}, args...)...)
		t.Logf("helm template %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		return r
	}
	clean, breaking := template("--set", "sizes={S,M,L}"), template()
	if clean.Code != 0 || breaking.Code != 0 || !strings.Contains(clean.Stdout, "kind: CustomResourceDefinition") {
		t.Fatalf("helm template: exit %d, %d", clean.Code, breaking.Code)
	}
	r := x.WithStdin(clean.Stdout).Run("kubectl-crd", "helm", "post-render", "-n", ns)
	if r.Code != 0 || r.Stdout != clean.Stdout {
		t.Errorf("post-render of clean manifests: exit %d, stdout the same bytes: %v\n%s", r.Code, r.Stdout == clean.Stdout, r.Stderr)
	}
	r = x.WithStdin(breaking.Stdout).Run("kubectl-crd", "helm", "post-render", "-n", ns)
	t.Logf("helm template | kubectl-crd helm post-render -n %s: exit %d\n%s", ns, r.Code, r.Stderr)
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "Order "+ns+"/big") {
		t.Errorf("post-render of breaking manifests: exit %d, stdout %q, want 1, nothing, the order named on stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// Helm 4 writes the manifests anew on their way to a post-renderer plugin and back
	// (["S","M"] comes back as ["S", "M"]): the plugin's output is that of one that
	// passes its input through, cat.
	identity := filepath.Join(t.TempDir(), "identity")
	if err := os.MkdirAll(identity, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(identity, "plugin.yaml"), []byte("apiVersion: v1\ntype: postrenderer/v1\nname: identity\nversion: 1.0.0\n"+
		"runtime: subprocess\nruntimeConfig:\n  platformCommand:\n  - command: cat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := x.Run(helm, "plugin", "install", identity); r.Code != 0 {
		t.Fatalf("helm plugin install %s: exit %d\n%s", identity, r.Code, r.Stderr)
	}
	passed := template("--post-renderer", "identity", "--set", "sizes={S,M,L}")
	plugin := []string{"--post-renderer", "crd-check-post-renderer", "--post-renderer-args=--namespace=" + ns}
	if r := template(append(plugin, "--set", "sizes={S,M,L}")...); r.Code != 0 || passed.Code != 0 || r.Stdout != passed.Stdout {
		t.Errorf("helm template --post-renderer crd-check-post-renderer, clean: exit %d, the manifests of --post-renderer identity (exit %d): %v\n%s",
			r.Code, passed.Code, r.Stdout == passed.Stdout, r.Stderr)
	}
	if r := template(plugin...); r.Code == 0 || !strings.Contains(r.Stderr, "crd-check-post-renderer") {
		t.Errorf("helm template --post-renderer crd-check-post-renderer, breaking: exit %d, want a failure naming the post-renderer\n%s", r.Code, r.Stderr)
	}
}
