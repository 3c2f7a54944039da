package release

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestDefaultVersion runs git on a repository of its own.
func TestDefaultVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-22T07:36:00Z", "GIT_COMMITTER_DATE=2026-11-22T07:36:00Z",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if _, err := DefaultVersion(ctx, dir); err == nil {
		t.Error("a directory outside git has a version")
	}
	if got, _ := SourceDate(ctx, dir, func(string) string { return "" }); !got.Equal(time.Unix(0, 0)) {
		t.Errorf("source date outside git: %v, want the epoch", got)
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "f")
	run("commit", "-q", "-m", "one")

	check := func(want string) {
		t.Helper()
		v, err := DefaultVersion(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile("^" + want + "$").MatchString(v) {
			t.Errorf("version %q, want %s", v, want)
		}
		if _, err := ParseVersion(v); err != nil {
			t.Error(err)
		}
	}
	check(`v0\.0\.0-20261122073600-[0-9a-f]{12}`)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	check(`v0\.0\.0-20261122073600-[0-9a-f]{12}-dirty`)
	run("commit", "-q", "-am", "two")
	run("tag", "v0.1.0")
	check(`v0\.1\.0`)
	run("commit", "-q", "--allow-empty", "-m", "three")
	check(`v0\.1\.0-1-g[0-9a-f]{12}`)
	run("tag", "not-a-version")
	check(`v0\.1\.0-1-g[0-9a-f]{12}`)

	date, err := SourceDate(ctx, dir, func(string) string { return "" })
	if want := time.Date(2026, 11, 22, 7, 36, 0, 0, time.UTC); err != nil || !date.Equal(want) {
		t.Errorf("source date %v, %v; want the commit's, %v", date, err, want)
	}
	date, err = SourceDate(ctx, dir, func(k string) string { return map[string]string{"SOURCE_DATE_EPOCH": "86400"}[k] })
	if err != nil || !date.Equal(time.Unix(86400, 0)) {
		t.Errorf("SOURCE_DATE_EPOCH=86400: %v, %v", date, err)
	}
	if _, err := SourceDate(ctx, dir, func(string) string { return "yesterday" }); err == nil {
		t.Error("SOURCE_DATE_EPOCH=yesterday accepted")
	}
}
