package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOldObjectAsTheClusterPrintsIt: the old object of an update is an
// export of the real server (kubectl get -o yaml, which always names the
// namespace), the new one a manifest without a namespace. kubectl crd
// matches them as the server does (same group, kind, name, and the
// namespace kubectl sends the manifest to) and gives the server's verdict,
// offline and through the KRM function in a real kustomize build. Two
// exports of one object that differ are bad input naming both, whatever
// their order.
func TestOldObjectAsTheClusterPrintsIt(t *testing.T) {
	requireOwnCluster(t)
	const dir = "test/e2e/testdata/oldidentity"
	x := NewTest(t)
	k := kubectls[0].Path
	file := func(name string) string { return filepath.Join(dir, name) }
	run := func(args ...string) Result {
		t.Helper()
		r := x.Run(k, args...)
		if r.Code != 0 {
			t.Fatalf("kubectl %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r
	}
	run("apply", "-f", file("crd.yaml"))
	t.Cleanup(func() { x.Run(k, "delete", "-f", file("crd.yaml"), "--wait=false") })
	run("wait", "--for=condition=Established", "--timeout=60s", "crd/vaults.identity.example.com")
	applyRetrying(t, x, k, file("vault.yaml"))

	tmp := t.TempDir()
	export := func(name string) string {
		t.Helper()
		r := run("get", "vault", "keys", "-o", "yaml")
		if !strings.Contains(r.Stdout, "namespace: default") {
			t.Fatalf("the export names no namespace:\n%s", r.Stdout)
		}
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(r.Stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	live := export("live.yaml")

	for _, tc := range []struct{ manifest, refusal string }{
		{"moved.yaml", "region is immutable"},
		{"grown.yaml", ""},
	} {
		server := x.Run(k, "apply", "--dry-run=server", "-f", file(tc.manifest))
		if (server.Code != 0) != (tc.refusal != "") || !strings.Contains(server.Stderr, tc.refusal) {
			t.Fatalf("%s: the server's dry run: exit %d, want refused %v:\n%s", tc.manifest, server.Code, tc.refusal != "", server.Stderr)
		}
		want := 0
		if tc.refusal != "" {
			want = 1
		}
		r := x.Run("kubectl-crd", "check-update", "--offline", "--crd-file", file("crd.yaml"), "--old", live, "-f", file(tc.manifest))
		if r.Code != want || !strings.Contains(r.Stdout, tc.refusal) || strings.Contains(r.Stdout+r.Stderr, "a create") {
			t.Errorf("%s: check-update exit %d, want %d (the server's verdict):\n%s%s", tc.manifest, r.Code, want, r.Stdout, r.Stderr)
		}
	}

	// A label later, a second export: two old versions that differ.
	run("label", "vault", "keys", "team=a")
	newer := export("live-newer.yaml")
	for _, olds := range [][]string{{live, newer}, {newer, live}} {
		r := x.Run("kubectl-crd", "check-update", "--offline", "--crd-file", file("crd.yaml"), "--old", olds[0], "--old", olds[1], "-f", file("grown.yaml"))
		if r.Code != 2 || !strings.Contains(r.Stderr, olds[0]+":1") || !strings.Contains(r.Stderr, olds[1]+":1") {
			t.Errorf("--old %s --old %s: exit %d, want 2 naming both:\n%s%s", olds[0], olds[1], r.Code, r.Stdout, r.Stderr)
		}
	}
	// The same export twice is one old version.
	if r := x.Run("kubectl-crd", "check-update", "--offline", "--crd-file", file("crd.yaml"), "--old", live, "--old", live, "-f", file("moved.yaml")); r.Code != 1 {
		t.Errorf("one export given twice: exit %d, want 1:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// The KRM function, previous: the export, in a real kustomize build.
	build := t.TempDir()
	for _, f := range []string{"crd.yaml", "moved.yaml", "check.yaml"} {
		copyFile(t, file(f), filepath.Join(build, f))
	}
	copyFile(t, live, filepath.Join(build, "previous", "live.yaml"))
	kustomization := "resources:\n- crd.yaml\n- moved.yaml\ntransformers:\n- check.yaml\n"
	if err := os.WriteFile(filepath.Join(build, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", build)
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "spec.region: update refused: x-kubernetes-validations: self == oldSelf: region is immutable (previous version: previous/live.yaml:") {
		t.Errorf("kustomize build, previous: the export: exit %d, want 1 and the region refused:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	copyFile(t, newer, filepath.Join(build, "previous", "newer.yaml"))
	r = x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", build)
	if r.Code == 0 || !strings.Contains(r.Stderr, "previous/live.yaml:1") || !strings.Contains(r.Stderr, "previous/newer.yaml:1") {
		t.Errorf("kustomize build, two exports in previous/: exit %d, want a failure naming both:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// applyRetrying applies a file with kubectl, again while the server has
// not yet begun to serve a CRD it just established.
func applyRetrying(t *testing.T, x *Test, kubectl, file string) {
	t.Helper()
	var r Result
	for i := 0; i < 50; i++ {
		if r = x.Run(kubectl, "apply", "-f", file); r.Code == 0 {
			return
		}
		if !strings.Contains(r.Stderr, "the server could not find the requested resource") && !strings.Contains(r.Stderr, "no matches for kind") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("kubectl apply %s: exit %d\n%s", file, r.Code, r.Stderr)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if !filepath.IsAbs(from) {
		from = filepath.Join(repoRoot(), from)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
