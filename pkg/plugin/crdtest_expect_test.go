package plugin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const expectSuite = "../../examples/expect/route.test.yaml"

// writeRouteSuite writes the suite of examples/expect with edit applied,
// its CRD by an absolute path.
func writeRouteSuite(t *testing.T, edit func(string) string) string {
	t.Helper()
	crd, err := filepath.Abs("../../examples/expect/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(mustRead(t, expectSuite), "crds: crd.yaml", "crds: "+crd, 1)
	file := filepath.Join(t.TempDir(), "route.test.yaml")
	if err := os.WriteFile(file, []byte(edit(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// --run selects exactly the cases whose name the regular expression
// matches (unanchored, as go test -run), across files; the others are
// neither run nor reported, and counted; a pattern that selects none
// passes as go test does, with a warning on stderr; one that does not
// compile is a usage error.
func TestTestRun(t *testing.T) {
	for _, tc := range []struct {
		run         string
		cases       []string
		notSelected int
	}{
		{"immutable", []string{"the zone is immutable"}, 14},
		{"^a volume", []string{"a volume is created", "a volume never shrinks", "a volume of the first release keeps its data", "a volume without a zone can no longer be created"}, 11},
		{"HTTPS|protocol$", []string{"an unsupported protocol", "an HTTPS route needs a certificate"}, 13},
		{"zone is immutable|route is created", []string{"the zone is immutable", "a route is created"}, 13},
	} {
		r := run(t, "", "test", "--run", tc.run, "-o", "json", exampleSuite, expectSuite)
		var doc struct {
			Cases                                   []struct{ Name string }
			Passed, Failed, Unexpected, NotSelected int
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || r.stderr != "" {
			t.Fatalf("--run %q: exit %d, %v:\n%s", tc.run, r.code, err, r.stderr)
		}
		var got []string
		for _, c := range doc.Cases {
			got = append(got, c.Name)
		}
		if diff := cmp.Diff(tc.cases, got); diff != "" {
			t.Errorf("--run %q: cases (-want +got):\n%s", tc.run, diff)
		}
		if doc.NotSelected != tc.notSelected || doc.Passed != len(tc.cases) {
			t.Errorf("--run %q: %d passed, %d not selected; want %d, %d", tc.run, doc.Passed, doc.NotSelected, len(tc.cases), tc.notSelected)
		}
		text := run(t, "", "test", "--run", tc.run, exampleSuite, expectSuite)
		if n := strings.Count(text.stdout, "PASS "); n != len(tc.cases) || !strings.Contains(text.stdout, ", "+itoa(tc.notSelected)+" not selected by --run\n") {
			t.Errorf("--run %q: %d cases printed:\n%s", tc.run, n, text.stdout)
		}
	}

	r := run(t, "", "test", "--run", "no such case", exampleSuite)
	if r.code != 0 || r.stderr != "warning: --run \"no such case\" selects none of the 11 cases: no tests to run\n" ||
		r.stdout != "0 passed, 0 failed, 0 without expectation, 11 not selected by --run\n" {
		t.Errorf("--run selecting none: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "test", "--run", "a (volume", exampleSuite)
	if r.code != ExitInput || !strings.Contains(r.stderr, "--run: error parsing regexp: missing closing )") || r.stdout != "" {
		t.Errorf("--run of a bad regexp: exit %d, want %d\nstdout %q\nstderr %q", r.code, ExitInput, r.stdout, r.stderr)
	}
	// Without --run, the summary is as it was.
	if r := run(t, "", "test", exampleSuite); r.code != 0 || !strings.HasSuffix(r.stdout, "\n11 passed, 0 failed, 0 without expectation\n") {
		t.Errorf("without --run: exit %d:\n%s", r.code, r.stdout)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// A case expecting a part of the server's text that is not there fails,
// showing the part expected and the server's text; the text output shows
// the server's text of each error under a failing case, and -o json has
// it for each error observed, with the case's expectation beside it.
func TestTestMessageContains(t *testing.T) {
	if r := run(t, "", "test", expectSuite); r.code != 0 {
		t.Fatalf("%s: exit %d:\n%s%s", expectSuite, r.code, r.stdout, r.stderr)
	}
	wrong := writeRouteSuite(t, func(s string) string {
		return strings.Replace(s, `- {field: spec, messageContains: 'an HTTPS route needs a certificate'}`,
			`- {field: spec, messageContains: 'an HTTPS route needs a key'}`, 1)
	})
	r := run(t, "", "test", wrong)
	want := `FAIL ` + wrong + `:39 an HTTPS route needs a certificate (refused)
    expected error (line 49) {field: "spec", messageContains: "an HTTPS route needs a key"}, not observed: "an HTTPS route needs a key" is not in the server's error "spec: Invalid value: an HTTPS route needs a certificate"
    the server: spec: Invalid value: an HTTPS route needs a certificate
`
	if r.code != ExitFindings || !strings.Contains(r.stdout, want) {
		t.Errorf("a wrong part: exit %d, want %d and\n%s\ngot:\n%s", r.code, ExitFindings, want, r.stdout)
	}

	r = run(t, "", "test", "-o", "json", "--run", "protocol", expectSuite)
	var doc struct {
		Cases []struct {
			Name   string
			Source struct {
				File string
				Line int
			}
			Expect   json.RawMessage
			Observed struct {
				Errors []struct{ Field, Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Cases) != 1 {
		t.Fatalf("-o json: %v, %d cases:\n%s", err, len(doc.Cases), r.stdout)
	}
	c := doc.Cases[0]
	if c.Name != "an unsupported protocol" || c.Source.File != expectSuite || c.Source.Line != 12 {
		t.Errorf("case %q at %s:%d", c.Name, c.Source.File, c.Source.Line)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, c.Expect); err != nil {
		t.Fatal(err)
	}
	if got := compact.String(); got != `{"result":"refused","errors":[{"messageContains":"Unsupported value: \"BAZINGA\"","line":21}],"exactErrors":false}` {
		t.Errorf("expect echoed as %s", got)
	}
	texts := map[string]string{}
	for _, e := range c.Observed.Errors {
		texts[e.Field] = e.Text
	}
	if texts["spec.protocol"] != `spec.protocol: Unsupported value: "BAZINGA": supported values: "HTTP", "HTTPS"` || len(texts) != 4 {
		t.Errorf("observed texts: %q", texts)
	}
}
