package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/kepimmutable"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	code := Run(context.Background(), streams, args)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

const (
	exampleCRD = "../../examples/maintenance/crd.yaml"
	exampleJob = "../../examples/maintenance/job.yaml"
)

// deleteLines returns text without the given 1-based lines.
func deleteLines(text string, lines ...int) string {
	drop := map[int]bool{}
	for _, l := range lines {
		drop[l] = true
	}
	var out []string
	for i, l := range strings.SplitAfter(text, "\n") {
		if !drop[i+1] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

func TestPruneExample(t *testing.T) {
	in, err := os.ReadFile(exampleJob)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "prune", "--crd-file", exampleCRD, "-f", exampleJob)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// Lines 8-10: the typo'd metadata field with its comment; line 17: spec.privileged.
	if diff := cmp.Diff(deleteLines(string(in), 8, 9, 10, 17), r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	wantErr := `Warning: MaintenanceNightlyJob ops/backdoor-check: dropped unknown metadata field "metadata.lables" (../../examples/maintenance/job.yaml:9)
Warning: MaintenanceNightlyJob ops/backdoor-check: pruned unknown field "spec.privileged" (../../examples/maintenance/job.yaml:17)
`
	if diff := cmp.Diff(wantErr, r.stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}

	r = run(t, "", "prune", "--crd-file", exampleCRD, "-f", exampleJob, "--fail-on-prune")
	if r.code != 1 {
		t.Errorf("--fail-on-prune: exit %d, want 1", r.code)
	}
}

func TestPruneDefaultsAndReport(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.json")
	r := run(t, "", "prune", "--crd-file", exampleCRD, "-f", exampleJob, "--defaults", "--report", report)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "  command: logrotate /etc/logrotate.conf # daily rotation\n  machines:\n  - az1-worker1\n  schedule: 0 3 * * *\n") {
		t.Errorf("default not added after the last field of spec:\n%s", r.stdout)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []struct {
			Object  map[string]string `json:"object"`
			Source  map[string]any    `json:"source"`
			Changes []struct {
				Path     string `json:"path"`
				Segments []any  `json:"segments"`
				Reason   string `json:"reason"`
				Value    any    `json:"value"`
				NewValue any    `json:"newValue"`
				Line     int    `json:"line"`
			} `json:"changes"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, b)
	}
	if len(got.Items) != 2 {
		t.Fatalf("want 2 items, got %d", len(got.Items))
	}
	first := got.Items[0]
	if diff := cmp.Diff(map[string]string{"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob", "namespace": "ops", "name": "backdoor-check"}, first.Object); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
	if first.Source["file"] != exampleJob || first.Source["line"] != float64(3) {
		t.Errorf("source = %v", first.Source)
	}
	var summary []string
	for _, c := range first.Changes {
		summary = append(summary, strings.Join([]string{c.Path, c.Reason, jsonString(c.Segments), jsonString(c.Value), jsonString(c.NewValue)}, " "))
	}
	want := []string{
		`metadata.lables UnknownMetadataField ["metadata","lables"] {"team":"ops"} null`,
		`spec.privileged UnknownField ["spec","privileged"] true null`,
		`spec.schedule Defaulted ["spec","schedule"] null "0 3 * * *"`,
	}
	if diff := cmp.Diff(want, summary); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

func TestPruneStdinAndJSON(t *testing.T) {
	job, _ := os.ReadFile(exampleJob)
	r := run(t, string(job), "prune", "--crd-file", exampleCRD, "-f", "-", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("got %s", r.stdout)
	}
	spec := list.Items[0]["spec"].(map[string]any)
	if _, ok := spec["privileged"]; ok {
		t.Errorf("privileged not pruned: %v", spec)
	}
	if !strings.Contains(r.stderr, `pruned unknown field "spec.privileged" (-:17)`) {
		t.Errorf("stderr does not name stdin and the line:\n%s", r.stderr)
	}
}

// A CRD among the inputs is printed as the server stores it (as prune of
// it alone prints it), and is the schema of the objects.
func TestPruneCRDsAmongInputsAsStored(t *testing.T) {
	crd, _ := os.ReadFile(exampleCRD)
	job, _ := os.ReadFile(exampleJob)
	stored := run(t, "", "prune", "--offline", "-f", exampleCRD)
	r := run(t, string(crd)+"---\n"+string(job), "prune", "-f", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if stored.stdout == string(crd) || !strings.HasPrefix(r.stdout, stored.stdout+"---\n") {
		t.Errorf("the CRD is not as the server stores it:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, `defaulted "spec.conversion" to {"strategy":"None"}`) {
		t.Errorf("the CRD's defaults are not listed:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, `"spec.privileged"`) {
		t.Errorf("the CRD among the inputs was not used as schema:\n%s", r.stderr)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"malformed YAML", []string{"prune", "-f", "testdata/bad/malformed.yaml"}, 2, "testdata/bad/malformed.yaml:5: invalid YAML: "},
		{"not an object", []string{"prune", "-f", "testdata/bad/list.yaml"}, 2, "testdata/bad/list.yaml:1: expected an object (a Kubernetes resource), got a list"},
		{"CRD without schema", []string{"prune", "--crd-file", "testdata/bad/noschema-crd.yaml", "-f", "testdata/bad/unknown-version.yaml"}, 2, "testdata/bad/noschema-crd.yaml:1: CustomResourceDefinition foos.example.com is invalid: spec.versions[0].schema.openAPIV3Schema: Required value"},
		{"unknown CRD apiVersion", []string{"explain-structural", "-f", "testdata/bad/unknown-apiversion-crd.yaml"}, 2, `testdata/bad/unknown-apiversion-crd.yaml:1: unsupported apiVersion "apiextensions.k8s.io/v2"`},
		{"version the CRD lacks", []string{"prune", "--crd-file", "testdata/foos/crd.yaml", "-f", "testdata/bad/unknown-version.yaml"}, 2, `testdata/bad/unknown-version.yaml:1: CustomResourceDefinition foos.example.com has no version "v9"`},
		{"metadata the server refuses", []string{"prune", "--crd-file", "testdata/foos/crd.yaml", "-f", "testdata/bad/bad-metadata.yaml"}, 2, "testdata/bad/bad-metadata.yaml:1: the server would refuse this object: metadata: "},
		{"missing file", []string{"prune", "-f", "testdata/none.yaml"}, 2, `the path "testdata/none.yaml" does not exist`},
		{"no -f", []string{"prune"}, 2, "no input"},
		{"unknown flag", []string{"prune", "--bogus"}, 2, "unknown flag: --bogus"},
		{"bad output", []string{"prune", "-f", exampleJob, "-o", "xml"}, 2, `unknown output format "xml"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.err) {
				t.Errorf("stderr does not contain %q:\n%s", tc.err, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty on error:\n%s", r.stdout)
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
				t.Errorf("stack trace on stderr:\n%s", r.stderr)
			}
		})
	}
}

// An object of a kind nothing defines passes through unchanged, unchecked:
// by default an error (exit 1), so that a gate fails closed offline too;
// --ignore-missing-crds makes it a warning, as does a --fail-on without
// MissingCRD.
func TestMissingCRDFailsClosed(t *testing.T) {
	const line = "no CustomResourceDefinition for nowhere.example.com/v1, kind Bar: not checked (testdata/bad/missing-crd.yaml:1)\n"
	in, _ := os.ReadFile("testdata/bad/missing-crd.yaml")
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 1, "Error: Bar x: " + line},
		{[]string{"--ignore-missing-crds"}, 0, "Warning: Bar x: " + line},
		{[]string{"--fail-on=Invalid"}, 0, "Warning: Bar x: " + line},
		{[]string{"--fail-on="}, 0, "Warning: Bar x: " + line},
		{[]string{"--fail-on-prune"}, 1, "Error: Bar x: " + line},
		{[]string{"--fail-on-prune", "--ignore-missing-crds"}, 0, "Warning: Bar x: " + line},
	} {
		r := run(t, "", append([]string{"prune", "--offline", "-f", "testdata/bad/missing-crd.yaml"}, tc.args...)...)
		if r.code != tc.code || r.stderr != tc.stderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, r.code, r.stderr, tc.code, tc.stderr)
		}
		if r.stdout != string(in) {
			t.Errorf("%v: not passed through unchanged:\n%s", tc.args, r.stdout)
		}
	}
	if r := run(t, "", "prune", "--offline", "-f", "testdata/bad/missing-crd.yaml", "--fail-on=Prune,Typo"); r.code != 2 || !strings.Contains(r.stderr, `unknown finding "Typo"`) {
		t.Errorf("an unknown --fail-on: exit %d, %s", r.code, r.stderr)
	}
}

// The typo of the issue: an object of operatons.example.com, which the
// CRD given does not define, fails prune and check-update offline.
func TestTypoInGroupFailsTheGate(t *testing.T) {
	job, err := os.ReadFile("../../examples/maintenance/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(typo, bytes.Replace(job, []byte("operations.example.com/v1"), []byte("operatons.example.com/v1"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	crd := "../../examples/maintenance/crd.yaml"
	for _, args := range [][]string{
		{"prune", "--offline", "--crd-file", crd, "-f", typo, "--fail-on-prune"},
		{"check-update", "--offline", "--crd-file", crd, "-f", typo, "--old", typo},
	} {
		r := run(t, "", args...)
		if r.code != 1 || !strings.Contains(r.stderr, "Error: ") || !strings.Contains(r.stderr, "no CustomResourceDefinition for operatons.example.com/v1") {
			t.Errorf("%s: exit %d, stderr:\n%s", args[0], r.code, r.stderr)
		}
		r = run(t, "", append(args, "--ignore-missing-crds")...)
		if r.code != 0 || !strings.Contains(r.stderr, "Warning: ") {
			t.Errorf("%s --ignore-missing-crds: exit %d, stderr:\n%s", args[0], r.code, r.stderr)
		}
	}
}

func TestExplainStructural(t *testing.T) {
	r := run(t, "", "explain-structural", "-f", exampleCRD)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"CustomResourceDefinition maintenancenightlyjobs.operations.example.com (../../examples/maintenance/crd.yaml:3): structural\n",
		"     ├─ machines: array\n     │  └─ [*]: string\n",
		`     ├─ schedule: string default="0 3 * * *"`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}

	r = run(t, "", "explain-structural", "-f", "testdata/nonstructural/crd.yaml", "-o", "json")
	if r.code != 1 {
		t.Fatalf("non-structural: exit %d, want 1: %s", r.code, r.stderr)
	}
	var got struct {
		CRDs []struct {
			Name       string `json:"name"`
			Structural bool   `json:"structural"`
			Violations []struct {
				Field, Type, Detail string
			} `json:"violations"`
			Versions []map[string]any `json:"versions"`
		} `json:"crds"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.CRDs) != 1 || got.CRDs[0].Name != "foos.example.com" || got.CRDs[0].Structural {
		t.Fatalf("got %s", r.stdout)
	}
	v := got.CRDs[0].Violations
	if len(v) != 1 || v[0].Field != "spec.versions[0].schema.openAPIV3Schema.properties[foo].type" || v[0].Type != "Required value" || v[0].Detail != "must not be empty for specified object fields" {
		t.Errorf("violations = %+v", v)
	}
	if len(got.CRDs[0].Versions) != 1 || got.CRDs[0].Versions[0]["name"] != "v1" {
		t.Errorf("versions = %v", got.CRDs[0].Versions)
	}
}

// writeKubeconfig writes a kubeconfig whose one context points at server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "` + server + `"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: team-a}
current-context: ctx
`
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Objects whose kind is in no file need the cluster; without one, or when
// it is unreachable, the command says so and exits 3 with nothing on stdout.
func TestClusterErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	unreachable := writeKubeconfig(t, "https://127.0.0.1:1")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no kubeconfig", []string{"--kubeconfig", empty, "prune", "-f", "testdata/bad/missing-crd.yaml"},
			"error: no cluster configured: the kubeconfig has no cluster (set KUBECONFIG or --kubeconfig); to work without a cluster, pass --offline and give the CRDs with --crd-file\n"},
		{"unreachable", []string{"--kubeconfig", unreachable, "prune", "-f", "testdata/bad/missing-crd.yaml"},
			"error: discovering the API groups: cannot reach the API server at https://127.0.0.1:1 (context \"ctx\"): dial tcp 127.0.0.1:1: connect: connection refused; to work without a cluster, pass --offline and give the CRDs with --crd-file\n"},
		{"unreachable, explain", []string{"--kubeconfig", unreachable, "explain-structural", "--all"},
			"error: listing CustomResourceDefinitions: cannot reach the API server at https://127.0.0.1:1 (context \"ctx\"): dial tcp 127.0.0.1:1: connect: connection refused; to work without a cluster, pass --offline and give the CRDs with --crd-file\n"},
		{"unknown context", []string{"--kubeconfig", unreachable, "--context", "nope", "explain-structural", "foos"},
			"error: kubeconfig: context \"nope\" does not exist\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != ExitInternal || r.stdout != "" || r.stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 3, stderr:\n%s", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}

// A file that covers every object's kind needs no cluster, even when the
// kubeconfig's cluster is unreachable; -n names the namespace of objects
// without one, and an object of another namespace is refused as kubectl does.
func TestFilesNeedNoCluster(t *testing.T) {
	kc := writeKubeconfig(t, "https://127.0.0.1:1")
	obj := "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata: {name: x}\nspec: {command: date, extra: 1}\n"
	r := run(t, obj, "--kubeconfig", kc, "prune", "--crd-file", exampleCRD, "-f", "-")
	if want := "Warning: MaintenanceNightlyJob team-a/x: pruned unknown field \"spec.extra\" (-:4)\n" + unknownVersion; r.code != 0 || r.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
	r = run(t, obj, "--kubeconfig", kc, "-n", "prod", "prune", "--crd-file", exampleCRD, "-f", "-")
	if want := "Warning: MaintenanceNightlyJob prod/x: pruned unknown field \"spec.extra\" (-:4)\n" + unknownVersion; r.code != 0 || r.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
	in := "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata: {name: x, namespace: dev}\n"
	r = run(t, in, "--kubeconfig", kc, "-n", "prod", "prune", "--crd-file", exampleCRD, "-f", "-")
	want := "error: -:1: the namespace from the provided object \"dev\" does not match the namespace \"prod\". You must pass '--namespace=dev' to perform this operation.\n"
	if r.code != ExitInput || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant:\n%s", r.code, r.stdout, r.stderr, want)
	}
}

// What storing changes besides pruning, each with its reason: the namespace
// of a cluster-scoped kind, a field the storage version lacks, status under
// the status subresource.
func TestPruneStoreSteps(t *testing.T) {
	r := run(t, "", "prune", "--offline", "--crd-file", "testdata/store/crd.yaml", "-f", "testdata/store/gadget.yaml")
	want := `Warning: Gadget g: dropped "metadata.namespace": Gadget is cluster-scoped (testdata/store/gadget.yaml:5)
Warning: Gadget g: pruned "spec.legacy" when stored: not in the schema of the storage version v1 (testdata/store/gadget.yaml:8)
Warning: Gadget g: "status" is ignored: the CRD has the status subresource, so only writes to /status set it (testdata/store/gadget.yaml:9)
`
	if r.code != 0 || r.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
	if out := "apiVersion: example.com/v1beta1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  size: 3\n"; r.stdout != out {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, out)
	}
}

// Misplaced mutability markers are findings of explain-structural, with paths.
func TestExplainMutabilityPlacement(t *testing.T) {
	r := run(t, "", "explain-structural", "-f", "testdata/mutability/crd.yaml")
	want := `CustomResourceDefinition volumes.storage.example.com (testdata/mutability/crd.yaml:2): structural
  2 misplaced mutability markers (KEP "Immutable fields", emulated by kubectl crd):
  spec.versions[0].schema.openAPIV3Schema.properties[metadata].x-kubernetes-mutability: Forbidden: must not be set in metadata
  spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-key-mutability: Forbidden: only allowed for arrays and for objects with additionalProperties (maps), not for objects with properties or scalars
`
	if r.code != ExitFindings || !strings.HasPrefix(r.stdout, want) {
		t.Errorf("exit %d, stdout:\n%s\nwant prefix:\n%s", r.code, r.stdout, want)
	}
	r = run(t, "", "explain-structural", "-f", "testdata/mutability/crd.yaml", "-o", "json")
	var report struct {
		CRDs []struct {
			Mutability []struct{ Field, Type string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || len(report.CRDs) != 1 || len(report.CRDs[0].Mutability) != 2 ||
		report.CRDs[0].Mutability[0].Field != "spec.versions[0].schema.openAPIV3Schema.properties[metadata].x-kubernetes-mutability" ||
		report.CRDs[0].Mutability[0].Type != "Forbidden" {
		t.Errorf("json: %v\n%s", err, r.stdout)
	}
}

// Every example of KEP "Immutable fields", through the CLI offline: exit 0
// where the KEP allows the update, 1 where it refuses it.
func TestCheckUpdateKEPExamples(t *testing.T) {
	cases, err := kepimmutable.Cases()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, tc := range cases {
		crd := thingCRD(tc.Schema)
		crdFile := filepath.Join(dir, fmt.Sprintf("crd-%d.yaml", i))
		oldFile := filepath.Join(dir, fmt.Sprintf("old-%d.json", i))
		newFile := filepath.Join(dir, fmt.Sprintf("new-%d.json", i))
		for name, content := range map[string]string{crdFile: crd, oldFile: thing(t, tc.Old), newFile: thing(t, tc.New)} {
			if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		r := run(t, "", "check-update", "--offline", "--crd-file", crdFile, "--old", oldFile, "-f", newFile)
		want := ExitFindings
		if tc.Allowed {
			want = ExitOK
		}
		if r.code != want {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.Name, r.code, want, r.stdout, r.stderr)
		}
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

// thing makes a Thing object of the fields of a KEP example's object.
func thing(t *testing.T, fields string) string {
	var obj map[string]interface{}
	if err := json.Unmarshal([]byte(fields), &obj); err != nil {
		t.Fatal(err)
	}
	obj["apiVersion"], obj["kind"] = "example.com/v1", "Thing"
	obj["metadata"] = map[string]interface{}{"name": "t", "namespace": "default"}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// check-update names the CEL rule, its message, the old and new values and
// the line of each refusal; -o json carries the same.
func TestCheckUpdateReport(t *testing.T) {
	args := []string{"check-update", "--offline", "--crd-file", "../../test/e2e/testdata/cel/crd.yaml", "--old", "testdata/update/old.yaml", "-f", "testdata/update/new.yaml"}
	r := run(t, "", args...)
	want := `Bucket default/b: refused: spec: x-kubernetes-validations: has(self.storageClass) || !has(oldSelf.storageClass): storageClass cannot be removed ({"region":"eu","rules":[{"action":"allow","name":"a"}],"storageClass":"hot"} -> {"region":"us","rules":[{"action":"deny","name":"a"}]}) (testdata/update/new.yaml:4)
Bucket default/b: refused: spec.region: x-kubernetes-validations: self == oldSelf: region is immutable ("eu" -> "us") (testdata/update/new.yaml:5)
Bucket default/b: refused: spec.rules[0].action: x-kubernetes-validations: self == oldSelf: the action of a rule is immutable ("allow" -> "deny") (testdata/update/new.yaml:8)
`
	if r.code != ExitFindings || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = run(t, "", append(args, "-o", "json")...)
	var report struct {
		Items []struct {
			Object     struct{ Kind, Namespace, Name string }
			Status     string
			Violations []struct {
				Path, Rule, Message string
				Old, New            interface{}
				Line                int
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != ExitFindings || len(report.Items) != 1 {
		t.Fatalf("exit %d, %v:\n%s", r.code, err, r.stdout)
	}
	it := report.Items[0]
	if it.Status != "Checked" || it.Object.Name != "b" || len(it.Violations) != 3 {
		t.Fatalf("%+v", it)
	}
	if v := it.Violations[1]; v.Path != "spec.region" || v.Rule != "x-kubernetes-validations: self == oldSelf" || v.Message != "region is immutable" || v.Old != "eu" || v.New != "us" || v.Line != 5 {
		t.Errorf("%+v", v)
	}
}

// An object without an old version is a create: nothing to refuse, but what
// the server drops is still reported. The CRD's two misplaced markers are
// errors by default (Update), as in the function and in prune.
func TestCheckUpdateCreate(t *testing.T) {
	in := "apiVersion: storage.example.com/v1\nkind: Volume\nmetadata:\n  name: new\n  namespace: prod\nspec:\n  size: 1Gi\n  extra: 1\n"
	r := run(t, in, "check-update", "--offline", "--crd-file", "testdata/mutability/crd.yaml", "--old", "testdata/update/old.yaml", "-f", "-")
	const marker = "Error: CustomResourceDefinition volumes.storage.example.com: spec.versions[0].schema.openAPIV3Schema.properties[metadata].x-kubernetes-mutability: CustomResourceDefinition volumes.storage.example.com: misplaced mutability marker, not enforced: Forbidden: must not be set in metadata (testdata/mutability/crd.yaml:2)\n"
	if r.code != ExitFindings || r.stdout != "Volume prod/new: no old object: a create, not an update (-:1)\n" ||
		!strings.HasPrefix(r.stderr, marker) || strings.Count(r.stderr, "misplaced mutability marker") != 2 ||
		!strings.HasSuffix(r.stderr, "Warning: Volume prod/new: pruned unknown field \"spec.extra\" (-:8)\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Without Update among what fails the run, a create passes.
	r = run(t, in, "check-update", "--offline", "--fail-on", "Invalid", "--crd-file", "testdata/mutability/crd.yaml", "--old", "testdata/update/old.yaml", "-f", "-")
	if r.code != 0 || strings.Contains(r.stderr, "Error:") {
		t.Errorf("--fail-on Invalid: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Objects without a namespace are checked in the namespace kubectl apply
// would give them, offline too: the server's "namespace required" is not a
// refusal of the update.
func TestCheckUpdateWithoutNamespace(t *testing.T) {
	dir := t.TempDir()
	old := "apiVersion: cel.example.com/v1\nkind: Bucket\nmetadata: {name: b}\nspec: {region: eu}\n"
	oldFile := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(oldFile, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	crd := "../../test/e2e/testdata/cel/crd.yaml"
	r := run(t, old, "check-update", "--offline", "--crd-file", crd, "--old", oldFile, "-f", "-")
	if r.code != 0 || r.stdout != "Bucket b: update allowed (-:1)\n" {
		t.Errorf("unchanged: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, strings.Replace(old, "eu", "us", 1), "check-update", "--offline", "--crd-file", crd, "--old", oldFile, "-f", "-")
	if r.code != ExitFindings || !strings.Contains(r.stdout, "spec.region: x-kubernetes-validations: self == oldSelf: region is immutable") || strings.Contains(r.stdout, "metadata.namespace") {
		t.Errorf("changed: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// check-update's --fail-on takes the same names: with Prune, what the
// server would drop of an allowed update fails the run, printed as errors.
func TestCheckUpdateFailOnPrune(t *testing.T) {
	crd, job := "../../examples/maintenance/crd.yaml", "../../examples/maintenance/job.yaml"
	args := []string{"check-update", "--offline", "--crd-file", crd, "-f", job, "--old", job}
	r := run(t, "", args...)
	if r.code != 0 || !strings.Contains(r.stderr, `Warning: MaintenanceNightlyJob ops/backdoor-check: pruned unknown field "spec.privileged"`) {
		t.Errorf("default: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = run(t, "", append(args, "--fail-on=Update,Prune")...)
	if r.code != 1 || !strings.Contains(r.stderr, `Error: MaintenanceNightlyJob ops/backdoor-check: pruned unknown field "spec.privileged"`) {
		t.Errorf("--fail-on=Update,Prune: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// The CRDs of --old are decoded only when a CRD of -f replaces them: one
// the server cannot decode fails the run then, and only then.
func TestOldCRDsDecodedWhenUsed(t *testing.T) {
	crd, job := "../../examples/maintenance/crd.yaml", "../../examples/maintenance/job.yaml"
	bad := filepath.Join(t.TempDir(), "old.yaml")
	write := func(name string) {
		t.Helper()
		text := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: " + name + "}\nspec: 5\n"
		if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gizmos.example.com")
	r := run(t, "", "check-update", "--offline", "--old", bad, "--old", job, "-f", crd, "-f", job)
	if r.code != 0 {
		t.Errorf("an old CRD of no upgrade: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	write("maintenancenightlyjobs.operations.example.com")
	r = run(t, "", "check-update", "--offline", "--old", bad, "--old", job, "-f", crd, "-f", job)
	if r.code != 2 || !strings.Contains(r.stderr, "error: "+bad+":1: ") {
		t.Errorf("the old version of the CRD of -f: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
