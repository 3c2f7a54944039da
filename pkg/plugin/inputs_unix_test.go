//go:build unix

package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO named *.yaml in a directory read with -R is refused, exit 2, by
// every command that reads directories: kubectl waits on it for a writer
// forever, and so did kubectl crd.
func TestRecursiveFIFOIsRefused(t *testing.T) {
	dir := t.TempDir()
	job, err := os.ReadFile(exampleJob)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.yaml"), job, 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	want := "error: " + fifo + `: a named pipe (FIFO) in the directory "` + dir + `"`
	for _, args := range [][]string{
		{"prune", "--offline", "--crd-file", exampleCRD, "-R", "-f", dir},
		{"prune", "--offline", "--crd-file", dir, "-f", exampleJob},
		{"check-update", "--offline", "--crd-file", exampleCRD, "--old", exampleJob, "-R", "-f", dir},
	} {
		done := make(chan result, 1)
		go func() { done <- run(t, "", args...) }()
		select {
		case r := <-done:
			if r.code != ExitInput || r.stdout != "" || !strings.HasPrefix(r.stderr, want) {
				t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s...", args, r.code, r.stdout, r.stderr, want)
			}
		case <-time.After(20 * time.Second):
			// Open the FIFO for writing and close it: the reader sees its end.
			if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
				f.Close()
			}
			<-done
			t.Errorf("%v: still waiting on the FIFO after 20 s", args)
		}
	}
}
