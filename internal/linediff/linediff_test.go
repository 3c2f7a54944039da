package linediff

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// systemDiff is diff -u's output for a and b, labelled as Unified labels them.
func systemDiff(t *testing.T, a, b string) string {
	t.Helper()
	path, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("no diff on PATH")
	}
	dir := t.TempDir()
	an, bn := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(an, []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bn, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "-u", "--label", "a/x.yaml", "--label", "b/x.yaml", an, bn).Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("diff: %v", err)
	}
	return string(out)
}

const job = `apiVersion: example.com/v1
kind: MaintenanceJob
metadata:
  name: nightly
  # a typo: the server drops it
  lables:
    team: storage
spec:
  schedule: "0 3 * * *"
  privileged: true
  steps:
  - name: drain
  - name: backup
  - name: upgrade
  - name: uncordon
  - name: verify
  - name: report
`

func TestUnifiedAsDiff(t *testing.T) {
	cases := map[string][2]string{
		"equal":             {job, job},
		"one line dropped":  {job, strings.Replace(job, "  privileged: true\n", "", 1)},
		"lines dropped":     {job, strings.Replace(job, "  # a typo: the server drops it\n  lables:\n    team: storage\n", "", 1)},
		"two hunks":         {job, strings.Replace(strings.Replace(job, "  lables:\n    team: storage\n", "", 1), "  - name: report\n", "", 1)},
		"merged hunks":      {job, strings.Replace(strings.Replace(job, "  lables:\n    team: storage\n", "", 1), "  - name: drain\n", "", 1)},
		"line added":        {job, strings.Replace(job, "spec:\n", "spec:\n  paused: false\n", 1)},
		"line changed":      {job, strings.Replace(job, "nightly", "weekly", 1)},
		"first line":        {job, job[strings.Index(job, "\n")+1:]},
		"last line":         {job, strings.TrimSuffix(job, "  - name: report\n")},
		"from empty":        {"", job},
		"to empty":          {job, ""},
		"no final newline":  {strings.TrimSuffix(job, "\n"), job},
		"no final newlines": {strings.TrimSuffix(job, "\n"), strings.Replace(strings.TrimSuffix(job, "\n"), "nightly", "weekly", 1)},
		"last line changed": {job + "end", job + "end\n"},
		"documents": {job + "---\n" + job, strings.Replace(job, "  privileged: true\n", "", 1) + "---\n" +
			strings.Replace(job, "  privileged: true\n", "", 1)},
		"crlf": {strings.ReplaceAll(job, "\n", "\r\n"), strings.ReplaceAll(strings.Replace(job, "  privileged: true\n", "", 1), "\n", "\r\n")},
	}
	// Two changes 6 and 7 unchanged lines apart: one hunk, then two.
	var numbered strings.Builder
	for i := range 20 {
		numbered.WriteString(strings.Repeat("x", i) + "\n")
	}
	drop := func(text string, lines ...int) string {
		ls := strings.SplitAfter(text, "\n")
		for _, l := range lines {
			ls[l] = ""
		}
		return strings.Join(ls, "")
	}
	cases["6 apart"] = [2]string{numbered.String(), drop(numbered.String(), 4, 11)}
	cases["7 apart"] = [2]string{numbered.String(), drop(numbered.String(), 4, 12)}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := string(Unified("a/x.yaml", "b/x.yaml", []byte(c[0]), []byte(c[1])))
			if want := systemDiff(t, c[0], c[1]); got != want {
				t.Errorf("got:\n%s\ndiff -u gives:\n%s", got, want)
			}
		})
	}
}

// TestUnifiedRandom checks texts of few distinct lines, where many scripts
// are shortest: the diff must apply with patch and change as many lines as
// diff's, and is most often diff's own.
func TestUnifiedRandom(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("no patch on PATH")
	}
	r := rand.New(rand.NewSource(14))
	text := func() string {
		var b strings.Builder
		for range r.Intn(30) {
			b.WriteString(string(rune('a' + r.Intn(4))))
			b.WriteByte('\n')
		}
		return b.String()
	}
	changed := func(d string) int {
		n := 0
		for _, l := range strings.Split(d, "\n") {
			if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
				n++
			}
		}
		return n
	}
	same := 0
	const runs = 200
	for i := range runs {
		a, b := text(), text()
		got := string(Unified("a/x.yaml", "b/x.yaml", []byte(a), []byte(b)))
		want := systemDiff(t, a, b)
		if got == want {
			same++
			continue
		}
		if changed(got) != changed(want) {
			t.Fatalf("case %d: %d lines changed, diff -u changes %d:\n%s\ndiff -u:\n%s", i, changed(got), changed(want), got, want)
		}
		dir := t.TempDir()
		f := filepath.Join(dir, "x.yaml")
		if err := os.WriteFile(f, []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(patch, "-s", "-p1", "-d", dir)
		cmd.Stdin = strings.NewReader(got)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch: %v\n%s\n%s", i, err, out, got)
		}
		if b2, _ := os.ReadFile(f); !bytes.Equal(b2, []byte(b)) {
			t.Fatalf("case %d: patched, the file is\n%s\nwant\n%s", i, b2, b)
		}
	}
	t.Logf("%d of %d diffs are diff -u's own", same, runs)
}
