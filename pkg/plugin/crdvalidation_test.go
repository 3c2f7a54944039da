package plugin

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

const invalidCRD = "testdata/bad/two-storage-crd.yaml"

// refusal is the engine's error for the CRD of file, the one document of
// it that is a CRD: what the commands must print after its file and line.
func refusal(t *testing.T, file string) (where string, msg string) {
	t.Helper()
	d := mustDoc(t, file)
	_, _, err := schema.FromObject(d.Object, strategy.Validators{})
	if err == nil {
		t.Fatalf("%s: the engine accepts the CRD", file)
	}
	return d.Source.String(), err.Error()
}

// A CRD of the files that the API server refuses is an input error of
// prune and check-update (exit 2, its file and line, the server's words);
// explain-structural reports it as a finding (exit 1).
func TestRefusedCRD(t *testing.T) {
	where, msg := refusal(t, invalidCRD)
	if where != invalidCRD+":3" {
		t.Fatalf("the CRD is at %s, want line 3 (after the comment and ---)", where)
	}
	for _, want := range []string{"CustomResourceDefinition foos.example.com is invalid: ", "spec.versions: Invalid value: ", "must have exactly one version marked as storage version"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("engine error %q lacks %q", msg, want)
		}
	}
	obj := "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: x, namespace: default}\nfoo: bar\n"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"prune --crd-file", obj, []string{"prune", "--offline", "--crd-file", invalidCRD, "-f", "-"}},
		{"prune, the CRD among the inputs", obj, []string{"prune", "--offline", "-f", invalidCRD, "-f", "-"}},
		{"check-update --crd-file", obj, []string{"check-update", "--offline", "--crd-file", invalidCRD, "--old", "testdata/bad/unknown-version.yaml", "-f", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.stdin, tc.args...)
			if want := "error: " + where + ": " + msg + "\n"; r.code != ExitInput || r.stderr != want || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stdout, r.stderr, ExitInput, want)
			}
		})
	}

	r := run(t, "", "explain-structural", "-f", invalidCRD)
	if r.code != ExitFindings {
		t.Errorf("explain-structural: exit %d, want %d: %s", r.code, ExitFindings, r.stderr)
	}
	c, _, _ := schema.DecodeObject(mustDoc(t, invalidCRD).Object, strategy.Validators{})
	head := "CustomResourceDefinition foos.example.com (" + where + "): structural, but the API server refuses it (2 errors)\n" +
		"  refused by the API server's validation of CustomResourceDefinitions:\n"
	for _, e := range c.Invalid() {
		head += "  " + e.Error() + "\n"
	}
	if !strings.HasPrefix(r.stdout, head) {
		t.Errorf("explain-structural:\n%s\nwant it to start with:\n%s", r.stdout, head)
	}

	r = run(t, "", "explain-structural", "-f", invalidCRD, "-o", "json")
	var got structuralReport
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if r.code != ExitFindings || len(got.CRDs) != 1 || !got.CRDs[0].Structural || len(got.CRDs[0].Invalid) != len(c.Invalid()) {
		t.Fatalf("explain-structural -o json: exit %d\n%s", r.code, r.stdout)
	}
	for i, e := range c.Invalid() {
		v := got.CRDs[0].Invalid[i]
		if v.Field != e.Field || v.Type != e.Type.String() || v.Detail != e.Detail || v.Message != e.Error() {
			t.Errorf("invalid[%d] = %+v, want %q", i, v, e.Error())
		}
	}

	// No versions at all: reported (it was "has no version \"\"", exit 2).
	noVersions := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: foos.example.com}\nspec:\n  group: example.com\n  names: {kind: Foo, plural: foos}\n  scope: Namespaced\n  versions: []\n"
	r = run(t, noVersions, "explain-structural", "-f", "-")
	if r.code != ExitFindings || r.stderr != "" || !strings.Contains(r.stdout, "the API server refuses it") || !strings.Contains(r.stdout, "\n  spec.versions: ") {
		t.Errorf("no versions: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A CRD the server accepts has no "invalid" in the JSON report.
	r = run(t, "", "explain-structural", "-f", "testdata/foos/crd.yaml", "-o", "json")
	if r.code != ExitOK || strings.Contains(r.stdout, `"invalid"`) {
		t.Errorf("valid CRD: exit %d\n%s", r.code, r.stdout)
	}
}

func mustDoc(t *testing.T, file string) *document.Document {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	docs, err := document.Read(f, file)
	if err != nil || len(docs) != 1 {
		t.Fatalf("%s: %v", file, err)
	}
	return docs[0]
}
