package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/kepimmutable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

const lowerExample = "../../examples/lower/crd.yaml"

const configMapDoc = `# not a CRD: passes through
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}   # flow style kept
data:
  x-kubernetes-mutability: Immutable
`

// The markers go, the rules come, comments and layout stay, documents that
// are not CRDs pass through byte for byte; lowering the output again
// changes nothing.
func TestLowerMutability(t *testing.T) {
	crd, err := os.ReadFile(lowerExample)
	if err != nil {
		t.Fatal(err)
	}
	stdin := configMapDoc + "---\n" + string(crd)
	r := run(t, stdin, "lower-mutability", "-f", "-")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, configMapDoc+"---\n") {
		t.Errorf("the ConfigMap changed:\n%s", r.stdout)
	}
	for _, want := range []string{
		"# A Volume whose size may grow but never shrink",
		"            required: [zone]\n",
		"                - rule: self >= oldSelf\n                  message: a volume never shrinks\n",
		"          message: 'spec.zone: x-kubernetes-mutability: Immutable: cannot be added, removed or changed'\n          fieldPath: .spec.zone\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	crdOut := strings.SplitN(r.stdout, "---\n", 2)[1]
	for _, marker := range []string{update.MutabilityExtension, update.KeyMutabilityExtension} {
		if strings.Contains(crdOut, "  "+marker+":") {
			t.Errorf("%s left in the CRD:\n%s", marker, crdOut)
		}
	}
	again := run(t, r.stdout, "lower-mutability", "-f", "-")
	if again.code != ExitOK || again.stdout != r.stdout {
		t.Errorf("lowering the output again: exit %d, changed: %v\n%s", again.code, again.stdout != r.stdout, again.stderr)
	}
	// Every line of the input but the markers' is still there.
	for _, line := range strings.Split(string(crd), "\n") {
		if !strings.Contains(line, "mutability") && !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("line lost: %q", line)
		}
	}

	j := run(t, stdin, "lower-mutability", "-f", "-", "-o", "json")
	var list struct {
		Kind  string                   `json:"kind"`
		Items []map[string]interface{} `json:"items"`
	}
	if j.code != ExitOK || json.Unmarshal([]byte(j.stdout), &list) != nil || list.Kind != "List" || len(list.Items) != 2 || strings.Contains(j.stdout, "x-kubernetes-mutability\": \"Immutable\",\n      \"type\"") {
		t.Errorf("-o json: exit %d\n%s\n%s", j.code, j.stdout, j.stderr)
	}
}

// A rule over the server's cost budget is refused with the marker's line,
// the field and the bound to add; nothing is printed.
// A CRD in JSON is printed as JSON, indented as it was: it used to come
// out as YAML in flow style, on one line.
func TestLowerMutabilityJSON(t *testing.T) {
	yamlCRD, err := os.ReadFile(lowerExample)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := sigsyaml.YAMLToJSON(yamlCRD)
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, compact, "", "  "); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "crd.json")
	if err := os.WriteFile(file, append(indented.Bytes(), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	fromYAML := run(t, "", "lower-mutability", "-f", lowerExample)
	r := run(t, "", "lower-mutability", "-f", file)
	if r.code != 0 || !json.Valid([]byte(r.stdout)) || !strings.HasPrefix(r.stdout, "{\n  \"apiVersion\": ") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want, err := sigsyaml.YAMLToJSON([]byte(fromYAML.stdout))
	if err != nil {
		t.Fatal(err)
	}
	var got, wantObj interface{}
	_ = json.Unmarshal([]byte(r.stdout), &got)
	_ = json.Unmarshal(want, &wantObj)
	if diff := cmp.Diff(wantObj, got); diff != "" {
		t.Errorf("lowered from JSON and from YAML differ (-yaml +json):\n%s", diff)
	}
}

func TestLowerMutabilityCost(t *testing.T) {
	crd, err := os.ReadFile(lowerExample)
	if err != nil {
		t.Fatal(err)
	}
	unbounded := strings.Replace(string(crd), "                maxItems: 16\n", "", 1)
	r := run(t, unbounded, "lower-mutability", "-f", "-")
	want := "error: -:42: spec.mountOptions: the rule lowered from x-kubernetes-key-mutability: AddOnly is over the API server's CEL cost budget"
	if r.code != ExitInput || r.stdout != "" || !strings.HasPrefix(r.stderr, want) || !strings.HasSuffix(r.stderr, "bound the sizes it reads with maxItems on spec.mountOptions\n") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s\nwant: %s...", r.code, r.stdout, r.stderr, want)
	}
}

// Misplaced markers and a CRD the server refuses are bad input.
func TestLowerMutabilityBadInput(t *testing.T) {
	crd, err := os.ReadFile(lowerExample)
	if err != nil {
		t.Fatal(err)
	}
	misplaced := strings.Replace(string(crd), "            required: [zone]\n", "            required: [zone]\n            x-kubernetes-key-mutability: Immutable\n", 1)
	r := run(t, misplaced, "lower-mutability", "-f", "-")
	if r.code != ExitInput || r.stdout != "" || !strings.Contains(r.stderr, "error: -:27: misplaced mutability markers, which cannot be lowered: spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-key-mutability: Forbidden") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	invalid := strings.Replace(string(crd), "  scope: Namespaced\n", "  scope: Somewhere\n", 1)
	r = run(t, invalid, "lower-mutability", "-f", "-")
	if r.code != ExitInput || r.stdout != "" || !strings.Contains(r.stderr, "spec.scope: Unsupported value") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "lower-mutability"); r.code != ExitInput {
		t.Errorf("no input: exit %d", r.code)
	}
}

// explain-structural shows the markers of a CRD file in its tree, with the
// rules lower-mutability makes of them, and says when it cannot.
func TestExplainShowsLoweredRules(t *testing.T) {
	r := run(t, "", "explain-structural", "-f", lowerExample)
	for _, want := range []string{
		"     └─ zone: string x-kubernetes-mutability=Immutable\n",
		"     ├─ mountOptions: array x-kubernetes-list-type=set x-kubernetes-key-mutability=AddOnly\n",
		"  ├─ lowered rule: (has(oldSelf.spec) && has(oldSelf.spec.zone)) == (has(self.spec) && has(self.spec.zone)) && (!(has(self.spec) && has(self.spec.zone)) || self.spec.zone == oldSelf.spec.zone)  # spec.zone: x-kubernetes-mutability: Immutable: cannot be added, removed or changed\n",
	} {
		if r.code != ExitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("exit %d, stdout lacks %q:\n%s", r.code, want, r.stdout)
		}
	}
	j := run(t, "", "explain-structural", "-f", lowerExample, "-o", "json")
	var report struct {
		CRDs []struct {
			Versions []struct {
				Lowered []struct{ Field, Marker, Rule string }
			}
		}
	}
	if err := json.Unmarshal([]byte(j.stdout), &report); err != nil || len(report.CRDs) != 1 || len(report.CRDs[0].Versions[0].Lowered) != 3 || report.CRDs[0].Versions[0].Lowered[2].Field != "spec.zone" {
		t.Errorf("-o json: %v\n%s", err, j.stdout)
	}
	crd, err := os.ReadFile(lowerExample)
	if err != nil {
		t.Fatal(err)
	}
	r = run(t, strings.Replace(string(crd), "                maxItems: 16\n", "", 1), "explain-structural", "-f", "-")
	if r.code != ExitOK || !strings.Contains(r.stdout, "  mutability markers that lower-mutability cannot lower: spec.mountOptions: the rule lowered from x-kubernetes-key-mutability: AddOnly is over the API server's CEL cost budget") {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
}

// check-update on the lowered CRD (its CEL rules, no markers) gives the
// verdict of check-update on the CRD with the markers, for every KEP
// example; a CRD whose rules are over the cost budget gets the bounds the
// error asks for.
func TestCheckUpdateLoweredKEPExamples(t *testing.T) {
	cases, err := kepimmutable.Cases()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lowered := map[string]string{} // by schema: the lowered CRD file
	refused := 0
	defer func() {
		if refused == 0 || refused == len(cases) {
			t.Errorf("%d of %d updates refused: the cases do not tell refusals apart", refused, len(cases))
		}
		t.Logf("%d schemas lowered, %d of %d updates refused", len(lowered), refused, len(cases))
	}()
	for i, tc := range cases {
		crdFile, ok := lowered[tc.Schema]
		if !ok {
			crdFile = filepath.Join(dir, fmt.Sprintf("crd-%d.yaml", i))
			schema := tc.Schema
			for attempt := 0; ; attempt++ {
				if err := os.WriteFile(crdFile, []byte(thingCRD(schema)), 0o600); err != nil {
					t.Fatal(err)
				}
				r := run(t, "", "lower-mutability", "-f", crdFile)
				if r.code == ExitInput && attempt == 0 && strings.Contains(r.stderr, "bound the sizes it reads with") {
					schema = bounded(schema)
					continue
				}
				if r.code != ExitOK {
					t.Fatalf("%s: lower-mutability: exit %d\n%s", tc.Name, r.code, r.stderr)
				}
				markedFile := crdFile + ".marked"
				if err := os.Rename(crdFile, markedFile); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(crdFile, []byte(r.stdout), 0o600); err != nil {
					t.Fatal(err)
				}
				break
			}
			lowered[tc.Schema] = crdFile
		}
		oldFile := filepath.Join(dir, fmt.Sprintf("old-%d.json", i))
		newFile := filepath.Join(dir, fmt.Sprintf("new-%d.json", i))
		for name, content := range map[string]string{oldFile: thing(t, tc.Old), newFile: thing(t, tc.New)} {
			if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		marked := run(t, "", "check-update", "--offline", "--crd-file", crdFile+".marked", "--old", oldFile, "-f", newFile)
		cel := run(t, "", "check-update", "--offline", "--crd-file", crdFile, "--old", oldFile, "-f", newFile)
		if cel.code == ExitFindings {
			refused++
		}
		if marked.code != cel.code || marked.code > ExitFindings {
			t.Errorf("%s: with the markers exit %d, with the lowered rules exit %d\n%s\n%s", tc.Name, marked.code, cel.code, marked.stdout+marked.stderr, cel.stdout+cel.stderr)
		}
	}
}

func thingCRD(schema string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
` + indent(schema, "        ")
}

// bounded gives every list, map and string of a KEP example's schema a
// bound, as the cost error asks.
func bounded(schema string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(schema, "\n"), "\n") {
		out = append(out, line)
		trimmed := strings.TrimSpace(line)
		pad := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " ")))
		switch {
		case trimmed == "type: array":
			out = append(out, pad+"maxItems: 8")
		case trimmed == "type: object" && strings.Contains(schema, "additionalProperties"):
			out = append(out, pad+"maxProperties: 8")
		}
	}
	s := strings.Join(out, "\n") + "\n"
	s = strings.ReplaceAll(s, "{type: string}", "{type: string, maxLength: 16}")
	s = strings.ReplaceAll(s, "{type: string, x-kubernetes-mutability", "{type: string, maxLength: 16, x-kubernetes-mutability")
	return s
}
