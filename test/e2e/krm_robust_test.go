package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kustomize build piped into the function with no config: the plain
// documents come back without kyaml's index annotations.
func TestKRMPlainStdinAnnotations(t *testing.T) {
	x := NewTest(t)
	built := x.Run(kustomize, "build", "--enable-alpha-plugins", "examples/krm")
	if built.Code != 0 {
		t.Fatalf("kustomize build: exit %d\n%s", built.Code, built.Stderr)
	}
	r := NewTest(t).WithStdin(built.Stdout).Run("kubectl-crd", "krm")
	if r.Code != 0 || strings.Contains(r.Stdout, "config.kubernetes.io/") || strings.Contains(r.Stdout, "colour") || !strings.Contains(r.Stdout, "size: 3") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// In a kustomization, crdPaths outside the kustomization's directory (by
// ../ or by a symbolic link) fail the build, unless the config sets
// loadRestrictor: LoadRestrictionsNone.
func TestKRMKustomizeLoadRestrictor(t *testing.T) {
	dir := copyKRMExample(t)
	outside := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.Rename(filepath.Join(dir, "crd.yaml"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked-crd.yaml")); err != nil {
		t.Fatal(err)
	}
	check, err := os.ReadFile(filepath.Join(dir, "check.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	x := NewTest(t)
	build := func(config string) Result {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "check.yaml"), []byte(string(check)+config), 0o600); err != nil {
			t.Fatal(err)
		}
		kustomization := "resources: [widget.yaml]\ntransformers: [check.yaml]\n"
		if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
			t.Fatal(err)
		}
		return x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	}
	for _, path := range []string{outside, "linked-crd.yaml"} {
		r := build("crdPaths: " + path + "\n")
		if r.Code == 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "crdPaths: "+path+": ") ||
			!strings.Contains(r.Stderr, "outside the function's working directory (set loadRestrictor: LoadRestrictionsNone") {
			t.Errorf("crdPaths %s: exit %d, stdout:\n%s\nstderr:\n%s", path, r.Code, r.Stdout, r.Stderr)
		}
		r = build("crdPaths: " + path + "\nloadRestrictor: LoadRestrictionsNone\n")
		if r.Code != 0 || strings.Contains(r.Stdout, "colour") || !strings.Contains(r.Stdout, "size: 3") {
			t.Errorf("crdPaths %s, LoadRestrictionsNone: exit %d, stdout:\n%s\nstderr:\n%s", path, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// The built binary with stdout on /dev/full: every command and format
// exits 3 with the write error (the plugin's test covers them in process;
// this one covers main and krm).
func TestWriteErrorsBinary(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	full.Close()
	for _, c := range []string{
		"kubectl-crd explain-structural -f examples/maintenance/crd.yaml",
		"kubectl-crd explain-structural -f examples/maintenance/crd.yaml -o yaml",
		"kubectl-crd check-update --offline --crd-file examples/maintenance/crd.yaml --old examples/maintenance/job.yaml -f examples/maintenance/job.yaml",
		"kubectl-crd prune --offline --crd-file examples/maintenance/crd.yaml -f examples/maintenance/job.yaml -o json",
		"kubectl-crd krm examples/krm/check.yaml examples/krm/crd.yaml examples/krm/widget.yaml",
		"kustomize build --enable-alpha-plugins examples/krm | kubectl-crd krm",
	} {
		r := NewTest(t).Run("bash", "-c", "("+strings.ReplaceAll(c, "kustomize ", kustomize+" ")+") >/dev/full")
		if r.Code != 3 || !strings.Contains(r.Stderr, "error: writing the output: write /dev/stdout: no space left on device") {
			t.Errorf("%s >/dev/full: exit %d, stderr:\n%s", c, r.Code, r.Stderr)
		}
	}
}
