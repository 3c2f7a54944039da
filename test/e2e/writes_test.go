//go:build unix

package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReportToRedirectedStream: the report named /dev/stderr, /dev/stdout,
// /proc/self/fd/N or the log's own path while that stream is appended to a
// log by the shell: the log keeps what it held, then what the run wrote.
// It used to be replaced by the report, exit 0.
func TestReportToRedirectedStream(t *testing.T) {
	x := NewTest(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := filepath.Join(binDir, "kubectl-crd")
	for _, tc := range []struct{ report, redirect string }{
		{"/dev/stderr", "2>>LOG"},
		{"/dev/stdout", ">>LOG"},
		{"/proc/self/fd/3", "3>>LOG"},
		{"LOG", "2>>LOG"},
	} {
		log := filepath.Join(t.TempDir(), "ci.log")
		if err := os.WriteFile(log, []byte("earlier steps\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		report := strings.ReplaceAll(tc.report, "LOG", log)
		script := `"$0" "$@" ` + strings.ReplaceAll(tc.redirect, "LOG", `"$LOG"`)
		r := x.WithEnv("LOG="+log).Run(bash, append([]string{"-c", script, bin}, append(pruneOffline, "--report", report)...)...)
		b, _ := os.ReadFile(log)
		if r.Code != 0 || !strings.HasPrefix(string(b), "earlier steps\n") || !strings.Contains(string(b), `"path": "spec.privileged"`) {
			t.Errorf("--report %s %s: exit %d, stderr:\n%s\nthe log holds:\n%s", report, tc.redirect, r.Code, r.Stderr, b)
		}
	}
}

// TestInPlaceStdinUnderAnotherName: prune --in-place -f /dev/stdin < w.yaml
// used to rewrite w.yaml although --in-place refuses -f -.
func TestInPlaceStdinUnderAnotherName(t *testing.T) {
	x := NewTest(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(repoRoot(), exampleJobs))
	if err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(w, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/dev/stdin", "/proc/self/fd/0", w} {
		script := `"$0" "$@" < "$W"`
		r := x.WithEnv("W="+w).Run(bash, "-c", script, filepath.Join(binDir, "kubectl-crd"),
			"prune", "--offline", "--crd-file", exampleCRD, "-f", name, "--in-place")
		want := "error: --in-place rewrites files: -f " + name + " is standard input, which has none\n"
		if r.Code != 2 || r.Stderr != want {
			t.Errorf("-f %s: exit %d, stderr:\n%s\nwant exit 2 and %s", name, r.Code, r.Stderr, want)
		}
		if after, _ := os.ReadFile(w); string(after) != string(b) {
			t.Fatalf("-f %s < w.yaml: w.yaml was rewritten", name)
		}
	}
}

// TestInPlaceSignals: SIGINT or SIGTERM at a random point of prune
// --in-place over many files leaves no temporary file, in the files'
// directory or in TMPDIR; each file is the original or fully rewritten,
// and the process dies of the signal (or ends first, exit 0), within
// seconds. Temporary files were left in 6 of 19 runs, and a run could hang.
func TestInPlaceSignals(t *testing.T) {
	x := NewTest(t)
	orig, err := os.ReadFile(filepath.Join(repoRoot(), exampleJobs))
	if err != nil {
		t.Fatal(err)
	}
	const files = 100
	setup := func() (dir, tmp string) {
		dir, tmp = t.TempDir(), t.TempDir()
		for i := range files {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("j%03d.yaml", i)), orig, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir, tmp
	}
	args := []string{"prune", "--offline", "--crd-file", filepath.Join(repoRoot(), exampleCRD), "--in-place", "-f"}
	// One run to the end: the rewritten text, and how long a run takes.
	dir, _ := setup()
	start := time.Now()
	if r := x.Run("kubectl-crd", append(args, dir)...); r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	took := time.Since(start)
	pruned, err := os.ReadFile(filepath.Join(dir, "j000.yaml"))
	if err != nil || string(pruned) == string(orig) {
		t.Fatalf("not rewritten: %v", err)
	}

	for run := range 16 {
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[run%2]
		dir, tmp := setup()
		cmd := exec.Command(filepath.Join(binDir, "kubectl-crd"), append(args, dir)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Most of a run is its writes, at the end: signal in its second half.
		time.Sleep(took/2 + time.Duration(rand.Int64N(int64(took))))
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("run %d: still running 20s after %v", run, sig)
			continue
		}
		var ee *exec.ExitError
		switch {
		case err == nil: // done before the signal
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() && ee.Sys().(syscall.WaitStatus).Signal() == sig:
		default:
			t.Errorf("run %d: ended with %v, want killed by %v or exit 0", run, err, sig)
		}
		rewritten := 0
		for _, d := range []string{dir, tmp} {
			entries, _ := os.ReadDir(d)
			if hasTemp(entries) {
				t.Errorf("run %d (%v): a temporary file was left in %s", run, sig, d)
			}
		}
		for i := range files {
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("j%03d.yaml", i)))
			switch string(b) {
			case string(pruned):
				rewritten++
			case string(orig):
			default:
				t.Errorf("run %d: j%03d.yaml is neither the original nor rewritten:\n%s", run, i, b)
			}
		}
		t.Logf("run %d: %v, %d of %d files rewritten", run, sig, rewritten, files)
	}
}
