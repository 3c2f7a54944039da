package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdtest"
)

const holesExample = "../../examples/holes/crd.yaml"

// Exit 1 with the holes, 0 on the fixed CRD, 2 for bad input; -o json
// carries every field; -o yaml is a suite kubectl crd test reads, a case per
// step.
func TestHoles(t *testing.T) {
	r := run(t, "", "holes", "-f", holesExample)
	if r.code != ExitFindings || !strings.Contains(r.stdout, "v1 spec.region: LEAKS (x-kubernetes-validations: self == oldSelf)") ||
		!strings.Contains(r.stdout, "v1 spec.id: immutable") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "holes", "-f", "../../examples/holes/fixed.yaml"); r.code != ExitOK || strings.Contains(r.stdout, "LEAKS") {
		t.Errorf("the fixed CRD: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"holes"}, {"holes", "-f", holesExample, "-o", "wide"}, {"holes", "-f", "../../examples/holes/cluster.yaml"}, {"holes", "-f", "nonexistent.yaml"}} {
		if r := run(t, "", args...); r.code != ExitInput {
			t.Errorf("%v: exit %d, want %d\n%s", args, r.code, ExitInput, r.stderr)
		}
	}

	r = run(t, "", "holes", "-f", holesExample, "-o", "json")
	var out struct {
		CRDs []struct {
			CRD    string `json:"crd"`
			Fields []struct {
				Field, Verdict string
				Holes          []struct{ Steps []json.RawMessage }
			} `json:"fields"`
		} `json:"crds"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.CRDs) != 1 || len(out.CRDs[0].Fields) != 5 {
		t.Fatalf("-o json: %v\n%s", err, r.stdout)
	}
	steps := 0
	for _, f := range out.CRDs[0].Fields {
		for _, h := range f.Holes {
			steps += len(h.Steps)
		}
	}

	r = run(t, "", "holes", "-f", holesExample, "-o", "yaml")
	if r.code != ExitFindings {
		t.Fatalf("-o yaml: exit %d\n%s", r.code, r.stderr)
	}
	// The suite names the CRD as given: written beside the working directory.
	suite := filepath.Join(t.TempDir(), "holes.test.yaml")
	text := strings.Replace(r.stdout, "crds: "+holesExample, "crds: "+mustAbs(t, holesExample), 1)
	if err := os.WriteFile(suite, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	suites, err := crdtest.ReadFile(suite)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(suites) != 1 || len(suites[0].Cases) != steps || steps == 0 {
		t.Errorf("%d suites; want one with a case per step (%d)", len(suites), steps)
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
