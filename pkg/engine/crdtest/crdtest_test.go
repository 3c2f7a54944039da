package crdtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

func runFile(t *testing.T, name string, lower bool) []*SuiteResult {
	t.Helper()
	suites, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}, Costs: strategy.Validators{}, Lower: lower})
	var out []*SuiteResult
	for _, s := range suites {
		res, err := r.Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	return out
}

// verdict is what both modes must agree on: the result and each error's
// field, type, rule and the server's text (the message of a lowered rule
// is its own, but the text is the server's: with the markers emulated,
// the text of the rule lowered from the marker).
func verdict(o *Observed) []string {
	out := []string{string(o.Result)}
	for _, e := range o.Errors {
		out = append(out, e.Field+"|"+e.Type+"|"+e.Rule+"|"+e.Text)
	}
	return out
}

// TestShippedSuites runs the suites of examples (examples/test, and the
// KEP's examples in examples/kep-immutable): every case passes,
// with the markers emulated and lowered, and both modes observe the same
// verdict on every case.
func TestShippedSuites(t *testing.T) {
	files, err := filepath.Glob("../../../examples/*/*.test.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no suites: %v", err)
	}
	for _, f := range files {
		emulated := runFile(t, f, false)
		lowered := runFile(t, f, true)
		for i, s := range emulated {
			for j, c := range s.Cases {
				if !c.Pass || c.Case.Expect == nil {
					t.Errorf("%s %s: %v", c.Case.Source, c.Case.Name, c.Mismatches)
				}
				l := lowered[i].Cases[j]
				if !l.Pass {
					t.Errorf("%s %s, lowered: %v", c.Case.Source, c.Case.Name, l.Mismatches)
				}
				if diff := cmp.Diff(verdict(c.Observed), verdict(l.Observed)); diff != "" {
					t.Errorf("%s %s: emulated and lowered differ (-emulated +lowered):\n%s", c.Case.Source, c.Case.Name, diff)
				}
			}
		}
	}
}

// TestBadFiles: a bad test file is an input error naming its file, line
// and what was expected.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	crd, _ := filepath.Abs("../../../examples/lower/crd.yaml")
	for _, tc := range []struct{ name, text, want string }{
		{"no cases", "crds: " + crd + "\n", "bad.test.yaml:1: cases is required"},
		{"unknown key", "crds: " + crd + "\ncases:\n- name: a\n  object: {kind: X}\n  expected: allowed\n", "bad.test.yaml:5: cases[0].expected: unknown field"},
		{"bad result", "crds: " + crd + "\ncases:\n- name: a\n  object: {kind: X}\n  expect: maybe\n", "bad.test.yaml:5: cases[0].expect: expected allowed or refused"},
		{"missing crd", "crds: nothere.yaml\ncases: []\n", "bad.test.yaml:1: crds: "},
		{"errors of allowed", "crds: " + crd + "\ncases:\n- name: a\n  object: {kind: X}\n  expect:\n    result: allowed\n    errors: [{field: spec}]\n", "bad.test.yaml:7: cases[0].expect.errors: an allowed object has no errors"},
		{"twice", "crds: " + crd + "\ncases:\n- name: a\n  object: {kind: X}\n- name: a\n  object: {kind: X}\n", "bad.test.yaml:5: cases[1].name: case \"a\" already named at line 3"},
		{"object", "crds: " + crd + "\ncases:\n- name: a\n  object: 3\n", "bad.test.yaml:4: cases[0].object: expected an object"},
	} {
		name := filepath.Join(dir, "bad.test.yaml")
		if err := os.WriteFile(name, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(name)
		var ie *document.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an input error with %q", tc.name, err, tc.want)
		}
	}
}

// TestMissingKind: an object of a kind no CRD of the suite defines is an
// input error naming the case.
func TestMissingKind(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x.test.yaml")
	crd, _ := filepath.Abs("../../../examples/lower/crd.yaml")
	text := "crds: " + crd + "\ncases:\n- name: a\n  object: {apiVersion: x.example.com/v1, kind: X, metadata: {name: a}}\n"
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	suites, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewRunner(Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}}).Run(context.Background(), suites[0])
	if err == nil || !strings.Contains(err.Error(), "x.test.yaml:3: case \"a\"") {
		t.Errorf("got %v", err)
	}
}

// TestCoverage: on a CRD made for it, coverage names exactly the rules and
// markers no case refused by: a rule attributed by its message, by its
// messageExpression, and below its node by its fieldPath are exercised.
func TestCoverage(t *testing.T) {
	r := Summarize(runFile(t, "testdata/coverage/coverage.test.yaml", false))
	if r.Failed > 0 {
		t.Fatalf("cases fail: %+v", r.Cases)
	}
	var got []string
	for _, u := range r.Uncovered {
		got = append(got, fmt.Sprintf("%s %s: %s", u.Source, u.Field, u.Rule.Rule))
	}
	want := []string{
		"testdata/coverage/crd.yaml:23 spec: !has(self.name) || self.name != 'forbidden'",
		"testdata/coverage/crd.yaml:35 spec.size: x-kubernetes-mutability: Immutable",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("uncovered (-want +got):\n%s", diff)
	}
	if len(r.Rules) != 5 {
		t.Errorf("%d rules, want 5", len(r.Rules))
	}
}

// TestRecord: --record writes the observed outcome into the cases without
// an expectation, comments kept, and leaves the others as they are; the
// file it writes passes.
func TestRecord(t *testing.T) {
	dir := t.TempDir()
	crd, _ := filepath.Abs("../../../examples/lower/crd.yaml")
	text := "crds: " + crd + `
cases:
# kept
- name: pruned
  object: {apiVersion: storage.example.com/v1, kind: Volume, metadata: {name: a}, spec: {zone: z, x: 1}}
- name: written
  object: {apiVersion: storage.example.com/v1, kind: Volume, metadata: {name: a}, spec: {}}
  expect: allowed # wrong, and kept
`
	name := filepath.Join(dir, "r.test.yaml")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, n, err := Record([]byte(text), runFile(t, name, false))
	if err != nil || n != 1 {
		t.Fatalf("Record: %d, %v", n, err)
	}
	for _, want := range []string{"# kept\n", "  expect:\n    pruned:\n    - spec.x\n    result: allowed\n", "expect: allowed # wrong, and kept\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("recorded file lacks %q:\n%s", want, out)
		}
	}
	if err := os.WriteFile(name, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if f := failures(runFile(t, name, false)); len(f) != 1 || f[0] != "written" {
		t.Errorf("failing after record: %v, want [written]", f)
	}
}
