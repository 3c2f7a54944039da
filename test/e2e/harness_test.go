// Package e2e drives the built kubectl-crd binary, the way users run it.
package e2e

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
)

// Built once for the package (see setup): kubectl-crd in binDir, the
// cluster, and the kubectls that run the plugin.
var (
	binDir    string
	cluster   *testCluster
	kubectls  []kubectlBinary
	kustomize string
)

// kubectlBinary is a real kubectl the plugin is run through.
type kubectlBinary struct {
	Name, Path string
}

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
		// The binaries' cache of CRD indexes, shared by the tests (NewTest).
		crdCache = filepath.Join(dir, "crd-cache")
		// Before m.Run, so that cold builds (minutes) do not count against the tests' own -timeout
		// alarm; go test still kills the whole binary at -timeout plus a minute, hence the
		// README's -timeout 60m.
		if err := setup(dir); err != nil {
			fmt.Fprintln(os.Stderr, "e2e setup:", err)
			cluster.stop()
			return 3
		}
		defer cluster.stop()
		return m.Run()
	}())
}

// setup builds kubectl-crd, next to its completion shim, and kubectl (from
// k8s.io/kubectl, test/kubectl), installs kustomize, and starts the test API
// server. The binaries go to _output/bin, where the test API server's goes
// (hack/test-apiserver.sh), each in a directory of its own, since the tests
// put these directories on PATH. Go leaves an up-to-date binary alone, so a
// run after the first only checks them (a second each) instead of linking
// them again (some 10 seconds of CPU each on two cores); test/bench uses the
// same kubectl-crd. A second run in the same checkout replaces a binary only
// when its sources changed.
func setup(dir string) error {
	root := repoRoot()
	bin := filepath.Join(root, "_output", "bin")
	binDir = filepath.Join(bin, "plugin")
	if err := goBuild(root, ".", filepath.Join(binDir, "kubectl-crd"), "", "./cmd/kubectl-crd"); err != nil {
		return err
	}
	// The completion shim is installed next to the binary, as the release archives ship it.
	shim, err := os.ReadFile(filepath.Join(root, "completion", "kubectl_complete-crd"))
	if err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(binDir, "kubectl_complete-crd"), shim, 0o755); err != nil {
		return err
	}
	// kubectl, kustomize and the test API server are built at once: on a
	// fresh machine, each build has phases (a link) that leave a core idle.
	// crd-helm, the companion that renders Helm charts, goes beside
	// kubectl-crd, where the release archives put it.
	builds := []func() error{buildKubectl(root), func() error { return installKustomize(dir) }, func() error { return buildAPIServer(root) },
		func() error { return goBuild(root, ".", filepath.Join(binDir, "crd-helm"), "", "./cmd/crd-helm") }}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, build := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = build()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// The machine's kubectl, when it has one (a gcloud dispatcher on CI machines).
	if p, err := exec.LookPath("kubectl"); err == nil {
		kubectls = append(kubectls, kubectlBinary{Name: "kubectl on PATH (" + p + ")", Path: p})
	}
	cluster, err = startCluster(root, dir)
	return err
}

// buildKubectl returns the build of kubectl from k8s.io/kubectl
// (test/kubectl), which adds it to kubectls.
func buildKubectl(root string) func() error {
	return func() error {
		// kubectl reports the Kubernetes version of its k8s.io/kubectl library (v0.x.y is v1.x.y).
		kubectlDir := filepath.Join(root, "test", "kubectl")
		v, err := exec.Command("go", "-C", kubectlDir, "list", "-m", "-f", "{{.Version}}", "k8s.io/kubectl").Output()
		if err != nil {
			return fmt.Errorf("reading the k8s.io/kubectl version of test/kubectl: %v", err)
		}
		version := "v1." + strings.TrimPrefix(strings.TrimSpace(string(v)), "v0.")
		ldflags := "-X k8s.io/component-base/version.gitVersion=" + version + " -X k8s.io/client-go/pkg/version.gitVersion=" + version
		kubectl := filepath.Join(repoRoot(), "_output", "bin", "kubectl-"+version, "kubectl")
		if err := goBuild(root, kubectlDir, kubectl, ldflags, "."); err != nil {
			return err
		}
		kubectls = append(kubectls, kubectlBinary{Name: "kubectl " + version, Path: kubectl})
		return nil
	}
}

// installKustomize installs kustomize, for the KRM function (the version
// the project tests with), from dir, outside the module.
func installKustomize(dir string) error {
	kustomizeDir := filepath.Join(repoRoot(), "_output", "bin", "kustomize-"+kustomizeVersion)
	install := exec.Command("go", "install", "sigs.k8s.io/kustomize/kustomize/v5@"+kustomizeVersion)
	install.Dir = dir // outside the module: go install pkg@version
	install.Env = append(os.Environ(), "GOBIN="+kustomizeDir, "GOFLAGS=")
	install.Stdout, install.Stderr = os.Stderr, os.Stderr
	if err := install.Run(); err != nil {
		return fmt.Errorf("installing kustomize %s: %v", kustomizeVersion, err)
	}
	kustomize = filepath.Join(kustomizeDir, "kustomize")
	return nil
}

// kustomizeVersion is the kustomize the KRM function is tested with.
const kustomizeVersion = "v5.8.2"

func goBuild(root, dir, out, ldflags, pkg string) error {
	args := []string{"-C", dir, "build", "-o", out}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	build := exec.Command("go", append(args, pkg)...)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s: %v", out, err)
	}
	return nil
}

// writeIfChanged writes a file another run may be executing: not at all
// when it holds data already, else by a rename, never in place.
func writeIfChanged(path string, data []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), mode); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

var (
	sourcesOnce sync.Once
	sourcesErr  error
)

// readSources reads every file setup built from, during the tests: go test
// reuses a passing result while the test binary and the files the test
// process opened while testing are unchanged, and setup's builds run in
// other processes, before the tests. Without it, a change to
// cmd/kubectl-crd, cmd/crd-helm, the completion shim, test/kubectl or test/apiserver
// would pass as "(cached)".
func readSources(root string) error {
	list := exec.Command("go", "list", "-deps", "-f", "{{if and .Module .Module.Main}}{{.Dir}}{{end}}", "./cmd/kubectl-crd", "./cmd/crd-helm")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		return fmt.Errorf("go list: %v", err)
	}
	dirs := append(strings.Fields(string(out)), root, filepath.Join(root, "test", "kubectl"), filepath.Join(root, "test", "apiserver"))
	files := []string{filepath.Join(root, "completion", "kubectl_complete-crd"), filepath.Join(root, "hack", "test-apiserver.sh")}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() && !strings.HasSuffix(e.Name(), "_test.go") {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, f := range files {
		if _, err := os.ReadFile(f); err != nil {
			return err
		}
	}
	return nil
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
	sourcesOnce.Do(func() { sourcesErr = readSources(repoRoot()) })
	if sourcesErr != nil {
		t.Fatal(sourcesErr)
	}
	return &Test{t: t, dir: repoRoot(), env: []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"KUBECONFIG=" + cluster.kubeconfig,
		crdindex.CacheDirEnv + "=" + crdCache,
	}}
}

// crdCache is the cache of CRD indexes of the binaries the tests run, in
// the run's directory: what one test indexes, the next reads from it.
var crdCache string

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

// Run runs a program: kubectl-crd (the built one), a path, or a name looked
// up on PATH.
func (x *Test) Run(name string, args ...string) Result {
	x.t.Helper()
	r, err := x.run(name, args...)
	if err != nil {
		x.t.Fatalf("running %s: %v", name, err)
	}
	return r
}

// run is Run for any goroutine: an error when the program does not start.
func (x *Test) run(name string, args ...string) (Result, error) {
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
		return Result{}, err
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}, nil
}

// inTurn calls fn(worker, i) for every i below n, on that many goroutines
// at once (worker is which), and returns when all are done: for tests that
// mostly wait for the server or a program.
func inTurn(workers, n int, fn func(worker, i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for worker := 0; worker < workers; worker++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(worker, i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
