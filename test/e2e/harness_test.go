// Package e2e drives the built kubectl-crd binary, the way users run it.
package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binDir holds the kubectl-crd binary built once for the package.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "kubectl-crd-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		defer os.RemoveAll(dir)
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-crd"), "./cmd/kubectl-crd")
		build.Dir = repoRoot()
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building kubectl-crd:", err)
			return 3
		}
		binDir = dir
		return m.Run()
	}())
}

// repoRoot is the checkout's top directory (two levels above test/e2e).
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// Test is a fluent handle on one command run.
type Test struct {
	t   *testing.T
	dir string
	env []string
	in  string
}

// NewTest starts a test of the built binary; skipped under -short.
func NewTest(t *testing.T) *Test {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	return &Test{t: t, dir: repoRoot(), env: []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir()}}
}

// WithDir runs in dir (default: the repository root).
func (x *Test) WithDir(dir string) *Test { x.dir = dir; return x }

// WithEnv adds environment variables (KEY=VALUE).
func (x *Test) WithEnv(kv ...string) *Test { x.env = append(x.env, kv...); return x }

// WithStdin feeds stdin.
func (x *Test) WithStdin(s string) *Test { x.in = s; return x }

// Result is a finished run.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs a program (kubectl-crd or kubectl, looked up on the sandboxed PATH).
func (x *Test) Run(name string, args ...string) Result {
	x.t.Helper()
	path := name
	if name == "kubectl-crd" {
		path = filepath.Join(binDir, name)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = x.dir
	cmd.Env = x.env
	cmd.Stdin = strings.NewReader(x.in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		x.t.Fatalf("running %s: %v", name, err)
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}
