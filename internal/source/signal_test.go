//go:build unix

package source

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM or SIGINT while a chart renders: the run dies of the signal,
// crd-helm is stopped with it, and nothing of the render is left in
// $TMPDIR. The rendered files were left in kubectl-crd-charts-*, and
// crd-helm went on alone.
func TestRenderSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			chart := fakeCompanion(t, "hang")
			tmp, pidFile := t.TempDir(), filepath.Join(t.TempDir(), "pid")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), renderHelperEnv+"="+chart, fakeHelmPIDEnv+"="+pidFile, "TMPDIR="+tmp)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			for start := time.Now(); pid == 0; time.Sleep(10 * time.Millisecond) {
				data, _ := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(string(data))
				if time.Since(start) > 20*time.Second {
					cmd.Process.Kill()
					t.Fatal("crd-helm did not start")
				}
			}
			if entries, _ := os.ReadDir(tmp); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "kubectl-crd-charts-") {
				t.Errorf("in $TMPDIR while rendering: %v", entries)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("the run did not end within 20s of %v", sig)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("run: %v", err)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("the run ended with %v, want killed by %v", ws, sig)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
				t.Errorf("left in $TMPDIR: %v", entries)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("crd-helm (%d) outlived the run", pid)
			}
		})
	}
}

// alive says whether the process pid runs (a zombie, killed and not yet
// reaped by the init that inherited it, does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return !os.IsNotExist(err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}
