//go:build unix

package e2e

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pruneOffline are the arguments of an offline prune of the example jobs.
var pruneOffline = []string{"prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJobs}

// TestReportToFullDevice: as root, --report /dev/full used to replace the
// device node by a regular file. Now the write fails, exit 3, and the
// device stays. A node of the same device in a test directory goes first,
// so that a binary that still replaces it does no harm to the machine's.
func TestReportToFullDevice(t *testing.T) {
	x := NewTest(t)
	if os.Getuid() != 0 {
		t.Skip("as root only: others cannot replace /dev/full anyway")
	}
	var devs []string
	own := filepath.Join(t.TempDir(), "full")
	if err := syscall.Mknod(own, syscall.S_IFCHR|0o666, int(unixDev(1, 7))); err == nil {
		// Usable unless the file system is mounted nodev.
		if f, err := os.OpenFile(own, os.O_WRONLY, 0); err == nil {
			f.Close()
			devs = append(devs, own)
		}
	}
	devs = append(devs, "/dev/full")
	for _, dev := range devs {
		r := x.Run("kubectl-crd", append(pruneOffline, "--report", dev)...)
		fi, err := os.Lstat(dev)
		if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("--report %s: no longer a character device (%v, %v)", dev, fi.Mode(), err)
		}
		want := "error: --report: write " + dev + ": no space left on device\n"
		if r.Code != 3 || !strings.HasSuffix(r.Stderr, want) {
			t.Errorf("--report %s: exit %d, stderr:\n%s\nwant exit 3 and %q", dev, r.Code, r.Stderr, want)
		}
		if entries, _ := os.ReadDir(filepath.Dir(dev)); hasTemp(entries) {
			t.Errorf("a temporary file was left in %s", filepath.Dir(dev))
		}
	}
}

// unixDev is the device number of major:minor, as Linux encodes it.
func unixDev(major, minor uint64) uint64 {
	return (major&0xfff)<<8 | (minor & 0xff) | (minor&^0xff)<<12 | (major&^0xfff)<<32
}

func hasTemp(entries []os.DirEntry) bool {
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".kubectl-crd-") {
			return true
		}
	}
	return false
}

// TestReportToFIFO: a FIFO made by mkfifo, and a process substitution of
// bash (>(...), a /dev/fd path to a pipe), get the report through the pipe.
func TestReportToFIFO(t *testing.T) {
	x := NewTest(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if out, err := exec.Command("mkfifo", fifo).CombinedOutput(); err != nil {
		t.Fatalf("mkfifo: %v\n%s", err, out)
	}
	got := make(chan string, 1)
	go func() {
		// O_RDWR does not wait for a writer: a binary that replaces the FIFO
		// fails the test instead of hanging it.
		f, err := os.OpenFile(fifo, os.O_RDWR, 0)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		var s strings.Builder
		buf := make([]byte, 1<<16)
		for !strings.HasSuffix(s.String(), "}\n") {
			f.SetReadDeadline(time.Now().Add(30 * time.Second))
			n, err := f.Read(buf)
			s.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- s.String()
	}()
	r := x.Run("kubectl-crd", append(pruneOffline, "--report", fifo)...)
	if r.Code != 0 {
		t.Fatalf("--report FIFO: exit %d\n%s", r.Code, r.Stderr)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v", err)
	}
	if s := <-got; !strings.Contains(s, `"path": "spec.privileged"`) {
		t.Errorf("the reader of the FIFO got %q", s)
	}

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash for >(...)")
	}
	out := filepath.Join(dir, "through-cat.json")
	script := `"$0" "$@" --report >(cat > ` + out + `) >/dev/null; code=$?; wait; exit $code`
	r = x.Run(bash, append([]string{"-c", script, filepath.Join(binDir, "kubectl-crd")}, pruneOffline...)...)
	if r.Code != 0 {
		t.Fatalf("--report >(cat): exit %d\n%s", r.Code, r.Stderr)
	}
	// cat may still be writing when bash's wait returns for the command
	// alone (bash before 5.1 does not wait for process substitutions).
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.HasSuffix(string(b), "}\n") && strings.Contains(string(b), `"path": "spec.privileged"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("--report >(cat): cat wrote %q", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestInPlaceKeepsWhatTheServerStores: prune --in-place rewrites a copy of
// the example; the server stores the same object from the rewritten file as
// from the original (kubectl create --dry-run=server), and a second --diff
// finds nothing left to change.
func TestInPlaceKeepsWhatTheServerStores(t *testing.T) {
	applyExampleCRD(t)
	x := NewTest(t)
	dir := t.TempDir()
	for _, f := range []string{exampleCRD, exampleJobs} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	job := filepath.Join(dir, filepath.Base(exampleJobs))
	before, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	r := x.Run("kubectl-crd", "prune", "-f", dir, "--diff")
	if r.Code != 1 || !strings.Contains(r.Stdout, "-  privileged: true # never validated, never stored\n") {
		t.Fatalf("--diff: exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = x.Run("kubectl-crd", "prune", "-f", dir, "--in-place")
	if r.Code != 0 || r.Stdout != "" {
		t.Fatalf("--in-place: exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	after, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) == string(before) || !strings.Contains(string(after), "# runs every night") {
		t.Fatalf("rewritten:\n%s", after)
	}

	k := kubectls[0].Path
	stored := func(file string) []map[string]interface{} {
		t.Helper()
		// --validate=false: the server drops unknown fields rather than refuse them.
		r := x.Run(k, "create", "--dry-run=server", "--validate=false", "-o", "json", "-f", file)
		if r.Code != 0 {
			t.Fatalf("kubectl create --dry-run=server -f %s: exit %d\n%s", file, r.Code, r.Stderr)
		}
		return normalizeAll(serverObjects(t, r.Stdout))
	}
	original := filepath.Join(t.TempDir(), "original.yaml")
	if err := os.WriteFile(original, before, 0o644); err != nil {
		t.Fatal(err)
	}
	want, got := stored(original), stored(job)
	if len(want) != 2 {
		t.Fatalf("the server stored %d objects, want the 2 jobs", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored objects (-original +rewritten):\n%s", diff)
	}

	r = x.Run("kubectl-crd", "prune", "-f", dir, "--diff")
	if r.Code != 0 || r.Stdout != "" {
		t.Errorf("--diff after --in-place: exit %d, stdout:\n%s", r.Code, r.Stdout)
	}
}
