package e2e

import (
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
