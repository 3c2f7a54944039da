package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// streamInput is a stream of many documents of the example's kinds, a List
// among them, so that a run reads it in both passes.
func streamInput(t *testing.T, n int) string {
	t.Helper()
	job, err := os.ReadFile(exampleJob)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.NewReplacer("backdoor-check", fmt.Sprintf("check-%d", i), "rotate-logs", fmt.Sprintf("rotate-%d", i)).Replace(string(job)))
		b.WriteString("---\n")
	}
	b.WriteString(`# a List, edited in place
apiVersion: v1
kind: List
items:
- apiVersion: operations.example.com/v1
  kind: MaintenanceNightlyJob
  metadata: {name: in-list, namespace: ops}
  spec:
    command: run # a comment
    machines: [a]
    extra: 1
`)
	return b.String()
}

// withKeep runs f with the first pass keeping documents up to keep bytes.
func withKeep(keep int, f func()) {
	saved := keepBytes
	keepBytes = keep
	defer func() { keepBytes = saved }()
	f()
}

// A run that reads its inputs again (nothing kept: files read again, stdin
// from its spool) prints, reports and rewrites byte for byte what a run
// that keeps them does.
func TestStreamedRunMatchesKept(t *testing.T) {
	dir := t.TempDir()
	in := streamInput(t, 40)
	file := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-f", file},
		{"-f", "-"},
		{"-f", file, "-o", "json"},
		{"-f", "-", "-o", "json", "--defaults"},
		{"-f", file, "--report", "-"},
		{"-f", "-", "--report", "REPORT", "--defaults"},
		{"-f", file, "--diff"},
		{"-f", file, "-f", exampleJob, "--fail-on-prune"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var got [2]result
			var reports [2]string
			for i, keep := range []int{1 << 30, 0} {
				report := filepath.Join(dir, fmt.Sprintf("report-%d.json", i))
				a := append([]string{"prune", "--offline", "--crd-file", exampleCRD}, args...)
				for j := range a {
					if a[j] == "REPORT" {
						a[j] = report
					}
				}
				withKeep(keep, func() { got[i] = run(t, in, a...) })
				if b, err := os.ReadFile(report); err == nil {
					reports[i] = string(b)
				}
			}
			if got[0].stdout == "" && got[0].code == 0 {
				t.Fatalf("nothing printed: %+v", got[0])
			}
			if diff := cmp.Diff(got[0], got[1], cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("kept vs read again (-kept +again):\n%s", diff)
			}
			if reports[0] != reports[1] {
				t.Errorf("reports differ:\n%s\n---\n%s", reports[0], reports[1])
			}
		})
	}
}

// --in-place rewrites the same files whether the documents were kept or
// read again.
func TestStreamedInPlaceMatchesKept(t *testing.T) {
	in := streamInput(t, 20)
	var files [2]string
	for i, keep := range []int{1 << 30, 0} {
		file := filepath.Join(t.TempDir(), "in.yaml")
		if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		var r result
		withKeep(keep, func() { r = run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", file, "--in-place") })
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		b, _ := os.ReadFile(file)
		files[i] = string(b)
	}
	if files[0] == in {
		t.Fatal("nothing rewritten")
	}
	if files[0] != files[1] {
		t.Errorf("rewritten files differ (-kept +again):\n%s", cmp.Diff(files[0], files[1]))
	}
}

// What cannot be read twice (a FIFO, as a process substitution gives) is
// read once, and again from its spool.
func TestStreamedFIFO(t *testing.T) {
	dir := t.TempDir()
	in := streamInput(t, 10)
	file := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString(in)
		f.Close()
	}()
	var fromFIFO, fromFile result
	withKeep(0, func() { fromFIFO = run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", fifo) })
	fromFile = run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", file)
	fromFIFO.stderr = strings.ReplaceAll(fromFIFO.stderr, fifo, file)
	if diff := cmp.Diff(fromFile, fromFIFO, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("file vs FIFO (-file +fifo):\n%s", diff)
	}
}

// An object the server refuses late in a stream, after thousands of lines
// were checked and written to the spool, still leaves stdout empty: a
// pipeline must not apply a half-checked stream.
func TestLateBadObjectPrintsNothing(t *testing.T) {
	in := lateBad(t, streamInput(t, 200))
	withKeep(0, func() {
		for _, args := range [][]string{{}, {"-o", "json"}, {"--report", "-"}} {
			r := run(t, in, append([]string{"prune", "--offline", "--crd-file", exampleCRD, "-f", "-"}, args...)...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "the server would refuse this object: metadata") {
				t.Errorf("%v: exit %d, stdout %d bytes, stderr:\n%s", args, r.code, len(r.stdout), lastLines(r.stderr, 3))
			}
		}
	})
}

// lateBad is a stream of objects with a CRD first and, last, an object
// whose metadata the server refuses.
func lateBad(t *testing.T, objects string) string {
	t.Helper()
	bad, err := os.ReadFile("testdata/bad/bad-metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile("testdata/foos/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(crd) + "---\n" + objects + "---\n" + string(bad)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The report and the JSON List are written an element at a time, byte for
// byte as encoding them whole writes them.
func TestJSONStreamMatchesEncoder(t *testing.T) {
	values := []interface{}{
		map[string]interface{}{"a": []interface{}{}, "b": map[string]interface{}{}, "c": "<&>", "d": []interface{}{1, map[string]interface{}{"e": nil}}},
		"ünïcode \u2028",
		[]interface{}{[]interface{}{}, 1.5},
		map[string]interface{}{},
	}
	for n := range len(values) + 1 {
		items := values[:n]
		warnings := []inputWarning{}
		if n%2 == 1 {
			warnings = append(warnings, inputWarning{Message: "w <1>"})
		}

		var report bytes.Buffer
		w := &jsonObjectWriter{w: &report}
		w.Key("items")
		a := w.Array()
		for _, v := range items {
			a.Add(v)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		w.Key("warnings")
		w.Value(warnings)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want, err := marshalJSON(struct {
			Items    []interface{}  `json:"items"`
			Warnings []inputWarning `json:"warnings"`
		}{append([]interface{}{}, items...), warnings}, "  ")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), report.String()); diff != "" {
			t.Errorf("%d items: report (-whole +streamed):\n%s", n, diff)
		}

		var list bytes.Buffer
		enc := json.NewEncoder(&list)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": append([]interface{}{}, items...)}); err != nil {
			t.Fatal(err)
		}
		var streamed bytes.Buffer
		l := &jsonObjectWriter{w: &streamed}
		l.Key("apiVersion")
		l.Value("v1")
		l.Key("items")
		a = l.Array()
		for _, v := range items {
			a.Add(v)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		l.Key("kind")
		l.Value("List")
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(list.String(), streamed.String()); diff != "" {
			t.Errorf("%d items: List (-whole +streamed):\n%s", n, diff)
		}
	}
}

// An input that never ends (-f /dev/zero) is refused once a document is
// larger than any can be, by every command that reads files: exit 2 at
// its line, nothing on stdout (it used to end with "fatal error: out of
// memory").
func TestEndlessInputIsRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	for _, args := range [][]string{
		{"prune", "--offline", "-f", "/dev/zero"},
		{"prune", "--offline", "--crd-file", "/dev/zero", "-f", exampleJob},
		{"check-update", "--offline", "--crd-file", exampleCRD, "-f", "/dev/zero", "--old", exampleJob},
		{"explain-structural", "-f", "/dev/zero"},
	} {
		r := run(t, "", args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "/dev/zero:1: a document of more than 64 MiB") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr:\n%s", args, r.code, len(r.stdout), r.stderr)
		}
	}
}

// updateInputs are a stream of new objects (streamInput) and old versions
// of some: updates allowed (with what the server drops), refused (a machine
// name the schema's pattern refuses, changed), and creates.
func updateInputs(t *testing.T, n int) (newText, oldText string) {
	t.Helper()
	return strings.ReplaceAll(streamInput(t, n), "az1-worker1", "AZ2_worker1"),
		strings.ReplaceAll(streamInput(t, 10), "az1-worker1", "AZ1_worker1")
}

// runCombined is run with stdout and stderr on one writer, as on a terminal.
func runCombined(stdin string, args ...string) string {
	var both bytes.Buffer
	Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &both, ErrOut: &both}, args)
	return both.String()
}

// check-update prints and exits the same whether the new objects were kept
// from the first pass or read again (files by name, stdin from its spool),
// with the old objects from a file or from stdin; its text report's
// warnings stay next to their objects' lines.
func TestStreamedCheckUpdateMatchesKept(t *testing.T) {
	dir := t.TempDir()
	newText, oldText := updateInputs(t, 40)
	newFile, oldFile := filepath.Join(dir, "new.yaml"), filepath.Join(dir, "old.yaml")
	for f, text := range map[string]string{newFile: newText, oldFile: oldText} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"-f", newFile, "--old", oldFile}},
		{newText, []string{"-f", "-", "--old", oldFile}},
		{"", []string{"-f", newFile, "--old", oldFile, "-o", "json"}},
		{newText, []string{"-f", "-", "--old", oldFile, "-o", "json"}},
		{oldText, []string{"-f", newFile, "--old", "-"}},
		{oldText, []string{"-f", newFile, "-f", exampleJob, "--old", "-", "-o", "json"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got [2]result
			var combined [2]string
			for i, keep := range []int{1 << 30, 0} {
				a := append([]string{"check-update", "--offline", "--crd-file", exampleCRD}, tc.args...)
				withKeep(keep, func() {
					got[i] = run(t, tc.stdin, a...)
					combined[i] = runCombined(tc.stdin, a...)
				})
			}
			if got[0].code != 1 || !strings.Contains(got[0].stdout, "rotate-3") || !strings.Contains(got[0].stdout, "in-list") {
				t.Fatalf("want exit 1 and a report of every object: %+v", got[0])
			}
			if diff := cmp.Diff(got[0], got[1], cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("kept vs read again (-kept +again):\n%s", diff)
			}
			if diff := cmp.Diff(combined[0], combined[1]); diff != "" {
				t.Errorf("stdout and stderr together, kept vs read again (-kept +again):\n%s", diff)
			}
			if i := strings.Index(combined[1], "MaintenanceNightlyJob ops/check-3: update allowed"); !slices.Contains(tc.args, "json") &&
				(i < 0 || !strings.HasPrefix(lastLines(combined[1][:i], 1), "Warning: MaintenanceNightlyJob ops/check-3: ")) {
				t.Errorf("the warnings of ops/check-3 are not next to its line:\n%s", lastLines(combined[1][:max(i, 0)], 3))
			}
		})
	}
}

// An object found bad late in a stream, after hundreds of objects were
// checked and their report written to the spool, leaves stdout empty and
// prints none of their warnings.
func TestLateBadUpdatePrintsNothing(t *testing.T) {
	newText, oldText := updateInputs(t, 200)
	oldFile := filepath.Join(t.TempDir(), "old.yaml")
	if err := os.WriteFile(oldFile, []byte(oldText), 0o644); err != nil {
		t.Fatal(err)
	}
	in := lateBad(t, newText)
	withKeep(0, func() {
		for _, args := range [][]string{{}, {"-o", "json"}} {
			r := run(t, in, append([]string{"check-update", "--offline", "--crd-file", exampleCRD, "--old", oldFile, "-f", "-"}, args...)...)
			if r.code != 2 || r.stdout != "" || strings.Contains(r.stderr, "Warning: MaintenanceNightlyJob") ||
				!strings.Contains(r.stderr, "the server would refuse this object: metadata") {
				t.Errorf("%v: exit %d, stdout %d bytes, stderr:\n%s", args, r.code, len(r.stdout), lastLines(r.stderr, 3))
			}
		}
	})
}

// check-update's first pass says what is wrong with the inputs in the
// order it always did: the warnings about the inputs, then the new objects
// that do not say what they are, then the old objects the server cannot
// have stored.
func TestCheckUpdateInputErrorOrder(t *testing.T) {
	dir := t.TempDir()
	newFile, oldFile := filepath.Join(dir, "new.yaml"), filepath.Join(dir, "old.yaml")
	newText := "metadata: {name: no-kind}\n---\n" + strings.Replace(streamInput(t, 1), "namespace: ops", "namespace: ops\n  namespace: ops", 1)
	if err := os.WriteFile(newFile, []byte(newText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oldFile, []byte("apiVersion: v1\nmetadata: {name: no-kind}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withKeep(0, func() {
		r := run(t, "", "check-update", "--offline", "--crd-file", exampleCRD, "--old", oldFile, "-f", newFile)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		want := []string{"Warning: MaintenanceNightlyJob ", "error: " + newFile + ":1: ", "error: " + oldFile + ":1: "}
		ok := r.code == 2 && r.stdout == "" && len(lines) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ok = strings.HasPrefix(lines[i], want[i])
		}
		if !ok || !strings.Contains(lines[0], "duplicate key") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant lines starting with:\n%s", r.code, r.stdout, r.stderr, strings.Join(want, "\n"))
		}
	})
}

// marshalJSON encodes v whole, as the streamed JSON must read:, indented by indent ("" for compact), with a final
// newline; <, > and & are written as they are, as kubectl writes them, not
// escaped for HTML.
func marshalJSON(v interface{}, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
