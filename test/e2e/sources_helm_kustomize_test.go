package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The KRM function run by kustomize build with crdPaths a chart of the
// kustomization (examples/helm/widgets, its CRD behind crds.enabled):
// crd-helm is found beside the kubectl-crd kustomize runs, and with
// chartValues the build is the one with the same CRD as a file
// (examples/krm/crd.yaml); without them the object misses its CRD, and
// the build fails closed.
func TestSourceHelmKustomize(t *testing.T) {
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	dir := t.TempDir()
	root := repoRoot()
	copyTo(t, filepath.Join(dir, "widget.yaml"), readTestFile(t, filepath.Join(root, "examples", "krm", "widget.yaml")))
	copyTo(t, filepath.Join(dir, "crd.yaml"), readTestFile(t, filepath.Join(root, "examples", "krm", "crd.yaml")))
	for _, f := range []string{"Chart.yaml", "values.yaml", "templates/crd.yaml", "templates/namespace.yaml"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, "widgets", f)), 0o755); err != nil {
			t.Fatal(err)
		}
		copyTo(t, filepath.Join(dir, "widgets", f), readTestFile(t, filepath.Join(root, "examples", "helm", "widgets", f)))
	}
	copyTo(t, filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- widget.yaml\ntransformers:\n- check.yaml\n"))
	check := func(crdPaths, extra string) {
		copyTo(t, filepath.Join(dir, "check.yaml"), execCheck(crdPaths, "failOn: [NonStructural, MissingCRD]\n"+extra))
	}
	build := func() Result { return x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir) }

	check("crd.yaml", "")
	want := build()
	if want.Code != 0 || !strings.Contains(want.Stdout, "kind: Widget") {
		t.Fatalf("the CRD as a file: exit %d\n%s\n%s", want.Code, want.Stdout, want.Stderr)
	}
	check("widgets", "chartValues: {crds: {enabled: true}}\n")
	got := build()
	if got.Code != want.Code || got.Stdout != want.Stdout || got.Stderr != want.Stderr {
		t.Fatalf("the chart: exit %d\n%s\n%s\nwant:\n%s\n%s", got.Code, got.Stdout, got.Stderr, want.Stdout, want.Stderr)
	}
	check("widgets", "")
	off := build()
	if off.Code == 0 || !strings.Contains(off.Stderr, "no CustomResourceDefinition for example.com/v1, kind Widget") {
		t.Fatalf("the chart without its value: exit %d\n%s\n%s", off.Code, off.Stdout, off.Stderr)
	}
}

// The function's load restriction holds for the files a chart of
// crdPaths reads: under kustomize build, a chart whose file is a symbolic
// link out of the kustomization (to a token) is refused, naming the link
// and where it leads, and the token is in no output (Helm's loader
// followed the link, and the chart's `fail` printed the file); with
// loadRestrictor: LoadRestrictionsNone the link is followed, as helm does.
func TestSourceHelmKustomizeLoadRestrictor(t *testing.T) {
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	dir := t.TempDir()
	root := repoRoot()
	copyTo(t, filepath.Join(dir, "widget.yaml"), readTestFile(t, filepath.Join(root, "examples", "krm", "widget.yaml")))
	for _, f := range []string{"Chart.yaml", "values.yaml", "templates/crd.yaml"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, "widgets", f)), 0o755); err != nil {
			t.Fatal(err)
		}
		copyTo(t, filepath.Join(dir, "widgets", f), readTestFile(t, filepath.Join(root, "examples", "helm", "widgets", f)))
	}
	copyTo(t, filepath.Join(dir, "widgets", "templates", "leak.yaml"), []byte(`{{ fail (.Files.Get "files/token") }}`+"\n"))
	token := filepath.Join(t.TempDir(), "token")
	copyTo(t, token, []byte("top-secret-token\n"))
	if err := os.MkdirAll(filepath.Join(dir, "widgets", "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(token, filepath.Join(dir, "widgets", "files", "token")); err != nil {
		t.Fatal(err)
	}
	copyTo(t, filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- widget.yaml\ntransformers:\n- check.yaml\n"))
	build := func(extra string) Result {
		copyTo(t, filepath.Join(dir, "check.yaml"), execCheck("widgets", "chartValues: {crds: {enabled: true}}\n"+extra))
		return x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	}
	r := build("")
	real, _ := filepath.EvalSymlinks(token)
	want := "widgets: files/token: a symbolic link to " + real + ", outside the function's working directory (set loadRestrictor: LoadRestrictionsNone in the function config to read it)"
	if r.Code == 0 || r.Stdout != "" || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "top-secret") {
		t.Errorf("a link out of the kustomization: exit %d\n%s\n%s\nwant: %s", r.Code, r.Stdout, r.Stderr, want)
	}
	r = build("loadRestrictor: LoadRestrictionsNone\n")
	if r.Code == 0 || !strings.Contains(r.Stderr, "top-secret-token") {
		t.Errorf("LoadRestrictionsNone: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
