package plugin

import (
	"encoding/json"
	"testing"
)

// prune's --report carries the server's warnings on a CRD of the inputs
// with the inputs' warnings, at the CRD's line; the exit code is 0.
func TestPruneCRDWarnings(t *testing.T) {
	server := serverWarnings(t)
	r := run(t, uintCRD, "prune", "--offline", "--report", "-", "-f", "-")
	var report struct {
		Warnings []inputWarning `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != 0 {
		t.Fatalf("prune --report: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(report.Warnings) != len(server) || report.Warnings[0].Message != server[0] || report.Warnings[0].Source.Line != 1 {
		t.Errorf("prune --report warnings: %+v, want %q", report.Warnings, server)
	}
}
