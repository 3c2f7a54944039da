package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/reportcheck"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// reportCase is a run of a command whose CI reports (-o sarif, junit,
// github) are compared with its JSON report.
type reportCase struct {
	name string
	dir  string   // where it runs
	args []string // the command and its inputs, without -o / --report
	// json runs the same command for its JSON report; expect reads that
	// report: the findings, placed, and the objects (JUnit's testcases).
	json   func(args []string) []string
	expect func(t *testing.T, args []string, report []byte) (findings []string, objects int)
}

// TestReportsMatchJSON renders every CI format for the examples and for a
// real corpus project (prometheus-operator: its samples pruned against its
// CRDs, its CRDs explained, and its upgrade from v0.38.0 to v0.85.0 over
// the old samples), and checks each against the command's JSON report:
// every finding there, at its rule, file, line and field, and nothing
// else; a JUnit testcase per object, a failure per error, the same exit
// code.
func TestReportsMatchJSON(t *testing.T) {
	root := repoRoot()
	cases := []reportCase{
		pruneCI("examples maintenance", root, "--crd-file", "examples/maintenance/crd.yaml", "-f", "examples/maintenance/job.yaml", "--fail-on-prune"),
		pruneCI("examples versions, a kind no CRD defines", root, "-f", "examples/versions/crd.yaml", "-f", "examples/versions/widget.yaml", "-f", "examples/krm/widget.yaml"),
		pruneCI("examples reasons, defaults", root, "--crd-file", "examples/reasons/crd.yaml", "-f", "examples/reasons/gadget.yaml", "--defaults"),
		pruneCI("examples refused", root, "-f", "examples/refused/crd.yaml", "-f", "examples/refused/backups.yaml"),
		pruneCI("a legacy CRD's warning", root, "-f", "test/e2e/testdata/legacy-crd.yaml"),
		checkUpdateCI("examples immutable", root, "--crd-file", "examples/immutable/crd.yaml", "--old", "examples/immutable/database.yaml", "-f", "examples/immutable/database-v2.yaml"),
		checkUpdateCI("examples upgrade", root, "--old", "examples/upgrade/crd-v1.yaml", "--objects", "examples/upgrade/backups/", "-f", "examples/upgrade/crd-v2.yaml"),
		checkUpdateCI("examples removed-version", root, "--old", "examples/removed-version/crd-v1.yaml", "--objects", "examples/removed-version/sensors/", "-f", "examples/removed-version/crd-v2.yaml"),
		checkUpdateCI("examples removed-version, in -f", root, "--old", "examples/removed-version/crd-v1.yaml", "-f", "examples/removed-version/crd-v2.yaml", "-f", "examples/removed-version/sensors/"),
		checkUpdateCI("examples upgrade, strict", root, "--old", "examples/upgrade/crd-v1.yaml", "--objects", "examples/upgrade/backups/", "-f", "examples/upgrade/crd-v2.yaml", "--strict"),
		explainCI("examples", root, append(exampleDirsBut(t, root, "Chart.yaml"), "-R")...),
	}
	dir := corpus.Dir(t)
	const p = "prometheus-operator"
	cases = append(cases,
		pruneCI("corpus "+p, dir, "--crd-file", "crds/"+p+"/"+p+"@v0.85.0", "-R", "-f", "crs/"+p+"/"+p+"@v0.85.0", "--ignore-missing-crds"),
		explainCI("corpus "+p+" CRDs", dir, "-f", "crds/"+p, "-R"),
		checkUpdateCI("corpus "+p+" upgrade", dir, "--old", "crds/"+p+"/old-"+p+"@v0.38.0", "-R", "--objects", "crs/"+p+"/old-"+p+"@v0.38.0", "-f", "crds/"+p+"/"+p+"@v0.85.0"),
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

// exampleDirsBut are the arguments "-f examples/DIR" of every directory of
// examples/ that holds no file named name below it: a Helm chart's
// templates are no YAML until rendered (kubectl apply -R refuses them
// alike), and kubectl crd reads charts only where it renders them.
func exampleDirsBut(t *testing.T, root, name string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, e := range entries {
		dir := filepath.Join("examples", e.Name())
		found := false
		err := filepath.WalkDir(filepath.Join(root, dir), func(_ string, d os.DirEntry, err error) error {
			found = found || (err == nil && d.Name() == name)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if e.IsDir() && !found {
			args = append(args, "-f", dir)
		}
	}
	if len(args) < 20 {
		t.Fatalf("%d example directories without %s: examples/ is not read", len(args)/2, name)
	}
	return args
}

func (tc reportCase) run(t *testing.T) {
	x := NewTest(t).WithDir(tc.dir)
	j := x.Run("kubectl-crd", tc.json(tc.args)...)
	if j.Code > 1 {
		t.Fatalf("%v: exit %d:\n%s", tc.args, j.Code, j.Stderr)
	}
	want, objects := tc.expect(t, tc.args, []byte(j.Stdout))
	slices.Sort(want)
	render := func(format string) Result {
		r := x.Run("kubectl-crd", append(slices.Clip(tc.args), "-o", format)...)
		if r.Code != j.Code {
			t.Errorf("-o %s: exit %d, the JSON run's %d:\n%s", format, r.Code, j.Code, r.Stderr)
		}
		return r
	}
	sarifOut, githubOut, junitOut := render("sarif").Stdout, render("github").Stdout, render("junit").Stdout
	sarif := reportcheck.SARIF(t, []byte(sarifOut))
	if diff := cmp.Diff(want, placed(sarif, true)); diff != "" {
		t.Errorf("SARIF results against the JSON report (-json +sarif):\n%s", diff)
	}
	errors := levels(sarif)["error"]
	if (errors > 0) != (j.Code == 1) {
		t.Errorf("%d SARIF errors, exit %d", errors, j.Code)
	}
	github := reportcheck.GitHub(t, githubOut)
	if diff := cmp.Diff(placed(sarif, false), placed(github, false)); diff != "" {
		t.Errorf("GitHub commands against SARIF results (-sarif +github):\n%s", diff)
	}
	junit := reportcheck.JUnit(t, []byte(junitOut))
	tests, failing := junit.Totals()
	if tests != objects || failing != errors {
		t.Errorf("JUnit: %d testcases, %d failures; want %d objects, %d errors", tests, failing, objects, errors)
	}
	// Which minor answered: the JSON report's, in every format.
	var fromJSON struct{ Kubernetes kubeversion.Stamp }
	if err := json.Unmarshal([]byte(j.Stdout), &fromJSON); err != nil || fromJSON.Kubernetes.Version == "" {
		t.Errorf("the JSON report says no kubernetes (%v):\n%s", err, j.Stdout)
	}
	words := reportcheck.GitHubKubernetes(t, githubOut)
	if k := fromJSON.Kubernetes; !reflect.DeepEqual(reportcheck.SARIFKubernetes(t, []byte(sarifOut)), k) || !reflect.DeepEqual(junit.Kubernetes(t), k) ||
		!strings.HasPrefix(words, "verdicts of kube-apiserver "+k.Version+", ") || !strings.Contains(words, k.By) {
		t.Errorf("the reports say another answer than the JSON report's %+v: SARIF %+v, JUnit %+v, GitHub %q",
			k, reportcheck.SARIFKubernetes(t, []byte(sarifOut)), junit.Kubernetes(t), words)
	}
	t.Logf("%d findings (%d errors), %d objects", len(want), errors, objects)
}

// placed are the findings as "rule level file:line path" (without the
// path and with the level as GitHub names it when !withPath), sorted.
func placed(found []reportcheck.Finding, withPath bool) []string {
	var out []string
	for _, f := range found {
		level := f.Level
		if level == "note" {
			level = "notice"
		}
		s := fmt.Sprintf("%s %s %s:%d", f.Rule, level, f.File, f.Line)
		if withPath {
			s = fmt.Sprintf("%s %s:%d %s", ruleGroup(f.Rule), f.File, f.Line, f.Path)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// ruleGroup is the rule, but one name for the warnings about the inputs
// and the notes, which the JSON reports do not tell apart.
func ruleGroup(rule string) string {
	if rule == "CRDWarning" || rule == "Note" {
		return "note"
	}
	return rule
}

func levels(found []reportcheck.Finding) map[string]int {
	out := map[string]int{}
	for _, f := range found {
		out[f.Level]++
	}
	return out
}

// at is a finding's place as placed writes it with its path: its own line,
// else its object's, else 1.
func at(rule, file string, line, objectLine int, path string) string {
	if line == 0 {
		line = objectLine
	}
	if line == 0 {
		line = 1
	}
	return fmt.Sprintf("%s %s:%d %s", ruleGroup(rule), file, line, path)
}

type jsonSource struct {
	File string
	Line int
}

type jsonRef struct{ APIVersion, Kind string }

type jsonChange struct {
	Path, Reason string
	Line         int
}

type jsonError struct {
	Field string
	Line  int
}

func pruneCI(name, dir string, args ...string) reportCase {
	return reportCase{name: name, dir: dir, args: append([]string{"prune", "--offline"}, args...),
		json: func(args []string) []string { return append(slices.Clip(args), "--report", "-") },
		expect: func(t *testing.T, _ []string, doc []byte) ([]string, int) {
			var r struct {
				Items []struct {
					Object           jsonRef
					Source           jsonSource
					Status           string
					Changes          []jsonChange
					Errors           []jsonError
					Reformatted      string
					StorageUnchecked bool
				}
				Warnings []struct {
					Source      jsonSource
					Check, Path string
					Fails       bool
				}
			}
			decode(t, doc, &r)
			var want []string
			for _, it := range r.Items {
				src := it.Source
				for _, c := range it.Changes {
					want = append(want, at("Prune", src.File, c.Line, src.Line, c.Path))
				}
				for _, e := range it.Errors {
					want = append(want, at("Invalid", src.File, e.Line, src.Line, e.Field))
				}
				if it.Status == "MissingCRD" && !builtin.IsBuiltin(it.Object.APIVersion) {
					want = append(want, at("MissingCRD", src.File, 0, src.Line, ""))
				}
				if it.StorageUnchecked {
					want = append(want, at("Note", src.File, 0, src.Line, ""))
				}
				if it.Reformatted != "" {
					want = append(want, at("Note", src.File, 0, src.Line, ""))
				}
			}
			objects := len(r.Items)
			for _, w := range r.Warnings {
				// A CRD's finding of a check that is no warning of the
				// server's (NonStructural, Update) is its own rule; one that
				// fails the run is a JUnit testcase of its own.
				if w.Fails {
					objects++
				}
				if w.Check != "" && w.Check != "CRDWarning" {
					want = append(want, at(w.Check, w.Source.File, 0, w.Source.Line, w.Path))
					continue
				}
				want = append(want, at("Note", w.Source.File, 0, w.Source.Line, ""))
			}
			return want, objects
		}}
}

func explainCI(name, dir string, args ...string) reportCase {
	return reportCase{name: name, dir: dir, args: append([]string{"explain-structural"}, args...),
		json: func(args []string) []string { return append(slices.Clip(args), "-o", "json") },
		expect: func(t *testing.T, _ []string, doc []byte) ([]string, int) {
			var r struct {
				CRDs []struct {
					Source                          jsonSource
					Violations, Invalid, Mutability []jsonError
					Warnings                        []struct{}
					LowerError                      string
					ServerCondition                 *struct{}
				}
			}
			decode(t, doc, &r)
			var want []string
			for _, c := range r.CRDs {
				src := c.Source
				for _, v := range slices.Concat(c.Violations, c.Invalid) {
					want = append(want, at("NonStructural", src.File, 0, src.Line, v.Field))
				}
				for _, v := range c.Mutability {
					want = append(want, at("Update", src.File, 0, src.Line, v.Field))
				}
				notes := len(c.Warnings)
				if c.LowerError != "" {
					notes++
				}
				if c.ServerCondition != nil {
					notes++
				}
				for range notes {
					want = append(want, at("Note", src.File, 0, src.Line, ""))
				}
			}
			return want, len(r.CRDs)
		}}
}

func checkUpdateCI(name, dir string, args ...string) reportCase {
	return reportCase{name: name, dir: dir, args: append([]string{"check-update", "--offline"}, args...),
		json: func(args []string) []string { return append(slices.Clip(args), "-o", "json") },
		expect: func(t *testing.T, _ []string, doc []byte) ([]string, int) {
			var r struct {
				Items []struct {
					Source     jsonSource
					Status     string
					Violations []jsonChange
					Warnings   []jsonChange
					Unserved   *struct{ Line int }
				}
				Upgrades []jsonUpgrade
			}
			decode(t, doc, &r)
			var want []string
			objects := len(r.Items)
			for _, it := range r.Items {
				src := it.Source
				if it.Status == "MissingCRD" {
					want = append(want, at("MissingCRD", src.File, 0, src.Line, ""))
				}
				if it.Unserved != nil {
					want = append(want, at("Breaking", src.File, it.Unserved.Line, src.Line, "apiVersion"))
				}
				for _, w := range it.Warnings {
					want = append(want, at("Prune", src.File, w.Line, src.Line, w.Path))
				}
				for _, v := range it.Violations {
					want = append(want, at("Update", src.File, v.Line, src.Line, v.Path))
				}
			}
			for _, u := range r.Upgrades {
				want = append(want, u.expect()...)
				objects += 1 + u.ObjectsChecked
			}
			return want, objects
		}}
}

// jsonUpgrade is an element of check-update's "upgrades".
type jsonUpgrade struct {
	Source         jsonSource
	ObjectsChecked int
	Changes        []struct{ Severity, Path string }
	Unexplained    []struct{ Path string }
	Objects        []struct {
		Source               jsonSource
		Changes, NextWrite   []jsonChange
		Errors, UpdateErrors []jsonError
		Unserved             []struct{ Line int }
	}
}

// expect are the findings of an upgrade: its changes and what no change
// explains at the CRD, each existing object's at its own place.
func (u jsonUpgrade) expect() []string {
	var want []string
	for _, c := range u.Changes {
		rule := map[string]string{"Breaking": "Breaking", "DataLoss": "DataLoss", "Invalid": "Invalid"}[c.Severity]
		if rule == "" {
			rule = "CRDChange"
		}
		want = append(want, at(rule, u.Source.File, 0, u.Source.Line, c.Path))
	}
	for _, x := range u.Unexplained {
		want = append(want, at("Note", u.Source.File, 0, u.Source.Line, x.Path))
	}
	for _, o := range u.Objects {
		src := o.Source
		if src.File == "" {
			src = u.Source
		}
		for _, x := range o.Unserved {
			want = append(want, at("Breaking", src.File, x.Line, src.Line, "apiVersion"))
		}
		for _, c := range o.Changes {
			rule := "CRDChange"
			switch c.Reason {
			case "UnknownField", "UnknownMetadataField", "NullNonNullable":
				rule = "DataLoss"
			}
			want = append(want, at(rule, src.File, c.Line, src.Line, c.Path))
		}
		for _, c := range o.NextWrite {
			want = append(want, at("DataLoss", src.File, c.Line, src.Line, c.Path))
		}
		for _, e := range slices.Concat(o.Errors, o.UpdateErrors) {
			want = append(want, at("Invalid", src.File, e.Line, src.Line, e.Field))
		}
	}
	return want
}

func decode(t *testing.T, doc []byte, v interface{}) {
	t.Helper()
	if err := json.Unmarshal(doc, v); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, doc)
	}
}
