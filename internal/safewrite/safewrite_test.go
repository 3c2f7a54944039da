//go:build unix

package safewrite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noTemp fails when a temporary file is left in dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("temporary file left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}

func readString(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRegularFileModeKept(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "report.json")
	if err := os.WriteFile(name, []byte("old, longer than the new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []fs.FileMode{0o644, 0o640, 0o600, 0o755} {
		if err := os.Chmod(name, mode); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(name, []byte("new\n")); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != mode {
			t.Errorf("mode %v after the write, want %v", fi.Mode(), mode)
		}
		if got := readString(t, name); got != "new\n" {
			t.Errorf("content %q", got)
		}
	}
	noTemp(t, dir)
}

func TestNewFileModeIsCreates(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	name := filepath.Join(dir, "new.json")
	if err := WriteFile(name, []byte("x")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "created"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, _ := os.Stat(f.Name())
	got, _ := os.Stat(name)
	if got.Mode() != want.Mode() || got.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, os.Create gives %v", got.Mode(), want.Mode())
	}
}

func TestSymlinkKept(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "real", "report.json")
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real/report.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if got := readString(t, target); got != "new\n" {
		t.Errorf("target holds %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("target mode %v", fi.Mode())
	}
	// The temporary file goes next to the target, where the rename is atomic.
	noTemp(t, dir)
	noTemp(t, filepath.Join(dir, "real"))
}

func TestDanglingSymlinkWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("later.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if got := readString(t, filepath.Join(dir, "later.json")); got != "new\n" {
		t.Errorf("target holds %q", got)
	}
}

func TestFIFOWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A symlink to the FIFO, as /dev/stdout is to /proc/self/fd/1.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fifo, link} {
		got := make(chan string)
		go func() {
			f, err := os.Open(fifo) // blocks until the writer opens it
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(f)
			// Closed before the next writer can open the FIFO: a reader still
			// open would take its write, and the next reader would wait for ever.
			f.Close()
			got <- string(b)
		}()
		if err := WriteFile(name, []byte("through the pipe\n")); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-got:
			if s != "through the pipe\n" {
				t.Errorf("%s: the reader got %q", name, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the reader got nothing", name)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("%s: the FIFO was replaced: %v", name, err)
		}
	}
	noTemp(t, dir)
}

// TestProcessSubstitution: bash's >(...) names /dev/fd/N, a link to a pipe
// that has no path ("pipe:[123]").
func TestProcessSubstitution(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	name := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	if _, err := os.Stat(name); err != nil {
		t.Skip("no /proc/self/fd")
	}
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	err = WriteFile(name, []byte("through the pipe\n"))
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe\n" {
		t.Errorf("the reader got %q", s)
	}
}

func TestDeviceNotReplaced(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/dev/null", link} {
		if err := WriteFile(name, []byte("gone\n")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("/dev/null is no longer a character device: %v %v", fi.Mode(), err)
		}
	}
	noTemp(t, dir)
}

func TestDeviceWriteErrorReturned(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	err := WriteFile("/dev/full", []byte("x"))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/dev/full") {
		t.Fatalf("error %v, want ENOSPC naming /dev/full", err)
	}
	if fi, err := os.Lstat("/dev/full"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/full is no longer a character device: %v", err)
	}
}

func TestTempRemovedOnFailure(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "report.json")
	if err := os.WriteFile(name, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(name, func(w io.Writer) error {
		if _, err := w.Write([]byte("half")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if got := readString(t, name); got != "old\n" {
		t.Errorf("the file was changed: %q", got)
	}
	noTemp(t, dir)

	// A directory in place of the file: the rename fails.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(sub, nil, func(w io.Writer) error { return nil }); err == nil {
		t.Fatal("renaming over a directory succeeded")
	}
	noTemp(t, dir)
}

func TestMissingDirectory(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "no", "report.json"), []byte("x"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v", err)
	}
}

// helperEnv makes the test binary a writer that blocks halfway, for
// TestSignalRemovesTemp to interrupt.
const helperEnv = "SAFEWRITE_TEST_BLOCKING_WRITE"

// manyEnv makes the test binary a writer of many files one after another,
// for TestSignalDuringManyWrites: the files of the directory it names, each
// rewritten until it is killed.
const manyEnv = "SAFEWRITE_TEST_MANY_WRITES"

// cleanupsEnv makes the test binary a run that holds a temporary
// directory and registers cleanups (three, the second done with), then
// waits for TestSignalCleanups to interrupt it: each cleanup that runs
// writes its name to the log in the directory it names.
const cleanupsEnv = "SAFEWRITE_TEST_CLEANUPS"

// contextEnv makes the test binary a run with a SignalContext, for
// TestSignalContext: "stop" stops when it is cancelled, tries to create a
// temporary directory (its error goes to the log in the directory of
// contextDirEnv) and ends by DieOf; "ignore" never looks at it.
const (
	contextEnv    = "SAFEWRITE_TEST_CONTEXT"
	contextDirEnv = "SAFEWRITE_TEST_CONTEXT_DIR"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(contextEnv); mode != "" {
		ctx, interrupted := SignalContext(context.Background())
		os.Stdout.WriteString("running\n")
		if mode == "ignore" {
			select {}
		}
		<-ctx.Done()
		_, _, err := TempDir("kubectl-crd-test-")
		os.WriteFile(filepath.Join(os.Getenv(contextDirEnv), "log"), []byte(fmt.Sprint(err)), 0o600)
		DieOf(interrupted())
	}
	if dir := os.Getenv(cleanupsEnv); dir != "" {
		tmp, _, err := TempDir("kubectl-crd-test-")
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, "held"), []byte("x"), 0o600)
		}
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		log := func(name string) func() {
			return func() {
				f, _ := os.OpenFile(filepath.Join(dir, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
				f.WriteString(name + "\n")
				f.Close()
			}
		}
		AtSignal(log("first"))
		AtSignal(log("done with"))()
		AtSignal(log("last"))
		os.Stdout.WriteString("writing\n")
		select {}
	}
	if dir := os.Getenv(manyEnv); dir != "" {
		os.Stdout.WriteString("writing\n")
		for i := 0; ; i++ {
			if err := WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i%50)), []byte("new\n")); err != nil {
				os.Stderr.WriteString(err.Error())
				os.Exit(1)
			}
		}
	}
	if name := os.Getenv(helperEnv); name != "" {
		err := Write(name, func(w io.Writer) error {
			if _, err := w.Write([]byte("half")); err != nil {
				return err
			}
			os.Stdout.WriteString("writing\n")
			select {}
		})
		os.Stderr.WriteString(err.Error())
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestSignalRemovesTemp(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "report.json")
			if err := os.WriteFile(name, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+name)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Once the helper says so, its temporary file exists and is half written.
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || line != "writing\n" {
				cmd.Process.Kill()
				t.Fatalf("helper said %q: %v", line, err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 2 {
				t.Errorf("%d files while writing, want the file and its temporary file", len(entries))
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helper: %v", err)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("helper ended with %v, want killed by %v", ws, sig)
			}
			noTemp(t, dir)
			if got := readString(t, name); got != "old\n" {
				t.Errorf("the file was changed: %q", got)
			}
		})
	}
}

// TestSignalDuringManyWrites: a signal at any point of a run of writes, one
// file after another, leaves no temporary file and kills the process.
// Temporary files were left, and the process sometimes hung: a signal
// caught by the handler of one write, just as that write ended, raced with
// the next write's: the next temporary file was created before a handler
// was in place, or the process sent itself the signal while the next
// write's handler took it.
func TestSignalDuringManyWrites(t *testing.T) {
	runs := 40
	if testing.Short() {
		runs = 10
	}
	for run := range runs {
		sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}[run%2]
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), manyEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "writing\n" {
			cmd.Process.Kill()
			t.Fatalf("helper said %q: %v", line, err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(20 * time.Millisecond))))
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("run %d: the writer did not end within 10s of %v", run, sig)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %d: helper: %v", run, err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("run %d: helper ended with %v, want killed by %v", run, ws, sig)
		}
		noTemp(t, dir)
	}
}

// A spool leaves nothing in the temporary directory, even while it is open,
// and reads back what was written.
func TestSpoolLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	s, err := NewSpool()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteString("held back"); err != nil {
		t.Fatal(err)
	}
	noTemp(t, dir) // unix: the name is gone while the file is open
	if err := s.Rewind(); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(s)
	if err != nil || string(b) != "held back" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	noTemp(t, dir)
}

// On SIGINT or SIGTERM, the cleanups registered run, the last first (a
// render's child is stopped before its directory is removed), and the
// temporary directories are removed with what they hold; then the process
// dies of the signal. A chart's rendered files were left in $TMPDIR.
func TestSignalCleanups(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp, logDir := t.TempDir(), t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), cleanupsEnv+"="+logDir, "TMPDIR="+tmp)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "writing\n" {
				cmd.Process.Kill()
				t.Fatalf("helper said %q: %v", line, err)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
				t.Errorf("%d entries in $TMPDIR while running, want its directory", len(entries))
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helper: %v", err)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("helper ended with %v, want killed by %v", ws, sig)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
				t.Errorf("left in $TMPDIR: %v", entries)
			}
			if got := readString(t, filepath.Join(logDir, "log")); got != "last\nfirst\n" {
				t.Errorf("cleanups ran: %q, want last then first", got)
			}
		})
	}
}

// A signal cancels a SignalContext while nothing is registered: the run
// stops, creates no temporary directory after it, and ends by DieOf,
// killed by the signal; a run that does not look at its context is ended
// by the handler within interruptGrace.
func TestSignalContext(t *testing.T) {
	for _, mode := range []string{"stop", "ignore"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), contextEnv+"="+mode, contextDirEnv+"="+dir, "TMPDIR="+dir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "running\n" {
				cmd.Process.Kill()
				t.Fatalf("helper said %q: %v", line, err)
			}
			start := time.Now()
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helper: %v", err)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGINT {
				t.Errorf("helper ended with %v, want killed by SIGINT", ws)
			}
			if took := time.Since(start); took > interruptGrace+3*time.Second {
				t.Errorf("took %v after the signal", took)
			}
			if mode == "stop" {
				if got := readString(t, filepath.Join(dir, "log")); got != errInterrupted.Error() {
					t.Errorf("TempDir after the signal: %q, want %q", got, errInterrupted)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 1 {
					t.Errorf("left: %v", entries)
				}
			}
		})
	}
}
