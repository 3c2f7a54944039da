package plugin

import "testing"

// An empty --lock is refused, as an empty --report is: the run went on without pins,
// exit 0, as if no lock had been given.
func TestLockEmptyRefused(t *testing.T) {
	for _, args := range [][]string{
		append(append([]string{}, pruneJob...), "--lock", ""),
		append(append([]string{}, pruneJob...), "--lock="),
		append(append([]string{}, pruneJob...), "--lock", "", "--update-lock"),
		{"check-update", "--offline", "-f", exampleCRD, "--old", exampleCRD, "--lock", ""},
	} {
		r := run(t, "", args...)
		if want := "error: --lock '': give a file name\n"; r.code != ExitInput || r.stderr != want || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %s", args, r.code, r.stdout, r.stderr, want)
		}
	}
}
