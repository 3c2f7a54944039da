package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
)

const exampleSuite = "../../examples/test/volume.test.yaml"

// writeSuite writes a test file into a temporary directory: the example
// suite with edit applied, its CRDs those of examples/lower.
func writeSuite(t *testing.T, edit func(string) string) string {
	t.Helper()
	data, err := os.ReadFile(exampleSuite)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := filepath.Abs("../../examples/lower/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old, err := filepath.Abs("../../examples/test/volume-v0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "crds: ../lower/crd.yaml", "crds: "+crds, 1)
	text = strings.ReplaceAll(text, "oldCRD: volume-v0.yaml", "oldCRD: "+old)
	file := filepath.Join(t.TempDir(), "suite.test.yaml")
	if err := os.WriteFile(file, []byte(edit(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// -o junit, sarif and github of kubectl crd test: a testcase per case, a
// failure and an error result at its line per failing case, a skipped
// testcase and a note per case without an expectation; the exit code is
// the text output's.
func TestTestReportFormats(t *testing.T) {
	failing := writeSuite(t, func(s string) string {
		s = strings.Replace(s, "message: a volume never shrinks}", "message: a volume may shrink}", 1)
		return s + "\n- name: a case to record\n  object: *volume\n"
	})
	lines := strings.Split(mustRead(t, failing), "\n")
	recordLine := len(lines) - 2 // the "- name:" line, before the object and the final newline
	if !strings.Contains(lines[recordLine-1], "a case to record") {
		t.Fatalf("line %d of the suite is %q", recordLine, lines[recordLine-1])
	}
	for _, tc := range []struct {
		file                 string
		code                 int
		cases, failed, noExp int
		results              []reportcheck.Finding // SARIF and GitHub, in order
	}{
		{exampleSuite, 0, 11, 0, 0, nil},
		{failing, 1, 12, 1, 1, []reportcheck.Finding{
			{Rule: "TestCase", Level: "error", File: failing, Line: 26},
			{Rule: "TestCase", Level: "note", File: failing, Line: recordLine},
		}},
	} {
		plain := run(t, "", "test", tc.file)
		if plain.code != tc.code {
			t.Fatalf("%s: exit %d, want %d:\n%s%s", tc.file, plain.code, tc.code, plain.stdout, plain.stderr)
		}
		for _, format := range []string{"junit", "sarif", "github"} {
			r := run(t, "", "test", tc.file, "-o", format)
			if r.code != tc.code || r.stderr != "" {
				t.Errorf("%s -o %s: exit %d, want %d; stderr:\n%s", tc.file, format, r.code, tc.code, r.stderr)
			}
			switch format {
			case "junit":
				doc := reportcheck.JUnit(t, []byte(r.stdout))
				if doc.Tests != tc.cases || doc.Failures != tc.failed || doc.Skipped() != tc.noExp {
					t.Errorf("%s -o junit: tests=%d failures=%d skipped=%d, want %d, %d, %d", tc.file,
						doc.Tests, doc.Failures, doc.Skipped(), tc.cases, tc.failed, tc.noExp)
				}
				for _, c := range doc.Cases() {
					if c.ClassName != tc.file || c.Name == "" {
						t.Errorf("testcase %q of class %q", c.Name, c.ClassName)
					}
					if len(c.Failures) > 0 && (c.Name != "a volume never shrinks" || c.Failures[0].Type != "TestCase" ||
						!strings.Contains(c.Failures[0].Text, "observed error not expected")) {
						t.Errorf("failure of %q: %+v", c.Name, c.Failures)
					}
				}
			case "sarif":
				checkFindings(t, tc.file+" -o sarif", reportcheck.SARIF(t, []byte(r.stdout)), tc.results)
			case "github":
				checkFindings(t, tc.file+" -o github", reportcheck.GitHub(t, r.stdout), tc.results)
			}
		}
	}
}

func checkFindings(t *testing.T, what string, got, want []reportcheck.Finding) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d: %+v", what, len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		g.Path = ""
		if g.Level == "notice" {
			g.Level = "note" // GitHub's word for it
		}
		if g != w {
			t.Errorf("%s: result %d is %+v, want %+v", what, i, g, w)
		}
	}
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// With --coverage=error a rule no case exercises fails the run: an error
// result at the rule's line, a failing JUnit testcase (a note of the
// suite's system-err with --coverage alone); a bad test file is exit 2 and
// no report.
func TestTestReportCoverageAndBadFile(t *testing.T) {
	// Only the first case: no rule is exercised.
	suite := writeSuite(t, func(s string) string {
		i := strings.Index(s, "\n- name: the zone is immutable")
		return s[:i+1]
	})
	r := run(t, "", "test", suite, "--coverage=error", "-o", "sarif")
	if r.code != ExitFindings {
		t.Errorf("--coverage=error -o sarif: exit %d, want %d:\n%s", r.code, ExitFindings, r.stderr)
	}
	results := reportcheck.SARIF(t, []byte(r.stdout))
	if len(results) == 0 {
		t.Error("no result for the rules no case exercises")
	}
	for _, f := range results {
		if f.Rule != "TestCase" || f.Level != "error" || !strings.HasSuffix(f.File, "examples/lower/crd.yaml") || f.Line < 1 {
			t.Errorf("result %+v: want an error of TestCase at a line of the CRD", f)
		}
	}
	// JUnit: a failing testcase per rule no case exercises, as the run
	// fails; with --coverage alone, notes of the suite's system-err.
	r = run(t, "", "test", suite, "--coverage=error", "-o", "junit")
	doc := reportcheck.JUnit(t, []byte(r.stdout))
	if r.code != ExitFindings || doc.Tests != 1+len(results) || doc.Failures != len(results) || doc.SystemErr() != "" {
		t.Errorf("--coverage=error -o junit: exit %d, %d tests, %d failures (want %d), system-err %q", r.code, doc.Tests, doc.Failures, len(results), doc.SystemErr())
	}
	for _, c := range doc.Cases() {
		if len(c.Failures) > 0 && (c.Failures[0].Type != "TestCase" || !strings.Contains(c.Failures[0].Text, "no case's object is refused by")) {
			t.Errorf("testcase %q: %+v", c.Name, c.Failures)
		}
	}
	r = run(t, "", "test", suite, "--coverage", "-o", "junit")
	doc = reportcheck.JUnit(t, []byte(r.stdout))
	if r.code != 0 || doc.Tests != 1 || doc.Failures != 0 || !strings.Contains(doc.SystemErr(), "no case's object is refused by") {
		t.Errorf("--coverage -o junit: exit %d, %d tests, %d failures, system-err %q", r.code, doc.Tests, doc.Failures, doc.SystemErr())
	}

	bad := filepath.Join(t.TempDir(), "bad.test.yaml")
	if err := os.WriteFile(bad, []byte("cases:\n- name: x\n  expect: refuse\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"junit", "sarif", "github"} {
		if r := run(t, "", "test", bad, "-o", format); r.code != ExitInput || r.stdout != "" {
			t.Errorf("a bad file -o %s: exit %d, stdout %q; want exit %d and no report", format, r.code, r.stdout, ExitInput)
		}
	}
	if r := run(t, "", "test", exampleSuite, "-o", "xml"); r.code != ExitInput {
		t.Errorf("-o xml: exit %d, want %d", r.code, ExitInput)
	}
}
