//go:build unix

package plugin

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// copyFile copies src to a new file of dir with mode, and returns its path.
func copyFile(t *testing.T, src, dir string, mode fs.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(name, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil { // not subject to the umask
		t.Fatal(err)
	}
	return name
}

func TestPruneReportKeepsMode(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(report, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(report, 0o644)
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob, "--report", report)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if fi, err := os.Stat(report); err != nil || fi.Mode() != 0o644 {
		t.Errorf("report mode %v, want -rw-r--r-- as before: %v", fi.Mode(), err)
	}
}

func TestPruneReportSymlinkKept(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	link := filepath.Join(dir, "report.json")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob, "--report", link)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v", err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), `"items"`) {
		t.Errorf("the target holds %q", b)
	}
}

func TestPruneReportToFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		// O_RDWR does not wait for a writer: a run that replaces the FIFO
		// instead of writing to it fails the test rather than hangs it.
		f, err := os.OpenFile(fifo, os.O_RDWR, 0)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b := make([]byte, 1<<16)
		var s strings.Builder
		for !strings.HasSuffix(s.String(), "}\n") {
			f.SetReadDeadline(time.Now().Add(20 * time.Second))
			n, err := f.Read(b)
			s.Write(b[:n])
			if err != nil {
				break
			}
		}
		got <- s.String()
	}()
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob, "--report", fifo)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v", err)
	}
	if s := <-got; !strings.Contains(s, `"spec.privileged"`) {
		t.Errorf("the reader got %q", s)
	}
}

func TestPruneReportIsInput(t *testing.T) {
	dir := t.TempDir()
	job := copyFile(t, exampleJob, dir, 0o644)
	crd := copyFile(t, exampleCRD, dir, 0o644)
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink("crd.yaml", link); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(job)
	for _, tc := range []struct {
		report, want string
	}{
		{job, "error: --report " + job + " is the input -f " + job + ": writing the report would replace it"},
		{crd, "error: --report " + crd + " is the input --crd-file " + dir + "/crd.yaml: writing the report would replace it"},
		{link, "error: --report " + link + " is the input --crd-file " + dir + "/crd.yaml: writing the report would replace it"},
	} {
		// The CRDs as a directory: its files are inputs too.
		r := run(t, "", "prune", "--offline", "--crd-file", dir, "-f", job, "--report", tc.report)
		if r.code != ExitInput || strings.TrimSpace(r.stderr) != tc.want {
			t.Errorf("--report %s: exit %d, stderr:\n%s\nwant exit 2 and %s", tc.report, r.code, r.stderr, tc.want)
		}
	}
	if after, _ := os.ReadFile(job); string(after) != string(before) {
		t.Error("the input was changed")
	}
}

func TestPruneReportWriteError(t *testing.T) {
	report := filepath.Join(t.TempDir(), "missing", "report.json")
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob, "--report", report)
	if r.code != ExitInternal || !strings.HasSuffix(r.stderr, "\nerror: --report: open "+report+": no such file or directory\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 3 and the error of the write", r.code, r.stderr)
	}
}

// TestPruneInPlace: the rewritten file is prune's output (comments kept),
// with its mode, and a file that does not change is not touched.
func TestPruneInPlace(t *testing.T) {
	dir := t.TempDir()
	job := copyFile(t, exampleJob, dir, 0o640)
	crd := copyFile(t, exampleCRD, dir, 0o644) // among -f: written as the server stores it
	// A built-in kind: nothing of it changes.
	unchanged := filepath.Join(dir, "configmap.yaml")
	if err := os.WriteFile(unchanged, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, f := range []string{job, crd, unchanged} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	want := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob)
	wantCRD := run(t, "", "prune", "--offline", "-f", exampleCRD)
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", job, "-f", crd, "-f", unchanged, "--in-place")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want.stdout || !strings.Contains(string(b), "# runs every night") || strings.Contains(string(b), "privileged: true") {
		t.Errorf("rewritten:\n%s\nprune prints:\n%s", b, want.stdout)
	}
	if fi, _ := os.Stat(job); fi.Mode() != 0o640 || !fi.ModTime().After(old) {
		t.Errorf("rewritten file: mode %v, mtime %v", fi.Mode(), fi.ModTime())
	}
	if b, _ := os.ReadFile(crd); string(b) != wantCRD.stdout || !strings.Contains(string(b), "conversion:") {
		t.Errorf("the CRD rewritten:\n%s\nprune prints:\n%s", b, wantCRD.stdout)
	}
	if fi, _ := os.Stat(unchanged); !fi.ModTime().Equal(old) {
		t.Errorf("the unchanged file was written: mtime %v, was %v", fi.ModTime(), old)
	}
	// Twice: nothing left to change, nothing written.
	for _, f := range []string{job, crd} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", dir, "--in-place")
	if fi, _ := os.Stat(job); !fi.ModTime().Equal(old) {
		t.Errorf("a clean file was written again")
	}
	if fi, _ := os.Stat(crd); !fi.ModTime().Equal(old) {
		t.Errorf("the CRD as stored was written again")
	}
}

// TestPruneInPlaceKeepsBetweenDocuments: what is not in a document (a
// leading separator, a comment after the last one) stays in the file.
func TestPruneInPlaceKeepsBetweenDocuments(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(exampleJob)
	if err != nil {
		t.Fatal(err)
	}
	in := "---\n" + string(b) + "---\n# the end\n"
	name := filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(name, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	want := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob)
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", name, "--in-place")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(name); string(got) != "---\n"+want.stdout+"---\n# the end\n" {
		t.Errorf("rewritten:\n%s", got)
	}
}

// TestPruneDiff: --diff prints diff -u's output for the change --in-place
// would make, changes nothing, and exits 1.
func TestPruneDiff(t *testing.T) {
	diff, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("no diff")
	}
	dir := t.TempDir()
	job := copyFile(t, exampleJob, dir, 0o644)
	before, _ := os.ReadFile(job)
	pruned := filepath.Join(t.TempDir(), "pruned.yaml")
	if err := os.WriteFile(pruned, []byte(run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", job).stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	label := strings.TrimPrefix(job, "/")
	want, _ := exec.Command(diff, "-u", "--label", "a/"+label, "--label", "b/"+label, job, pruned).Output()

	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", job, "--diff")
	if r.code != ExitFindings || r.stdout != string(want) || len(want) == 0 {
		t.Errorf("exit %d, stdout:\n%s\ndiff -u gives:\n%s", r.code, r.stdout, want)
	}
	if after, _ := os.ReadFile(job); string(after) != string(before) {
		t.Error("--diff changed the file")
	}
	r = run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", pruned, "--diff")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("nothing to change: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

func TestPruneInPlaceRefused(t *testing.T) {
	dir := t.TempDir()
	job := copyFile(t, exampleJob, dir, 0o644)
	// An anchor in a pruned field, aliased from a kept one: the edit cannot
	// be made on the text, and the object is written again without comments.
	aliased := filepath.Join(dir, "aliased.yaml")
	if err := os.WriteFile(aliased, []byte(`apiVersion: operations.example.com/v1
kind: MaintenanceNightlyJob
metadata:
  name: aliased
  namespace: ops
spec:
  privileged: &s "true" # pruned
  shell: *s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list.yaml")
	if err := os.WriteFile(list, []byte(`apiVersion: v1
kind: List
items:
- apiVersion: operations.example.com/v1
  kind: MaintenanceNightlyJob
  metadata:
    name: aliased
    namespace: ops
  spec:
    privileged: &s "true" # pruned
    shell: *s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	jobBefore, _ := os.ReadFile(job)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", "-", "--in-place"}, "error: --in-place rewrites files: standard input (-f -) has none"},
		{[]string{"-f", "-", "--diff"}, "error: --diff rewrites files: standard input (-f -) has none"},
		{[]string{"-f", job, "--in-place", "-o", "json"}, "error: --in-place writes YAML files, not -o json"},
		{[]string{"-f", job, "--in-place", "--report", "-"}, "error: --in-place and --report -: the report would go where nothing is printed; give --report FILE"},
		{[]string{"-f", job, "--in-place", "--diff"}, "error: --in-place and --diff: give one (--diff shows what --in-place would change)"},
		{[]string{"-f", job, "-f", aliased, "--in-place"}, "error: " + aliased + ": not rewritten: it would lose its comments (" + aliased +
			":1: MaintenanceNightlyJob ops/aliased: written again without comments: yaml: unknown anchor 's' referenced); --in-place changed no file"},
		{[]string{"-f", list, "-f", job, "--diff"}, "error: " + list + ": not rewritten: it would lose its comments (" + list +
			":1: List <unnamed>: written again without comments: yaml: unknown anchor 's' referenced); --diff changed no file"},
	} {
		r := run(t, "", append([]string{"prune", "--offline", "--crd-file", exampleCRD}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != ExitInput || r.stdout != "" || lines[len(lines)-1] != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %s", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	if after, _ := os.ReadFile(job); string(after) != string(jobBefore) {
		t.Error("a file was rewritten although another was refused")
	}
}
