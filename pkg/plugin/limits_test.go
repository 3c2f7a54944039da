package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A document whose aliases expand as far as the bound allows, all of it
// pruned: the report holds each pruned value once, so it is about the size
// of the expansion (issue 14: a 10 MB input gave a 1 GB report).
func TestReportOfAliasesIsBounded(t *testing.T) {
	in := fmt.Sprintf("apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: aliased\n  namespace: ops\n"+
		"spec:\n  command: run\n  a: &a %q\n  b: &b [%s]\n  c: [%s]\n",
		strings.Repeat("x", 3000), strings.TrimSuffix(strings.Repeat("*a,", 28), ","), strings.TrimSuffix(strings.Repeat("*b,", 28), ","))
	report := filepath.Join(t.TempDir(), "report.json")
	r := run(t, in, "prune", "--crd-file", exampleCRD, "-f", "-", "--report", report)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	expanded := 3000 * 28 * 29 // a, b and c's values, expanded
	if len(b) < expanded || len(b) > 2*expanded || len(r.stdout)+len(r.stderr) > 10_000 {
		t.Errorf("%d bytes expand to about %d; the report is %d bytes, the output %d", len(in), expanded, len(b), len(r.stdout)+len(r.stderr))
	}
}

// kubectl crd test bounds a test file as a file of inputs and each case's
// object as a request body (issue 38): a suite of 3.6 MB runs, a case whose
// object is over 3 MiB is bad input naming the case and the bound.
func TestTestFileBounds(t *testing.T) {
	dir := t.TempDir()
	crd, _ := filepath.Abs("../../examples/lower/crd.yaml")
	volume := func(name string, pad int) string {
		return fmt.Sprintf(`{"apiVersion": "storage.example.com/v1", "kind": "Volume", "metadata": {"name": %q, "annotations": {"pad": %q}}, "spec": {"zone": "a", "size": 1, "mountOptions": ["x"]}}`,
			name, strings.Repeat("x", pad))
	}
	suite := "crds: " + crd + "\ncases:\n"
	for i := range 40 {
		suite += fmt.Sprintf("- name: case %d\n  object: %s\n  expect: allowed\n", i, volume(fmt.Sprint("v", i), 90_000))
	}
	big := filepath.Join(dir, "big.test.yaml")
	if err := os.WriteFile(big, []byte(suite), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "test", big); r.code != 0 || !strings.Contains(r.stdout, "40 passed") {
		t.Errorf("a suite of %d bytes: exit %d\n%s%s", len(suite), r.code, r.stdout, r.stderr)
	}
	huge := filepath.Join(dir, "huge.test.yaml")
	if err := os.WriteFile(huge, []byte("crds: "+crd+"\ncases:\n- name: too big\n  object: "+volume("huge", 3<<20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "test", huge)
	want := "error: " + huge + `:4: case "too big": its object: kubectl sends this object in a request body of 3145886 bytes, more than the API server reads (3 MiB by default): it answers 413 "Request entity too large: limit is 3145728"` + "\n"
	if r.code != ExitInput || r.stderr != want {
		t.Errorf("a case over 3 MiB: exit %d, stderr\n%s\nwant exit %d, stderr\n%s", r.code, r.stderr, ExitInput, want)
	}
}
