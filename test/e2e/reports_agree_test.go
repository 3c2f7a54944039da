package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// TestReportsAgreeWithExit is the property that a report's failing
// results and the exit code say the same: for every command with reports
// (prune, check-update's object updates and CRD upgrades with their
// objects, explain-structural, test) over some examples and end-to-end
// test data (reportsAgreeSample; the others and some corpus projects in
// TestReportsAgreeWithExitSweep), each with the gate's flags varied over
// the checks its findings are of, a run exits 1 exactly when its report
// holds a failing result (a SARIF error, a JUnit failure or error,
// a ::error command), and the text, JSON, SARIF, JUnit and GitHub runs
// exit alike, with the same failing results in the three reports and the
// findings of the JSON report in SARIF. The KRM function's runs exit 1
// exactly when a result has severity error.
func TestReportsAgreeWithExit(t *testing.T) {
	NewTest(t) // skipped with -short
	cases, functions := reportsAgreeCases(t)
	n := 0
	for _, fc := range functions {
		if reportsAgreeSample["function: "+fc.name] {
			n++
			t.Run("function "+fc.name, fc.agree)
		}
	}
	cases = slices.DeleteFunc(cases, func(tc reportCase) bool { return !reportsAgreeSample[tc.args[0]+": "+tc.name] })
	if n+len(cases) != len(reportsAgreeSample) {
		t.Errorf("%d of the %d cases of reportsAgreeSample found", n+len(cases), len(reportsAgreeSample))
	}
	agreeAll(t, cases)
}

// reportsAgreeSample are the cases TestReportsAgreeWithExit runs, by
// command and name: of each command, inputs whose findings bring every
// variant (--fail-on-prune, --ignore-missing-crds, --strict, --coverage,
// each check alone), an object update and a CRD upgrade, one refused.
var reportsAgreeSample = map[string]bool{
	"prune: examples maintenance": true, "prune: examples refused": true, "prune: examples krm": true, "prune: testdata krm-missing": true,
	"explain-structural: examples non-structural, one version": true, "explain-structural: testdata crdvalidation": true,
	"check-update: examples immutable": true, "check-update: examples krm-update": true, "check-update: testdata crdupgrade": true,
	"check-update: testdata crdupgrade, an object without a name, hurt": true,
	"check-update: testdata crdupgrade, objects and updates":            true, "check-update: testdata crdupgrade-refused compile": true,
	"test: examples test": true, "test: a suite of coverage": true,
	"function: examples krm": true, "function: testdata crdupgrade": true,
}

// TestReportsAgreeWithExitSweep is TestReportsAgreeWithExit's property
// over the cases it leaves out, and some corpus projects: run by .ci/run's
// matrix target.
func TestReportsAgreeWithExitSweep(t *testing.T) {
	corpusSweep(t)
	cases, functions := reportsAgreeCases(t)
	for _, fc := range functions {
		if !reportsAgreeSample["function: "+fc.name] {
			t.Run("function "+fc.name, fc.agree)
		}
	}
	cases = slices.DeleteFunc(cases, func(tc reportCase) bool { return reportsAgreeSample[tc.args[0]+": "+tc.name] })
	dir := corpus.Dir(t)
	agreeAll(t, append(cases,
		pruneCI("corpus keda", dir, "--crd-file", "crds/keda", "-R", "-f", "crs/keda"),
		explainCI("corpus gateway-api", dir, "-f", "crds/gateway-api", "-R"),
		checkUpdateCI("corpus argo-cd upgrade", dir, "--old", "crds/argo-cd/old-argo-cd@v1.8.7", "-R", "--objects", "crs/argo-cd/old-argo-cd@v1.8.7", "-f", "crds/argo-cd/argo-cd@v3.6.1"),
	))
}

// reportsAgreeCases are the cases of the property over the examples and
// the end-to-end test data, and those of the function.
func reportsAgreeCases(t *testing.T) ([]reportCase, []functionCase) {
	root := repoRoot()
	// Existing objects without a name (issue 38): one the upgrade hurts
	// only in what the old CRD refuses too, one it hurts.
	tmp := t.TempDir()
	nameless, namelessHurt := filepath.Join(tmp, "nameless.yaml"), filepath.Join(tmp, "nameless-hurt.yaml")
	writeFile(t, nameless, "apiVersion: upgrade.example.com/v1\nkind: Gizmo\nmetadata: {namespace: default}\nspec: {size: 2}\n")
	writeFile(t, namelessHurt, "apiVersion: upgrade.example.com/v1\nkind: Gizmo\nmetadata: {namespace: default}\nspec: {size: 2, mode: c, extra: {drop: d}}\n")
	const up, refused = "test/e2e/testdata/crdupgrade/", "test/e2e/testdata/crdupgrade-refused/"
	cases := []reportCase{
		pruneCI("examples maintenance", root, "--crd-file", "examples/maintenance/crd.yaml", "-f", "examples/maintenance/job.yaml"),
		pruneCI("examples versions", root, "-f", "examples/versions/crd.yaml", "-f", "examples/versions/widget.yaml", "-f", "examples/krm/widget.yaml"),
		pruneCI("examples versions, a conversion webhook", root, "-f", "examples/versions/crd-webhook.yaml", "-f", "examples/versions/widget.yaml"),
		pruneCI("examples reasons", root, "--crd-file", "examples/reasons/crd.yaml", "-f", "examples/reasons/gadget.yaml", "--defaults"),
		pruneCI("examples refused", root, "-f", "examples/refused/crd.yaml", "-f", "examples/refused/backups.yaml"),
		pruneCI("examples lower", root, "-f", "examples/lower"),
		pruneCI("examples immutable", root, "-f", "examples/immutable/crd.yaml", "-f", "examples/immutable/database.yaml"),
		pruneCI("examples krm", root, "-f", "examples/krm/crd.yaml", "-f", "examples/krm/widget.yaml", "-f", "examples/krm/check.yaml"),
		pruneCI("examples krm-update", root, "-f", "examples/krm-update/crd.yaml", "-f", "examples/krm-update/buckets.yaml", "-f", "examples/krm-update/check.yaml"),
		pruneCI("examples krm-upgrade", root, "-f", "examples/krm-upgrade/crd.yaml", "-f", "examples/krm-upgrade/gizmos.yaml", "-f", "examples/krm-upgrade/check.yaml"),
		pruneCI("examples storage-move", root, "-R", "-f", "examples/storage-move/crd-v2.yaml", "-f", "examples/storage-move/queues"),
		pruneCI("examples upgrade", root, "-f", "examples/upgrade/crd-v2.yaml", "-f", "examples/upgrade/backups"),
		pruneCI("a legacy CRD", root, "-f", "test/e2e/testdata/legacy-crd.yaml"),
		pruneCI("testdata createvalidation", root, "-f", "test/e2e/testdata/createvalidation"),
		pruneCI("testdata krm-missing", root, "-f", "test/e2e/testdata/krm-missing/gizmo.yaml", "-f", "test/e2e/testdata/krm-missing/check.yaml"),
		pruneCI("testdata oldidentity", root, "-f", "test/e2e/testdata/oldidentity/crd.yaml", "-f", "test/e2e/testdata/oldidentity/vault.yaml"),
		pruneCI("testdata crdupgrade", root, "-f", up+"new.yaml", "-f", up+"objects.yaml"),
		pruneCI("testdata storagemove", root, "-f", "test/e2e/testdata/storagemove/new.yaml", "-f", "test/e2e/testdata/storagemove/objects.yaml"),
		explainCI("examples", root, "-f", "examples", "-R"),
		explainCI("testdata crdvalidation", root, "-f", "test/e2e/testdata/crdvalidation", "-f", "test/e2e/testdata/legacy-crd.yaml"),
		explainCI("examples non-structural, one version", root, "-f", "examples/non-structural/crd.yaml", "--version", "v1"),
		checkUpdateCI("examples immutable", root, "--crd-file", "examples/immutable/crd.yaml", "--old", "examples/immutable/database.yaml", "-f", "examples/immutable/database-v2.yaml"),
		checkUpdateCI("examples krm-update", root, "--crd-file", "examples/krm-update/crd.yaml", "--old", "examples/krm-update/previous", "-f", "examples/krm-update/buckets.yaml"),
		checkUpdateCI("examples upgrade", root, "--old", "examples/upgrade/crd-v1.yaml", "--objects", "examples/upgrade/backups/", "-f", "examples/upgrade/crd-v2.yaml"),
		checkUpdateCI("examples krm-upgrade", root, "--old", "examples/krm-upgrade/previous/crd.yaml", "--objects", "examples/krm-upgrade/gizmos.yaml", "-f", "examples/krm-upgrade/crd.yaml"),
		checkUpdateCI("examples storage-move", root, "--old", "examples/storage-move/crd-v1.yaml", "--objects", "examples/storage-move/queues", "-f", "examples/storage-move/crd-v2.yaml"),
		checkUpdateCI("testdata crdupgrade", root, "--old", up+"old.yaml", "--objects", up+"objects.yaml", "-f", up+"new.yaml"),
		checkUpdateCI("testdata crdupgrade, an object without a name", root, "--old", up+"old.yaml", "--objects", nameless, "-f", up+"new.yaml"),
		checkUpdateCI("testdata crdupgrade, an object without a name, hurt", root, "--old", up+"old.yaml", "--objects", namelessHurt, "-f", up+"new.yaml"),
		checkUpdateCI("testdata crdupgrade, objects and updates", root, "--old", up+"old.yaml", "--old", up+"objects.yaml", "-f", up+"new.yaml", "-f", up+"objects.yaml"),
		checkUpdateCI("testdata storagemove", root, "--old", "test/e2e/testdata/storagemove/old.yaml", "--objects", "test/e2e/testdata/storagemove/objects.yaml", "-f", "test/e2e/testdata/storagemove/new.yaml"),
	}
	for _, name := range []string{"compile", "cost", "scope", "selectable"} {
		cases = append(cases, checkUpdateCI("testdata crdupgrade-refused "+name, root, "--old", refused+"old.yaml", "--objects", refused+"objects.yaml", "-f", refused+name+".yaml"))
	}
	cases = append(cases,
		testCI("examples test", root, "examples/test"),
		testCI("examples kep-immutable", root, "examples/kep-immutable"),
		testCI("examples expect", root, "examples/expect"),
		testCI("examples test and expect, some cases", root, "--run", "immutable|protocol", "examples/test", "examples/expect"),
		testCI("a suite of coverage", root, "pkg/engine/crdtest/testdata/coverage"),
	)
	// The function's results, over the examples of its docs and the upgrades.
	functions := []functionCase{
		{name: "examples krm", items: []string{"examples/krm/crd.yaml", "examples/krm/widget.yaml"}},
		{name: "examples krm-update", items: []string{"examples/krm-update/crd.yaml", "examples/krm-update/buckets.yaml"}, previous: []string{"examples/krm-update/previous"}},
		{name: "examples krm-upgrade", items: []string{"examples/krm-upgrade/crd.yaml", "examples/krm-upgrade/gizmos.yaml"}, previous: []string{"examples/krm-upgrade/previous"}},
		{name: "examples refused", items: []string{"examples/refused/crd.yaml", "examples/refused/backups.yaml"}},
		{name: "testdata crdupgrade", items: []string{up + "new.yaml", up + "objects.yaml"}, previous: []string{up + "old.yaml"}},
		{name: "a legacy CRD", items: []string{"test/e2e/testdata/legacy-crd.yaml"}},
	}
	return cases, functions
}

// agreeAll checks the property of each case, with each of its variants.
func agreeAll(t *testing.T, cases []reportCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := NewTest(t).WithDir(tc.dir)
			for _, v := range tc.variants(t, x) {
				name := strings.Join(v, " ")
				if name == "" {
					name = "default"
				}
				t.Run(name, func(t *testing.T) { tc.agree(t, x, append(slices.Clip(tc.args), v...)) })
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testCI is a run of kubectl crd test, compared with its JSON report: a
// failing or unexpected case at its line; with --coverage, a rule no case
// exercises at the rule's.
func testCI(name, dir string, args ...string) reportCase {
	return reportCase{name: name, dir: dir, args: append([]string{"test"}, args...),
		json: func(args []string) []string { return append(slices.Clip(args), "-o", "json") },
		expect: func(t *testing.T, args []string, doc []byte) ([]string, int) {
			var r struct {
				Cases []struct {
					Source           jsonSource
					Pass, Unexpected bool
				}
				Uncovered []struct{ Source jsonSource }
			}
			decode(t, doc, &r)
			var want []string
			for _, c := range r.Cases {
				if !c.Pass || c.Unexpected {
					want = append(want, at("TestCase", c.Source.File, 0, c.Source.Line, ""))
				}
			}
			objects := len(r.Cases)
			coverage := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--coverage") })
			for _, u := range r.Uncovered {
				if coverage {
					want = append(want, at("TestCase", u.Source.File, 0, u.Source.Line, ""))
				}
			}
			if slices.Contains(args, "--coverage=error") {
				objects += len(r.Uncovered)
			}
			return want, objects
		}}
}

// variants are the gate's flags to run tc with: none; for prune and
// check-update, no check failing, then each check the default run's
// findings are of alone (and --fail-on-prune, --ignore-missing-crds,
// --strict where they change something); for test, its coverage and
// --lower.
func (tc reportCase) variants(t *testing.T, x *Test) [][]string {
	t.Helper()
	out := [][]string{nil}
	switch tc.args[0] {
	case "test":
		return append(out, []string{"--coverage"}, []string{"--coverage=error"}, []string{"--lower"})
	case "explain-structural":
		return out
	}
	r := x.Run("kubectl-crd", append(slices.Clip(tc.args), "-o", "sarif")...)
	if r.Code > 1 {
		t.Fatalf("%v -o sarif: exit %d\n%s", tc.args, r.Code, r.Stderr)
	}
	checks := map[string]bool{}
	for _, f := range reportcheck.SARIF(t, []byte(r.Stdout)) {
		checks[f.Rule] = true
	}
	out = append(out, []string{"--fail-on="})
	for _, c := range finding.Checks {
		if checks[string(c)] {
			out = append(out, []string{"--fail-on=" + string(c)})
		}
	}
	if checks[string(finding.MissingCRD)] {
		out = append(out, []string{"--ignore-missing-crds"})
	}
	if tc.args[0] == "prune" && checks[string(finding.Prune)] {
		out = append(out, []string{"--fail-on-prune"})
	}
	if slices.Contains(tc.args, "--objects") {
		out = append(out, []string{"--strict"}, []string{"--strict", "--fail-on=Invalid"})
	}
	return out
}

// agree runs args in every output and checks the property: one exit code,
// 1 exactly when there are failing results, the same failing results in
// every report, the JSON report's findings in SARIF.
func (tc reportCase) agree(t *testing.T, x *Test, args []string) {
	t.Helper()
	formats := []string{"text", "json", "sarif", "junit", "github"}
	runs := make([]Result, len(formats))
	errs := make([]error, len(formats))
	inTurn(2, len(formats), func(_, i int) {
		a := slices.Clip(args)
		switch formats[i] {
		case "text":
		case "json":
			a = tc.json(a)
		default:
			a = append(a, "-o", formats[i])
		}
		runs[i], errs[i] = x.run("kubectl-crd", a...)
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", formats[i], err)
		}
	}
	code := runs[0].Code
	for i, r := range runs {
		if r.Code != code {
			t.Errorf("%v: exit %d in %s, %d in text:\n%s", args, r.Code, formats[i], code, r.Stderr)
		}
	}
	if code > 1 {
		t.Logf("%v: exit %d in every output:\n%s", args, code, runs[0].Stderr)
		return
	}
	sarif := reportcheck.SARIF(t, []byte(runs[2].Stdout))
	junit := reportcheck.JUnit(t, []byte(runs[3].Stdout))
	github := reportcheck.GitHub(t, runs[4].Stdout)
	errors := levels(sarif)["error"]
	_, failing := junit.Totals()
	if (errors > 0) != (code == 1) {
		t.Errorf("%v: exit %d with %d SARIF errors:\n%s%s", args, code, errors, runs[0].Stdout, runs[0].Stderr)
	}
	if n := levels(github)["error"]; n != errors || failing != errors {
		t.Errorf("%v: %d SARIF errors, %d ::error commands, %d JUnit failures and errors", args, errors, n, failing)
	}
	if diff := cmp.Diff(placed(sarif, false), placed(github, false)); diff != "" {
		t.Errorf("%v: GitHub commands against SARIF results (-sarif +github):\n%s", args, diff)
	}
	want, _ := tc.expect(t, args, []byte(runs[1].Stdout))
	slices.Sort(want)
	if diff := cmp.Diff(want, placed(sarif, true)); diff != "" {
		t.Errorf("%v: SARIF results against the JSON report (-json +sarif):\n%s", args, diff)
	}
	t.Logf("exit %d, %d findings, %d failing", code, len(sarif), errors)
}

// functionCase is a run of the KRM function (kubectl crd krm on a
// ResourceList): the items' files and previous, relative to the
// repository.
type functionCase struct {
	name            string
	items, previous []string
}

// agree is the property for the function's results: a run fails (exit 1)
// exactly when a result has severity error, for the default failOn, none
// (which fails nothing), and each check its findings are of alone.
func (fc functionCase) agree(t *testing.T) {
	x := NewTest(t)
	var items []interface{}
	for _, f := range fc.items {
		for _, d := range readDocs(t, filepath.Join(repoRoot(), f)) {
			items = append(items, d.Object)
		}
	}
	run := func(failOn []string) (code int, results []functionResult) {
		config := map[string]interface{}{"apiVersion": "crd.kubectl.dev/v1alpha1", "kind": "CRDCheck", "metadata": map[string]interface{}{"name": "check"}}
		if len(fc.previous) > 0 {
			config["previous"] = fc.previous
		}
		if failOn != nil {
			config["failOn"] = failOn
		}
		list, err := sigsyaml.Marshal(map[string]interface{}{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "functionConfig": config, "items": items})
		if err != nil {
			t.Fatal(err)
		}
		r := x.WithStdin(string(list)).Run("kubectl-crd", "krm")
		var out struct{ Results []functionResult }
		if err := sigsyaml.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("failOn %v: exit %d, the ResourceList does not parse: %v\n%s", failOn, r.Code, err, r.Stderr)
		}
		return r.Code, out.Results
	}
	_, all := run([]string{})
	variants := [][]string{nil, {}}
	seen := map[string]bool{}
	for _, r := range all {
		if c := r.Tags["finding"]; c != "" && !seen[c] {
			seen[c] = true
			variants = append(variants, []string{c})
		}
	}
	for _, failOn := range variants {
		code, results := run(failOn)
		errors := 0
		for _, r := range results {
			if r.Severity == "error" {
				errors++
			}
		}
		name := fmt.Sprint(failOn)
		if failOn == nil {
			name = "default"
		}
		if code > 1 || (code == 1) != (errors > 0) {
			t.Errorf("failOn %s: exit %d with %d results of severity error", name, code, errors)
		}
		if failOn != nil && len(failOn) == 0 && code != 0 {
			t.Errorf("failOn []: exit %d, though the gate names nothing", code)
		}
		t.Logf("failOn %s: exit %d, %d results, %d errors", name, code, len(results), errors)
	}
}

// functionResult is what the property reads of a result.
type functionResult struct {
	Severity string
	Tags     map[string]string
}
