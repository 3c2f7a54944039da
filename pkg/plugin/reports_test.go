package plugin

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
)

// -o sarif, junit and github print one document on stdout, the report,
// and no object; the findings still go to stderr as lines, and the exit
// code is the one of -o yaml.
func TestPruneReportFormats(t *testing.T) {
	args := []string{"prune", "--offline", "--crd-file", exampleCRD, "-f", exampleJob, "--fail-on-prune"}
	plain := run(t, "", args...)
	for _, format := range []string{"sarif", "junit", "github"} {
		r := run(t, "", append(args, "-o", format)...)
		if r.code != plain.code || r.stderr != plain.stderr {
			t.Errorf("-o %s: exit %d, stderr\n%s\nwant exit %d, stderr\n%s", format, r.code, r.stderr, plain.code, plain.stderr)
		}
		if strings.Contains(r.stdout, "backdoor-check\n") || strings.Contains(r.stdout, "apiVersion: operations.example.com") {
			t.Errorf("-o %s prints the objects:\n%s", format, r.stdout)
		}
		checkOneDocument(t, format, r.stdout, 2)
	}
}

// checkOneDocument checks that out is one document of format with n
// findings, all of them errors.
func checkOneDocument(t *testing.T, format, out string, n int) {
	t.Helper()
	switch format {
	case "sarif":
		var log struct {
			Runs []struct {
				Results []struct{ Level string }
			}
		}
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&log); err != nil || dec.More() || len(log.Runs) != 1 || len(log.Runs[0].Results) != n {
			t.Errorf("-o sarif: not one log of %d results (%v):\n%s", n, err, out)
		}
	case "junit":
		var suites struct {
			Failures int `xml:"failures,attr"`
		}
		if err := xml.Unmarshal([]byte(out), &suites); err != nil || suites.Failures != n {
			t.Errorf("-o junit: not one document with %d failures (%v):\n%s", n, err, out)
		}
	case "github":
		// The notice of which minor answered, then the findings.
		reportcheck.GitHubKubernetes(t, out)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:]
		for _, l := range lines {
			if !strings.HasPrefix(l, "::error file=") {
				t.Errorf("-o github: %q is no error command", l)
			}
		}
		if len(lines) != n {
			t.Errorf("-o github: %d lines, want %d:\n%s", len(lines), n, out)
		}
	}
}

// The report formats and stdout's other writers exclude each other;
// --in-place writes its files and the report.
func TestPruneReportFormatFlags(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.yaml")
	in, err := os.ReadFile(exampleJob)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(job, in, 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"prune", "--offline", "--crd-file", exampleCRD, "-f", job}
	for _, extra := range [][]string{{"--diff", "-o", "sarif"}, {"--report", "-", "-o", "junit"}, {"--in-place", "-o", "json"}} {
		if r := run(t, "", append(base, extra...)...); r.code != ExitInput {
			t.Errorf("%v: exit %d, want %d:\n%s", extra, r.code, ExitInput, r.stderr)
		}
	}
	r := run(t, "", append(base, "--in-place", "-o", "github")...)
	if r.code != ExitOK || strings.Count(r.stdout, "::warning file="+job) != 2 {
		t.Errorf("--in-place -o github: exit %d, stdout\n%s", r.code, r.stdout)
	}
	if out, _ := os.ReadFile(job); strings.Contains(string(out), "privileged: true") {
		t.Errorf("--in-place -o github did not rewrite %s", job)
	}
}

func TestCheckUpdateReportFormats(t *testing.T) {
	args := []string{"check-update", "--offline", "--crd-file", "../../test/e2e/testdata/cel/crd.yaml", "--old", "testdata/update/old.yaml", "-f", "testdata/update/new.yaml"}
	for _, format := range []string{"sarif", "junit", "github"} {
		r := run(t, "", append(args, "-o", format)...)
		if r.code != ExitFindings {
			t.Errorf("-o %s: exit %d:\n%s", format, r.code, r.stderr)
		}
		checkOneDocument(t, format, r.stdout, 3)
	}
}

func TestExplainReportFormats(t *testing.T) {
	for _, format := range []string{"sarif", "junit", "github"} {
		r := run(t, "", "explain-structural", "-f", "../../examples/non-structural/crd.yaml", "-o", format)
		if r.code != ExitFindings {
			t.Errorf("-o %s: exit %d:\n%s", format, r.code, r.stderr)
		}
		checkOneDocument(t, format, r.stdout, 6)
	}
}
