//go:build linux

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nothing of a chart's rendering is left in $TMPDIR by a run of the
// plugin or of the function, nor when SIGTERM ends it while a chart
// renders: the run dies of the signal, and crd-helm with it. The
// function left kubectl-crd-charts-* after every run; both left it, and
// a crd-helm rendering on alone, after a signal.
func TestSourceHelmLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir(), "TMPDIR="+tmp)
	widget := filepath.Join(repoRoot(), "examples", "krm", "widget.yaml")
	chart := filepath.Join(repoRoot(), "examples", "helm", "widgets")
	config := standaloneConfig(t, t.TempDir(), "check.yaml", chart, "chartValues: {crds: {enabled: true}}\n")
	for _, args := range [][]string{{"prune", "--offline", "--crd-file", chart, "--set", "crds.enabled=true", "-f", widget}, {"krm", config, widget}} {
		if r := x.Run("kubectl-crd", args...); r.Code > 1 {
			t.Fatalf("%s: exit %d\n%s", args[0], r.Code, r.Stderr)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
			t.Errorf("%s: left in $TMPDIR: %v", args[0], entries)
		}
	}

	slow := bombChart(t, `{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}`)
	config = standaloneConfig(t, t.TempDir(), "check.yaml", slow, "")
	for _, args := range [][]string{{"prune", "--offline", "--crd-file", slow, "-f", widget}, {"krm", config, widget}} {
		cmd := exec.Command(filepath.Join(binDir, "kubectl-crd"), args...)
		cmd.Env = x.env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		helm := waitForProcess(t, slow)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("%s: ended with %v, want killed by SIGTERM", args[0], err)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
			t.Errorf("%s, SIGTERM: left in $TMPDIR: %v", args[0], entries)
		}
		if running(helm) {
			syscall.Kill(helm, syscall.SIGKILL)
			t.Errorf("%s: crd-helm (%d) outlived the run", args[0], helm)
		}
	}
}

// waitForProcess is the process id of the crd-helm that renders chart,
// once it has run a moment.
func waitForProcess(t *testing.T, chart string) int {
	t.Helper()
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(50 * time.Millisecond) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			cmdline, _ := os.ReadFile(p)
			args := strings.Split(string(cmdline), "\x00")
			if len(args) > 1 && filepath.Base(args[0]) == "crd-helm" && strings.Contains(string(cmdline), "\x00"+chart+"\x00") {
				var pid int
				if _, err := fmt.Sscan(filepath.Base(filepath.Dir(p)), &pid); err == nil {
					time.Sleep(500 * time.Millisecond)
					return pid
				}
			}
		}
	}
	t.Fatalf("no crd-helm rendering %s", chart)
	return 0
}

// running says whether the process pid runs (a zombie, killed and not
// yet reaped by the init that inherited it, does not).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
