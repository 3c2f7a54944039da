package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// A file kubectl reads only once decoded (UTF-16 with a byte order mark,
// or Latin-1 bytes read as U+FFFD): --in-place and --diff leave it alone
// when nothing in it changes, and refuse it, saying why, when something
// does. Both used to say "the document is no longer in the file as it was
// read", of a file nobody had touched.
func TestPruneInPlaceNotUTF8(t *testing.T) {
	job, err := os.ReadFile(exampleJob)
	if err != nil {
		t.Fatal(err)
	}
	clean := strings.NewReplacer("  privileged: true # never validated, never stored\n", "", "  lables:\n    team: ops\n", "").Replace(string(job))
	utf16le := func(s string) []byte {
		b := []byte{0xFF, 0xFE}
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return b
	}
	latin1 := func(s string) []byte { return []byte(strings.ReplaceAll(s, "logrotate ", "logrotate caf\xe9 ")) }
	for _, tc := range []struct {
		name    string
		content []byte
		want    string // "": nothing to rewrite
	}{
		{"utf16-clean", utf16le(clean), ""},
		{"latin1-clean", latin1(clean), ""},
		{"utf16", utf16le(string(job)), "it is not UTF-8: it is UTF-16 (it starts with a byte order mark), which kubectl transcodes; --in-place rewrites UTF-8 files only"},
		{"latin1", latin1(string(job)), "it is not UTF-8: line 26 has a byte that is not UTF-8 (0xE9, Latin-1?), which kubectl reads as U+FFFD; --in-place rewrites UTF-8 files only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "job.yaml")
			if err := os.WriteFile(file, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, flag := range []string{"--in-place", "--diff"} {
				r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", file, flag)
				got, _ := os.ReadFile(file)
				if !bytes.Equal(got, tc.content) {
					t.Errorf("%s: the file was rewritten:\n%q", flag, got)
				}
				if tc.want == "" {
					if r.code != 0 || r.stdout != "" || r.stderr != "" {
						t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 0, nothing printed", flag, r.code, r.stdout, r.stderr)
					}
					continue
				}
				want := "error: " + file + ": not rewritten: " + tc.want
				if r.code != ExitInput || r.stdout != "" || !strings.Contains(r.stderr, want) {
					t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr with:\n%s", flag, r.code, r.stdout, r.stderr, want)
				}
			}
		})
	}
}

// A file of carriage returns alone (old Mac line ends) is rewritten with
// them: it used to get line feeds, and a stray carriage return at the end.
func TestPruneInPlaceCROnly(t *testing.T) {
	const in = "apiVersion: operations.example.com/v1\rkind: MaintenanceNightlyJob\rmetadata:\r  name: a\r  namespace: ops\rspec:\r  shell: x # kept\r  privileged: true\r"
	file := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", file, "--in-place")
	got, _ := os.ReadFile(file)
	want := strings.TrimSuffix(in, "  privileged: true\r")
	if r.code != 0 || string(got) != want {
		t.Errorf("exit %d, stderr:\n%s\nrewritten: %q\nwant:      %q", r.code, r.stderr, got, want)
	}
}
