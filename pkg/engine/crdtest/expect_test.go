package crdtest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// routeSuite writes a suite of the Route of examples/expect with the
// cases given (YAML under "cases:"), and returns its results.
func routeSuite(t *testing.T, cases string) []CaseResult {
	t.Helper()
	crd, _ := filepath.Abs("../../../examples/expect/crd.yaml")
	name := filepath.Join(t.TempDir(), "route.test.yaml")
	if err := os.WriteFile(name, []byte("crds: "+crd+"\ncases:\n"+cases), 0o644); err != nil {
		t.Fatal(err)
	}
	var out []CaseResult
	for _, s := range runFile(t, name, false) {
		out = append(out, s.Cases...)
	}
	return out
}

// badRoute is a case whose object the server refuses with four errors
// (the protocol, the host, the port, and the rules not checked), and
// expect its expectation.
func badRoute(expect string) string {
	return `- name: bad
  object:
    apiVersion: net.example.com/v1
    kind: Route
    metadata: {name: web}
    spec: {protocol: BAZINGA, host: "http://*bar", port: 0}
  expect:
` + expect
}

// TestErrorText: each observed error carries the server's full text, as
// field.Error's Error words it (the e2e test holds it to a real server's).
func TestErrorText(t *testing.T) {
	res := routeSuite(t, badRoute("    result: refused\n"))
	var got []string
	for _, e := range res[0].Observed.Errors {
		got = append(got, e.Text)
	}
	want := []string{
		`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		`spec.host: Invalid value: "http://*bar": spec.host in body should match '^[a-z0-9.-]+$'`,
		`spec.port: Invalid value: 0: spec.port in body should be greater than or equal to 1`,
		`spec.protocol: Unsupported value: "BAZINGA": supported values: "HTTP", "HTTPS"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
}

// TestMessageContains: a part of the server's text matches; a wrong one
// fails, showing both the part expected and the server's text; errors
// are a subset when messageContains is used, unless exactErrors; and a
// suite without the new keys still matches them one to one.
func TestMessageContains(t *testing.T) {
	for _, tc := range []struct {
		name, expect string
		want         []string // mismatches
	}{
		{"a part of the server's text, the others not said",
			"    result: refused\n    errors:\n    - messageContains: 'Unsupported value: \"BAZINGA\"'\n", nil},
		{"the value the server shows",
			"    result: refused\n    errors:\n    - {field: spec.host, messageContains: 'Invalid value: \"http://*bar\"'}\n", nil},
		{"a wrong part",
			"    result: refused\n    errors:\n    - {field: spec.protocol, messageContains: 'Unsupported value: \"bazinga\"'}\n",
			[]string{`expected error (line 12) {field: "spec.protocol", messageContains: "Unsupported value: \"bazinga\""}, not observed: "Unsupported value: \"bazinga\"" is not in the server's error "spec.protocol: Unsupported value: \"BAZINGA\": supported values: \"HTTP\", \"HTTPS\""`}},
		{"exact, one said of four",
			"    result: refused\n    exactErrors: true\n    errors:\n    - messageContains: 'Unsupported value: \"BAZINGA\"'\n",
			[]string{
				`observed error not expected: {field: "<nil>", type: "Invalid value", message: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"}`,
				`observed error not expected: {field: "spec.host", type: "Invalid value", message: "spec.host in body should match '^[a-z0-9.-]+$'"}`,
				`observed error not expected: {field: "spec.port", type: "Invalid value", message: "spec.port in body should be greater than or equal to 1"}`,
			}},
		{"without messageContains, one to one as before",
			"    result: refused\n    errors:\n    - {field: spec.protocol, type: Unsupported value}\n    - {field: spec.host}\n    - {field: spec.port}\n",
			[]string{`observed error not expected: {field: "<nil>", type: "Invalid value", message: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"}`}},
		{"a subset, said without messageContains",
			"    result: refused\n    exactErrors: false\n    errors:\n    - {field: spec.protocol, type: Unsupported value}\n", nil},
		{"two expected of one field, one observed",
			"    result: refused\n    errors:\n    - {field: spec.host}\n    - {field: spec.host, messageContains: should match}\n",
			[]string{`expected error (line 13) {field: "spec.host", messageContains: "should match"}, not observed: "should match" is not in the server's error "spec.host: Invalid value: \"http://*bar\": spec.host in body should match '^[a-z0-9.-]+$'"`}},
		{"the first written matches what only the second may: matched as a whole, not in order",
			"    result: refused\n    errors:\n    - {type: Invalid value}\n    - {field: <nil>, messageContains: not checked}\n", nil},
		{"a part of none, with all the server's texts",
			"    result: refused\n    errors:\n    - {field: spec.name, messageContains: x}\n",
			[]string{`expected error (line 12) {field: "spec.name", messageContains: "x"}, not observed: "x" is in none of the server's errors: ` +
				`"<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation", ` +
				`"spec.host: Invalid value: \"http://*bar\": spec.host in body should match '^[a-z0-9.-]+$'", ` +
				`"spec.port: Invalid value: 0: spec.port in body should be greater than or equal to 1", ` +
				`"spec.protocol: Unsupported value: \"BAZINGA\": supported values: \"HTTP\", \"HTTPS\""`}},
	} {
		res := routeSuite(t, badRoute(tc.expect))
		if diff := cmp.Diff(tc.want, res[0].Mismatches); diff != "" {
			t.Errorf("%s: mismatches (-want +got):\n%s", tc.name, diff)
		}
		if res[0].Pass != (len(tc.want) == 0) {
			t.Errorf("%s: pass %v", tc.name, res[0].Pass)
		}
	}
}

// TestBadExpectations: exactErrors is a boolean written with errors;
// messageContains a string.
func TestBadExpectations(t *testing.T) {
	crd, _ := filepath.Abs("../../../examples/expect/crd.yaml")
	head := "crds: " + crd + "\ncases:\n- name: a\n  object: {kind: X}\n  expect:\n    result: refused\n"
	for _, tc := range []struct{ name, text, want string }{
		{"exactErrors alone", head + "    exactErrors: true\n", "bad.test.yaml:7: cases[0].expect.exactErrors: says how errors match"},
		{"exactErrors not a boolean", head + "    exactErrors: yes please\n    errors: []\n", "bad.test.yaml:7: cases[0].expect.exactErrors: expected true"},
		{"messageContains not a string", head + "    errors: [{messageContains: [a]}]\n", "cases[0].expect.errors[0].messageContains: expected a string"},
	} {
		name := filepath.Join(t.TempDir(), "bad.test.yaml")
		if err := os.WriteFile(name, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(name); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestRunSelects: Options.Run runs the cases whose name it matches
// (unanchored), counts the others, and --record writes only what the
// cases run observed.
func TestRunSelects(t *testing.T) {
	crd, _ := filepath.Abs("../../../examples/lower/crd.yaml")
	name := filepath.Join(t.TempDir(), "r.test.yaml")
	text := "crds: " + crd + `
cases:
- name: first to record
  object: {apiVersion: storage.example.com/v1, kind: Volume, metadata: {name: a}, spec: {zone: z}}
- name: second to record
  object: {apiVersion: storage.example.com/v1, kind: Volume, metadata: {name: a}, spec: {zone: z}}
- name: a third
  object: {apiVersion: storage.example.com/v1, kind: Volume, metadata: {name: a}, spec: {zone: z}}
`
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	suites, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}, Run: regexp.MustCompile("d t|thi")})
	res, err := r.Run(context.Background(), suites[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Cases {
		got = append(got, c.Case.Name)
	}
	if diff := cmp.Diff([]string{"second to record", "a third"}, got); diff != "" || res.NotSelected != 1 {
		t.Errorf("cases run (-want +got):\n%s; %d not selected, want 1", diff, res.NotSelected)
	}
	if rep := Summarize([]*SuiteResult{res}); rep.NotSelected != 1 || rep.Unexpected != 2 {
		t.Errorf("report: %d not selected, %d unexpected", rep.NotSelected, rep.Unexpected)
	}
	out, n, err := Record([]byte(text), []*SuiteResult{res})
	if err != nil || n != 2 || strings.Count(string(out), "expect: allowed") != 2 || strings.Contains(string(out), "first to record\n  object: {apiVersion: storage.example.com/v1, kind: Volume, metadata: {name: a}, spec: {zone: z}}\n  expect") {
		t.Errorf("Record: %d, %v:\n%s", n, err, out)
	}
}
