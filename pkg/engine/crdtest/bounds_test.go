package crdtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// A test file is a file of inputs, not a request: a suite of more than the
// API server's 3 MiB request body is read (issue 38: a 3.6 MB suite was
// refused with the server's "413"), and a suite of more than 64 MiB is
// refused as every document of the inputs is. The object of each case is
// the request: over 3 MiB it is refused, naming the case and the bound,
// whether written inline, as an oldObject or in a file of its own.
func TestSuiteAndCaseBounds(t *testing.T) {
	dir := t.TempDir()
	crd, _ := filepath.Abs("../../../examples/lower/crd.yaml")
	volume := func(name string, pad int) string {
		return fmt.Sprintf(`{"apiVersion": "storage.example.com/v1", "kind": "Volume", "metadata": {"name": %q, "annotations": {"pad": %q}}, "spec": {"zone": "a", "size": 1, "mountOptions": ["x"]}}`,
			name, strings.Repeat("x", pad))
	}
	write := func(name, text string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	suite := "crds: " + crd + "\ncases:\n"
	for i := range 40 {
		suite += fmt.Sprintf("- name: case %d\n  object: %s\n  expect: allowed\n", i, volume(fmt.Sprint("v", i), 90_000))
	}
	big := write("big.test.yaml", suite)
	if st, _ := os.Stat(big); st.Size() < 3<<20 {
		t.Fatalf("the suite has %d bytes, not more than a request body", st.Size())
	}
	suites, err := ReadFile(big)
	if err != nil || len(suites) != 1 || len(suites[0].Cases) != 40 {
		t.Fatalf("a suite of %d cases over 3 MiB: %v", len(suites), err)
	}

	huge := volume("huge", 3<<20)
	write("huge.yaml", huge+"\n")
	for _, tc := range []struct{ name, text, want string }{
		{"inline", "crds: " + crd + "\ncases:\n- name: small\n  object: " + volume("s", 1) + "\n  expect: allowed\n- name: too big\n  object: " + huge + "\n",
			`inline.test.yaml:7: case "too big": its object: kubectl sends this object in a request body of `},
		{"old", "crds: " + crd + "\ncases:\n- name: too big before\n  oldObject: " + huge + "\n  object: " + volume("s", 1) + "\n",
			`old.test.yaml:4: case "too big before": its oldObject: kubectl sends this object in a request body of `},
		{"file", "crds: " + crd + "\ncases:\n- name: from a file\n  object: huge.yaml\n",
			`huge.yaml:1: case "from a file": its object: kubectl sends this object in a request body of `},
	} {
		_, err := ReadFile(write(tc.name+".test.yaml", tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "more than the API server reads (3 MiB by default)") ||
			!errors.Is(err, document.ErrBeyondLimits) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}

	// Past the bound of a document of the inputs, read no further.
	f, err := os.Create(filepath.Join(dir, "endless.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "crds: %s\ncases:\n- name: padded\n  object: {pad: \"", crd)
	if err := f.Truncate(document.MaxDocumentBytes + 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(f.Name())
	if want := f.Name() + ":1: a document of more than 64 MiB: kubectl-crd reads one document at a time and refuses larger ones; split it into several documents or files"; err == nil || err.Error() != want {
		t.Errorf("a suite over 64 MiB: %v, want %q", err, want)
	}
}
