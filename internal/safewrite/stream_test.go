//go:build unix

package safewrite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestDescriptorNames(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out")
	if err := os.Symlink("/dev/stdout", link); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(dir, "chain")
	if err := os.Symlink("out", chain); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, nil, 0o644)
	for name, want := range map[string]int{
		"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2, "/dev/fd/0": 0, "/dev/fd/7": 7,
		"/proc/self/fd/2": 2, "/proc/thread-self/fd/1": 1, fmt.Sprintf("/proc/%d/fd/2", os.Getpid()): 2,
		"/dev/../dev/stdout": 1, link: 1, chain: 1,
		fmt.Sprintf("/proc/%d/fd/2", os.Getppid()): -1, // another process's
		plain: -1, filepath.Join(dir, "missing"): -1, "/dev/null": -1,
	} {
		if got := (Streams{}).Descriptor(name); got != want {
			t.Errorf("Descriptor(%s) = %d, want %d", name, got, want)
		}
	}
}

// TestStreamsWriteAfterWhatIsThere: a stream's regular file, named by its
// path or its descriptor, gets the write after what it holds; before,
// the file was replaced by the write.
func TestStreamsWriteAfterWhatIsThere(t *testing.T) {
	for _, how := range []string{"path", "fd", "other fd"} {
		log := filepath.Join(t.TempDir(), "ci.log")
		if err := os.WriteFile(log, []byte("earlier\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := Streams{Out: io.Discard, ErrOut: f}
		name := log
		switch how {
		case "fd":
			name = fmt.Sprintf("/proc/self/fd/%d", f.Fd())
		case "other fd": // not a standard stream: written through the descriptor
			s.ErrOut = io.Discard
			name = fmt.Sprintf("/dev/fd/%d", f.Fd())
		}
		if err := s.Write(name, func(w io.Writer) error {
			_, err := io.WriteString(w, "report\n")
			return err
		}); err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		f.Close()
		if got := readString(t, log); got != "earlier\nreport\n" {
			t.Errorf("%s: the log holds %q", how, got)
		}
		noTemp(t, filepath.Dir(log))
	}
}

func TestStreamsWriteThroughBuffers(t *testing.T) {
	var out, errOut bytes.Buffer
	s := Streams{Out: &out, ErrOut: &errOut}
	for _, name := range []string{"/dev/stdout", "/dev/stderr"} {
		if err := s.Write(name, func(w io.Writer) error { _, err := io.WriteString(w, name); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if out.String() != "/dev/stdout" || errOut.String() != "/dev/stderr" {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
	err := s.Write("/dev/stdin", func(io.Writer) error { return nil })
	if err == nil || err.Error() != "write /dev/stdin: "+ErrStdin.Error() {
		t.Errorf("writing /dev/stdin: %v", err)
	}
}
