package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	bad, err := os.ReadFile("testdata/bad/bad-metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile("testdata/foos/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := string(crd) + "---\n" + streamInput(t, 200) + "---\n" + string(bad)
	withKeep(0, func() {
		for _, args := range [][]string{{}, {"-o", "json"}, {"--report", "-"}} {
			r := run(t, in, append([]string{"prune", "--offline", "--crd-file", exampleCRD, "-f", "-"}, args...)...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "the server would refuse this object: metadata") {
				t.Errorf("%v: exit %d, stdout %d bytes, stderr:\n%s", args, r.code, len(r.stdout), lastLines(r.stderr, 3))
			}
		}
	})
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
