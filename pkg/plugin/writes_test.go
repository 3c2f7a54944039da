//go:build unix

package plugin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var pruneJob = []string{"prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob}

// TestPruneReportToOwnStream: a report named by one of the command's own
// streams goes through that stream (it used to be written to the
// process's, by opening the name again).
func TestPruneReportToOwnStream(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/dev/stderr", link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		report string
		stderr bool
	}{
		{"/dev/stdout", false}, {"/dev/fd/1", false}, {"/proc/self/fd/1", false},
		{"/dev/stderr", true}, {"/dev/fd/2", true}, {fmt.Sprintf("/proc/%d/fd/2", os.Getpid()), true}, {link, true},
	} {
		r := run(t, "", append(pruneJob, "--report", tc.report)...)
		got := r.stdout
		if tc.stderr {
			got = r.stderr
		}
		if r.code != 0 || !strings.Contains(got, `"path": "spec.privileged"`) {
			t.Errorf("--report %s: exit %d, stdout:\n%s\nstderr:\n%s", tc.report, r.code, r.stdout, r.stderr)
		}
		if tc.stderr && !strings.HasPrefix(r.stderr, "Warning: ") {
			t.Errorf("--report %s: the report is not after the warnings:\n%s", tc.report, r.stderr)
		}
	}
}

// TestPruneReportToRedirectedStream: stderr redirected to a log (2>>ci.log)
// and the report named /dev/stderr, /proc/self/fd/N or the log's own path:
// the report follows what the log held and what the run wrote to it. The
// log used to be replaced by the report, exit 0.
func TestPruneReportToRedirectedStream(t *testing.T) {
	for _, name := range []string{"/dev/stderr", "/proc/self/fd/%d", "/dev/fd/%d", "LOG"} {
		log := filepath.Join(t.TempDir(), "ci.log")
		if err := os.WriteFile(log, []byte("earlier steps\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		report := name
		switch {
		case name == "LOG":
			report = log
		case strings.Contains(name, "%d"):
			report = fmt.Sprintf(name, f.Fd())
		}
		var out bytes.Buffer
		code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: f}, append(pruneJob, "--report", report))
		f.Close()
		b, _ := os.ReadFile(log)
		if code != 0 || !strings.HasPrefix(string(b), "earlier steps\nWarning: ") || !strings.Contains(string(b), `"path": "spec.privileged"`) {
			t.Errorf("--report %s: exit %d, the log holds:\n%s", report, code, b)
		}
	}
}

// TestPruneReportStdinRefused: standard input is never a report, by name
// or as the file it is.
func TestPruneReportStdinRefused(t *testing.T) {
	dir := t.TempDir()
	job := copyFile(t, exampleJob, dir, 0o644)
	before, _ := os.ReadFile(job)
	for _, tc := range []struct {
		report string
		args   []string
	}{
		{"/dev/stdin", nil}, {"/dev/fd/0", nil}, {job, []string{"-f", "-"}},
	} {
		in, err := os.Open(job)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		args := append([]string{"prune", "--offline", "--crd-file", exampleCRD}, tc.args...)
		if tc.args == nil {
			args = append(args, "-f", exampleJob)
		}
		code := Run(context.Background(), genericiooptions.IOStreams{In: in, Out: &out, ErrOut: &errOut}, append(args, "--report", tc.report))
		in.Close()
		want := "error: --report " + tc.report + " is standard input: give a file name, or - for stdout\n"
		if code != ExitInput || errOut.String() != want {
			t.Errorf("--report %s: exit %d, stderr:\n%s\nwant exit 2 and %s", tc.report, code, errOut.String(), want)
		}
	}
	if after, _ := os.ReadFile(job); string(after) != string(before) {
		t.Error("standard input's file was changed")
	}
}

func TestPruneReportEmptyRefused(t *testing.T) {
	r := run(t, "", append(pruneJob, "--report", "")...)
	if want := "error: --report '': give a file name, or - for stdout\n"; r.code != ExitInput || r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %s", r.code, r.stdout, r.stderr, want)
	}
}

// TestPruneInPlaceStdinRefused: --in-place refuses -f -, and standard input
// under any other name: prune --in-place -f /dev/stdin < w.yaml used to
// rewrite w.yaml.
func TestPruneInPlaceStdinRefused(t *testing.T) {
	dir := t.TempDir()
	job := copyFile(t, exampleJob, dir, 0o644)
	before, _ := os.ReadFile(job)
	for _, name := range []string{"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", job} {
		for _, flag := range []string{"--in-place", "--diff"} {
			in, err := os.Open(job)
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := Run(context.Background(), genericiooptions.IOStreams{In: in, Out: &out, ErrOut: &errOut},
				[]string{"prune", "--offline", "--crd-file", exampleCRD, "-f", name, flag})
			in.Close()
			want := "error: " + flag + " rewrites files: -f " + name + " is standard input, which has none\n"
			if code != ExitInput || errOut.String() != want || out.String() != "" {
				t.Errorf("%s -f %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %s", flag, name, code, out.String(), errOut.String(), want)
			}
		}
	}
	if after, _ := os.ReadFile(job); string(after) != string(before) {
		t.Error("standard input's file was rewritten")
	}
}

// TestPruneInPlaceReadOnlyAndLinked: a read-only file, and a file with
// another hard link, are refused before any file is written; --diff shows
// them all the same. They used to be replaced (the mode kept, the link
// broken).
func TestPruneInPlaceReadOnlyAndLinked(t *testing.T) {
	dir := t.TempDir()
	plain := copyFile(t, exampleJob, filepath.Join(dir), 0o644)
	roDir := filepath.Join(dir, "ro")
	os.Mkdir(roDir, 0o755)
	ro := copyFile(t, exampleJob, roDir, 0o444)
	lnDir := filepath.Join(dir, "ln")
	os.Mkdir(lnDir, 0o755)
	linked := copyFile(t, exampleJob, lnDir, 0o644)
	other := filepath.Join(dir, "other-name.yaml")
	if err := os.Link(linked, other); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(plain)
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", plain, "-f", ro, "-f", linked, "--in-place")
	want := "error: " + ro + ": not rewritten: it is read-only (-r--r--r--); make it writable to rewrite it\n" +
		"error: " + linked + ": not rewritten: it has 2 hard links: a rewrite would break them, the other names keeping the old text; --in-place changed no file\n"
	if r.code != ExitInput || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and\n%s", r.code, r.stderr, want)
	}
	for _, f := range []string{plain, ro, linked, other} {
		if after, _ := os.ReadFile(f); string(after) != string(before) {
			t.Errorf("%s was rewritten", f)
		}
	}
	r = run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", ro, "-f", linked, "--diff")
	if r.code != ExitFindings || strings.Count(r.stdout, "-  privileged: true") != 2 {
		t.Errorf("--diff: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// TestInPlaceStopNamesRewritten: a write that fails after others stops the
// run, and the error says which files were rewritten and which were not.
func TestInPlaceStopNamesRewritten(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	missing := filepath.Join(dir, "gone", "c.yaml") // its directory was removed
	d := filepath.Join(dir, "d.yaml")
	files := []rewrite{{name: a, new: []byte("a\n")}, {name: b, new: []byte("b\n")}, {name: missing, new: []byte("c\n")}, {name: d, new: []byte("d\n")}}
	o := &PruneOptions{InPlace: true}
	err := o.writeRewrites(files)
	want := "--in-place: open " + missing + ": no such file or directory: stopped after rewriting 2 of 4 files (" + a + ", " + b + "); " +
		missing + " and the 1 after it (" + d + ") are as they were"
	if ExitCode(err) != ExitInternal || err.Error() != want {
		t.Errorf("error (exit %d):\n%v\nwant exit 3 and\n%s", ExitCode(err), err, want)
	}
	if _, err := os.Stat(d); err == nil {
		t.Error("a file after the failure was written")
	}
	err = o.writeRewrites(files[2:3])
	if want := "--in-place: open " + missing + ": no such file or directory: no file was rewritten: " + missing + " is as it was"; err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant\n%s", err, want)
	}
}

// TestTestRecordReadOnlyAndLinked: kubectl crd test --record follows
// --in-place's rules: a test file it would change that is read-only, or
// that has other hard links, is refused, in the same words, before any
// file is written (the writable one too): exit 2. A file it leaves as it
// is may be either.
func TestTestRecordReadOnlyAndLinked(t *testing.T) {
	record := func(s string) string { return s + "\n- name: a case to record\n  object: *volume\n" }
	plain := writeSuite(t, record)
	ro := writeSuite(t, record)
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	linked := writeSuite(t, record)
	if err := os.Link(linked, filepath.Join(t.TempDir(), "other-name.test.yaml")); err != nil {
		t.Fatal(err)
	}
	unchanged := writeSuite(t, func(s string) string { return s })
	if err := os.Chmod(unchanged, 0o444); err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, plain)
	r := run(t, "", "test", "--record", plain, ro, linked, unchanged)
	want := "error: " + ro + ": not rewritten: it is read-only (-r--r--r--); make it writable to rewrite it\n" +
		"error: " + linked + ": not rewritten: it has 2 hard links: a rewrite would break them, the other names keeping the old text; --record changed no file\n"
	if r.code != ExitInput || r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 2 and\n%s", r.code, r.stdout, r.stderr, want)
	}
	for _, f := range []string{plain, ro, linked} {
		if mustRead(t, f) != before {
			t.Errorf("%s was rewritten", f)
		}
	}
	// The same file twice is recorded once; a read-only file left as it is passes.
	r = run(t, "", "test", "--record", plain, plain, unchanged)
	if r.code != ExitOK || r.stderr != plain+": recorded 1 case(s)\n" || !strings.HasSuffix(mustRead(t, plain), "  object: *volume\n  expect: allowed\n") {
		t.Errorf("exit %d, stderr:\n%s\n%s:\n%s", r.code, r.stderr, plain, mustRead(t, plain))
	}
}
