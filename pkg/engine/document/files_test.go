package document

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A path that cannot be read says why: kubectl's "does not exist" only when
// it does not (a dangling link says it is one), the system's reason
// otherwise. Each used to be "the path ... does not exist".
func TestFilesPathErrors(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop.yaml")
	dangling := filepath.Join(dir, "dangling.yaml")
	for _, l := range [][2]string{{"loop.yaml", loop}, {"nowhere.yaml", dangling}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Skip(err)
		}
	}
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct{ path, want string }{
		{missing, `the path "` + missing + `" does not exist`},
		{dangling, `the path "` + dangling + `" does not exist: it is a symbolic link to "nowhere.yaml", which does not exist`},
		{loop, `the path "` + loop + `" cannot be read: too many levels of symbolic links (a loop of symbolic links)`},
	} {
		_, err := Files(tc.path, false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Files(%s): %v\nwant: %s", filepath.Base(tc.path), err, tc.want)
		}
	}
	// Root reads everything: the message is checked on the error itself.
	err := pathError("locked/a.yaml", &fs.PathError{Op: "stat", Path: "locked/a.yaml", Err: syscall.EACCES})
	if want := `the path "locked/a.yaml" cannot be read: permission denied`; err.Error() != want {
		t.Errorf("permission denied: %v\nwant: %s", err, want)
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked")
		if err := os.Mkdir(locked, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(locked, "a.yaml"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o700)
		_, err := Files(filepath.Join(locked, "a.yaml"), false)
		if err == nil || !strings.HasSuffix(err.Error(), "cannot be read: permission denied") {
			t.Errorf("a file in a directory without x: %v", err)
		}
	}
}
