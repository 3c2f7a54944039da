package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kustomize build runs kubectl-crd krm as an exec transformer
// (examples/krm): the output is what the server stores. (kustomize build
// itself drops comments; key order is kept.)
func TestKRMKustomizeBuild(t *testing.T) {
	x := NewTest(t)
	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "examples/krm")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{"kind: Widget\nmetadata:\n  name: w\n  namespace: team-a\nspec:\n  size: 3\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}
	for _, gone := range []string{"colour", "lables"} {
		if strings.Contains(r.Stdout, gone) {
			t.Errorf("output still has %q:\n%s", gone, r.Stdout)
		}
	}
}

// Without --enable-exec, kustomize skips the function without a word: the
// output is the input, unpruned. docs/krm-function.md warns about it; this
// test notices if kustomize ever changes.
func TestKRMKustomizeWithoutEnableExec(t *testing.T) {
	x := NewTest(t)
	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "examples/krm")
	if r.Code != 0 || !strings.Contains(r.Stdout, "colour: red") {
		t.Errorf("exit %d, want the unpruned output:\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// An error result (failOn: MissingCRD) fails the build: exit 1, nothing on
// stdout, the result on stderr.
func TestKRMKustomizeErrorResult(t *testing.T) {
	x := NewTest(t)
	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "test/e2e/testdata/krm-missing")
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "no CustomResourceDefinition for nowhere.example.com/v1, kind Gizmo") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Standalone, piped: kustomize build DIR | kubectl-crd krm config.yaml -.
func TestKRMStandalonePipe(t *testing.T) {
	x := NewTest(t)
	// The kustomization without its transformer: the objects as kustomize renders them.
	built := x.Run(kustomize, "build", "--enable-alpha-plugins", "examples/krm")
	if built.Code != 0 {
		t.Fatalf("kustomize build: exit %d\n%s", built.Code, built.Stderr)
	}
	r := NewTest(t).WithStdin(built.Stdout).Run("kubectl-crd", "krm", "examples/krm/check.yaml", "-")
	if r.Code != 0 || strings.Contains(r.Stdout, "colour") || !strings.Contains(r.Stdout, "size: 3") || strings.Contains(r.Stdout, "config.kubernetes.io/index") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// copyKRMExample copies examples/krm without its kustomization (for the
// tools that read a directory of resources and function configs).
func copyKRMExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"crd.yaml", "widget.yaml", "check.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "krm", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kustomize fn run finds the function through its config's annotation:
// --dry-run prints the result, without it the files are pruned in place,
// comments kept.
func TestKRMKustomizeFnRun(t *testing.T) {
	dir := copyKRMExample(t)
	x := NewTest(t)
	r := x.Run(kustomize, "fn", "run", dir, "--enable-exec", "--dry-run")
	if r.Code != 0 || strings.Contains(r.Stdout, "colour") || !strings.Contains(r.Stdout, "size: 3 # three") {
		t.Fatalf("--dry-run: exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "widget.yaml")); !strings.Contains(string(b), "colour") {
		t.Errorf("--dry-run changed widget.yaml:\n%s", b)
	}
	r = x.Run(kustomize, "fn", "run", dir, "--enable-exec")
	b, _ := os.ReadFile(filepath.Join(dir, "widget.yaml"))
	if r.Code != 0 || strings.Contains(string(b), "colour") || !strings.Contains(string(b), "# the widget of team a") {
		t.Errorf("in place: exit %d, widget.yaml:\n%s\nstderr:\n%s", r.Code, b, r.Stderr)
	}
}

// kpt fn eval --exec runs the same binary, with the results it prints.
func TestKRMKpt(t *testing.T) {
	x := NewTest(t)
	if _, err := exec.LookPath("kpt"); err != nil {
		t.Skip("no kpt on PATH")
	}
	dir := copyKRMExample(t)
	config := filepath.Join(t.TempDir(), "check.yaml")
	if err := os.Rename(filepath.Join(dir, "check.yaml"), config); err != nil {
		t.Fatal(err)
	}
	r := x.Run("kpt", "fn", "eval", dir, "--exec", "kubectl-crd krm", "--fn-config", config)
	b, _ := os.ReadFile(filepath.Join(dir, "widget.yaml"))
	if r.Code != 0 || strings.Contains(string(b), "colour") || !strings.Contains(string(b), "size: 3 # three") ||
		!strings.Contains(r.Stderr+r.Stdout, `UnknownField "spec.colour" removed`) {
		t.Errorf("exit %d, widget.yaml:\n%s\nstdout:\n%s\nstderr:\n%s", r.Code, b, r.Stdout, r.Stderr)
	}
}
