package cachedir

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A cache directory is trusted when it is the user's own directory, that
// no one else may write, or does not exist yet; a symbolic link, a file,
// a directory others may write or another user's is not, and the error
// names it and says why.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // the umask left out
			t.Fatal(err)
		}
		return p
	}
	own := mk("own", 0o700)
	mk("own/sub", 0o755)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	type check struct {
		dir    string
		subs   []string
		reason string // "" for trusted
	}
	cases := []check{
		{own, nil, ""},
		{own, []string{"sub", "missing"}, ""},
		{filepath.Join(dir, "missing"), nil, ""},
		{link, nil, "a symbolic link"},
		{file, nil, "not a directory"},
		{own, []string{"../link"}, "a symbolic link"},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases,
			check{mk("shared", 0o777), nil, "writable by its group or others (drwxrwxrwx)"},
			check{mk("group", 0o770), nil, "writable by its group or others (drwxrwx---)"},
			check{own, []string{"../group"}, "writable by its group or others"})
	}
	for _, c := range cases {
		err := Check(c.dir, c.subs...)
		var ue *UntrustedError
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("Check(%s, %v): %v, want trusted", c.dir, c.subs, err)
		case c.reason != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), c.reason)):
			t.Errorf("Check(%s, %v): %v, want %q", c.dir, c.subs, err, c.reason)
		}
	}
}

// Another user's directory is not trusted, even one that only its owner
// may write (it decides what is in it).
func TestCheckOwner(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() != 0 {
		t.Skip("giving a directory to another user takes root")
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(other, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := Check(other); err == nil || !strings.Contains(err.Error(), "owned by another user (uid 4242; this is uid 0)") {
		t.Errorf("another user's directory: %v", err)
	}
}

// MkdirAll makes what it creates private, whatever the umask.
func TestMkdirAllPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are ACLs")
	}
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm() != DirMode {
			t.Errorf("%s: %v %v, want %v", d, st.Mode(), err, DirMode)
		}
	}
	if err := Check(filepath.Dir(dir), "b"); err != nil {
		t.Error(err)
	}
}
