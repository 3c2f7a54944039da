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
