package plugin

import (
	"os"
	"strings"
	"testing"
)

// Standard input can be read once: "-" named twice, by one flag or by two,
// is a usage error naming both, before anything is read or contacted.
func TestStdinNamedTwice(t *testing.T) {
	crd, err := os.ReadFile(exampleCRD)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", "--offline", "--crd-file", "-", "-f", "-"},
			"error: standard input (-) is named by both --crd-file and -f: it can be read only once\n"},
		{[]string{"prune", "--offline", "-f", "-", "--crd-file", "-"},
			"error: standard input (-) is named by both --crd-file and -f: it can be read only once\n"},
		{[]string{"prune", "--offline", "-f", "-", "-f", "-"},
			"error: standard input (-) is named twice by -f: it can be read only once\n"},
		{[]string{"prune", "--offline", "--crd-file", exampleCRD + ",-", "--crd-file", "-", "-f", exampleJob},
			"error: standard input (-) is named twice by --crd-file: it can be read only once\n"},
		{[]string{"check-update", "--offline", "--crd-file", "-", "--old", exampleJob, "-f", "-"},
			"error: standard input (-) is named by both --crd-file and -f: it can be read only once\n"},
		{[]string{"check-update", "--offline", "--crd-file", exampleCRD, "--old", "-", "-f", "-"},
			"error: standard input (-) is named by both -f and --old: it can be read only once\n"},
		{[]string{"check-update", "--offline", "--crd-file", "-", "--old", "-", "-f", exampleJob},
			"error: standard input (-) is named by both --crd-file and --old: it can be read only once\n"},
		{[]string{"explain-structural", "-f", "-", "-f", "-"},
			"error: standard input (-) is named twice by -f: it can be read only once\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, string(crd), tc.args...)
			if r.code != ExitInput || r.stdout != "" || r.stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}

// Standard input named once reads it, whichever flag names it.
func TestStdinOnce(t *testing.T) {
	crd, _ := os.ReadFile(exampleCRD)
	job, _ := os.ReadFile(exampleJob)
	r := run(t, string(crd), "prune", "--offline", "--crd-file", "-", "-f", exampleJob)
	if r.code != 0 || !strings.Contains(r.stderr, `pruned unknown field "spec.privileged"`) {
		t.Errorf("--crd-file -: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = run(t, string(job), "check-update", "--offline", "--crd-file", exampleCRD, "--old", "-", "-f", exampleJob)
	want := "MaintenanceNightlyJob ops/backdoor-check: update allowed (../../examples/maintenance/job.yaml:3)\n" +
		"MaintenanceNightlyJob ops/rotate-logs: update allowed (../../examples/maintenance/job.yaml:20)\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("--old -: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}
