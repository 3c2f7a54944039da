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
	// Kept fields keep kustomize's order: the output is kustomize's own, less the pruned lines.
	plain := x.Run(kustomize, "build", "--enable-alpha-plugins", "examples/krm")
	if plain.Code != 0 || !isSubsequence(r.Stdout, plain.Stdout) {
		t.Errorf("the output is not kustomize's less some lines:\n%s\nkustomize's:\n%s", r.Stdout, plain.Stdout)
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
	// Kept fields keep kustomize's key order: the output is its input less the pruned lines.
	if !isSubsequence(r.Stdout, built.Stdout) {
		t.Errorf("the output is not the input less some lines:\n%s\ninput:\n%s", r.Stdout, built.Stdout)
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
	before, _ := os.ReadFile(filepath.Join(dir, "widget.yaml"))
	r = x.Run(kustomize, "fn", "run", dir, "--enable-exec")
	b, _ := os.ReadFile(filepath.Join(dir, "widget.yaml"))
	if !isSubsequence(string(b), string(before)) {
		t.Errorf("in place: widget.yaml is not the original less some lines:\n%s", b)
	}
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
		!strings.Contains(r.Stderr+r.Stdout, `pruned unknown field "spec.colour"`) {
		t.Errorf("exit %d, widget.yaml:\n%s\nstdout:\n%s\nstderr:\n%s", r.Code, b, r.Stdout, r.Stderr)
	}
}

// isSubsequence reports whether the lines of out appear in in, in order:
// the function only removed lines, and kept the others (comments, key
// order) as they were.
func isSubsequence(out, in string) bool {
	inLines := strings.Split(in, "\n")
	i := 0
	for _, l := range strings.Split(out, "\n") {
		for i < len(inLines) && inLines[i] != l {
			i++
		}
		if i == len(inLines) {
			return false
		}
		i++
	}
	return true
}

// kustomize build of examples/krm-update: the function checks every bucket
// against its previous version and fails the build with the server's
// refusal (a CEL transition rule) and the KEP marker's.
func TestKRMKustomizeUpdate(t *testing.T) {
	x := NewTest(t)
	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "examples/krm-update")
	if r.Code != 1 || r.Stdout != "" {
		t.Fatalf("exit %d, want 1 and nothing on stdout:\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		`[error] storage.example.com/v1/Bucket/team-a/logs spec.region: update refused: x-kubernetes-validations: self == oldSelf: region is immutable (previous version: previous/buckets.yaml:2)`,
		`[error] storage.example.com/v1/Bucket/team-a/backups spec.owner: update refused: x-kubernetes-mutability: Immutable: cannot be changed (previous version: previous/buckets.yaml:12)`,
	} {
		if !strings.Contains(r.Stderr, want+"\n") {
			t.Errorf("stderr lacks\n  %s\nstderr:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "sizeGiB") {
		t.Errorf("a growing size is not refused:\n%s", r.Stderr)
	}
}

// The refusal that examples/krm-update promises is the server's: with the
// previous buckets stored, a server-side dry run of the new ones is refused
// for the region of logs, and not for the owner of backups (the server
// drops the mutability marker; kubectl crd enforces it).
func TestKRMUpdateAgreesWithServer(t *testing.T) {
	x := NewTest(t)
	k := kubectls[0].Path
	crd := "examples/krm-update/crd.yaml"
	// --validate=false: strict field validation refuses the marker the server does not know.
	if r := x.Run(k, "apply", "--validate=false", "-f", crd); r.Code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s", r.Code, r.Stderr)
	}
	t.Cleanup(func() { x.Run(k, "delete", "-f", crd, "--wait=false") })
	if r := x.Run(k, "wait", "--for=condition=Established", "--timeout=60s", "crd/buckets.storage.example.com"); r.Code != 0 {
		t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := x.Run(k, "apply", "-f", "examples/krm-update/previous/"); r.Code != 0 {
		t.Fatalf("kubectl apply previous/: exit %d\n%s", r.Code, r.Stderr)
	}
	r := x.Run(k, "apply", "--dry-run=server", "-f", "examples/krm-update/buckets.yaml")
	if r.Code == 0 || !strings.Contains(r.Stderr, "spec.region: Invalid value: \"us-east-1\": region is immutable") {
		t.Errorf("the server's dry run: exit %d, want the region refused:\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stderr, "backups") || !strings.Contains(r.Stdout, "bucket.storage.example.com/backups configured (server dry run)") {
		t.Errorf("the server refused backups, whose owner only the marker protects:\n%s\n%s", r.Stdout, r.Stderr)
	}
}

// Standalone and through kpt, the update check fails the run the same way.
func TestKRMUpdateStandaloneAndKpt(t *testing.T) {
	x := NewTest(t).WithDir(filepath.Join(repoRoot(), "examples", "krm-update"))
	r := x.Run("kubectl-crd", "krm", "check.yaml", "crd.yaml", "buckets.yaml")
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "region is immutable") {
		t.Errorf("standalone: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := exec.LookPath("kpt"); err != nil {
		t.Skip("no kpt on PATH")
	}
	// kpt runs exec functions in its own working directory: previous/ is found from there.
	dir := t.TempDir()
	for _, f := range []string{"crd.yaml", "buckets.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "krm-update", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r = x.Run("kpt", "fn", "eval", dir, "--exec", "kubectl-crd krm", "--fn-config", "check.yaml")
	out := r.Stdout + r.Stderr
	if r.Code == 0 || !strings.Contains(out, "region is immutable") || !strings.Contains(out, "cannot be changed") {
		t.Errorf("kpt: exit %d, output:\n%s", r.Code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "buckets.yaml")); !strings.Contains(string(b), "# moved from eu-west-1") {
		t.Errorf("kpt changed buckets.yaml on a failed run:\n%s", b)
	}
}
