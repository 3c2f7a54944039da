package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Standard input can be read once: "-" named twice, by one flag or by two,
// is a usage error naming both, before anything is read or contacted.
func TestStdinNamedTwice(t *testing.T) {
	crd, err := os.ReadFile(exampleCRD)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", "--offline", "--crd-file", "-", "-f", "-"},
			"error: standard input (-) is named by both --crd-file and -f: it can be read only once\n"},
		{[]string{"prune", "--offline", "-f", "-", "--crd-file", "-"},
			"error: standard input (-) is named by both --crd-file and -f: it can be read only once\n"},
		{[]string{"prune", "--offline", "-f", "-", "-f", "-"},
			"error: standard input (-) is named twice by -f: it can be read only once\n"},
		{[]string{"prune", "--offline", "--crd-file", exampleCRD + ",-", "--crd-file", "-", "-f", exampleJob},
			"error: standard input (-) is named twice by --crd-file: it can be read only once\n"},
		{[]string{"check-update", "--offline", "--crd-file", "-", "--old", exampleJob, "-f", "-"},
			"error: standard input (-) is named by both --crd-file and -f: it can be read only once\n"},
		{[]string{"check-update", "--offline", "--crd-file", exampleCRD, "--old", "-", "-f", "-"},
			"error: standard input (-) is named by both -f and --old: it can be read only once\n"},
		{[]string{"check-update", "--offline", "--crd-file", "-", "--old", "-", "-f", exampleJob},
			"error: standard input (-) is named by both --crd-file and --old: it can be read only once\n"},
		{[]string{"explain-structural", "-f", "-", "-f", "-"},
			"error: standard input (-) is named twice by -f: it can be read only once\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, string(crd), tc.args...)
			if r.code != ExitInput || r.stdout != "" || r.stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}

// Standard input named once reads it, whichever flag names it.
func TestStdinOnce(t *testing.T) {
	crd, _ := os.ReadFile(exampleCRD)
	job, _ := os.ReadFile(exampleJob)
	r := run(t, string(crd), "prune", "--offline", "--crd-file", "-", "-f", exampleJob)
	if r.code != 0 || !strings.Contains(r.stderr, `pruned unknown field "spec.privileged"`) {
		t.Errorf("--crd-file -: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = run(t, string(job), "check-update", "--offline", "--crd-file", exampleCRD, "--old", "-", "-f", exampleJob)
	want := "MaintenanceNightlyJob ops/backdoor-check: update allowed (../../examples/maintenance/job.yaml:3)\n" +
		"MaintenanceNightlyJob ops/rotate-logs: update allowed (../../examples/maintenance/job.yaml:20)\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("--old -: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}

// check-update refuses what it cannot check, as prune does: a new or old
// object that does not say what it is, or whose metadata the server cannot
// decode, is an input error with its file and line, never a silent skip or
// a "create".
func TestCheckUpdateBadObjects(t *testing.T) {
	const good = "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: rotate-logs\n  namespace: ops\nspec:\n  command: x\n"
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	goodFile := write("good.yaml", good)
	notSet := ": not a Kubernetes object: apiVersion and kind must be set\n"
	for _, tc := range []struct {
		name     string
		new, old string // the old one is given with --old, the new one on stdin
		want     string // stderr, after "error: " and the old file's path when it starts with ":"
	}{
		{"new without apiVersion", strings.Replace(good, "apiVersion: operations.example.com/v1\n", "", 1), good, "-:1" + notSet},
		{"new with an empty apiVersion", strings.Replace(good, "operations.example.com/v1", `""`, 1), good, "-:1" + notSet},
		{"new with a number for apiVersion", strings.Replace(good, "operations.example.com/v1", "5", 1), good, "-:1" + notSet},
		{"new without kind", strings.Replace(good, "kind: MaintenanceNightlyJob\n", "", 1), good, "-:1" + notSet},
		{"new with an invalid apiVersion", strings.Replace(good, "operations.example.com/v1", "a/b/c", 1), good,
			`-:1: invalid apiVersion "a/b/c": unexpected GroupVersion string: a/b/c` + "\n"},
		{"old without kind", good, strings.Replace(good, "kind: MaintenanceNightlyJob\n", "", 1), ":1" + notSet},
		{"old without apiVersion in the second document", good, good + "---\n" + strings.Replace(good, "apiVersion: operations.example.com/v1\n", "", 1), ":9" + notSet},
		{"old with a number for apiVersion", good, strings.Replace(good, "operations.example.com/v1", "7", 1), ":1" + notSet},
		{"old with an invalid apiVersion", good, strings.Replace(good, "operations.example.com/v1", "a/b/c", 1),
			`:1: invalid apiVersion "a/b/c": unexpected GroupVersion string: a/b/c` + "\n"},
		{"old with a number for a name", good, strings.Replace(good, "rotate-logs", "5", 1),
			":1: the server would refuse this object: metadata: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string\n"},
		{"old with a string for metadata", good, "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata: x\n",
			":1: the server would refuse this object: metadata: json: cannot unmarshal string into Go value of type v1.ObjectMeta\n"},
		{"old without a name", good, strings.Replace(good, "  name: rotate-logs\n", "", 1),
			":1: metadata.name must be set: old objects are matched to the new ones by name\n"},
		{"old not an object", good, "- a\n", ":1: expected an object (a Kubernetes resource), got a list\n"},
		{"old not YAML", good, "apiVersion: v1\nkind: [\n", ":2: invalid YAML: did not find expected node content\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldFile := write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.old)
			want := "error: " + tc.want
			if strings.HasPrefix(tc.want, ":") {
				want = "error: " + oldFile + tc.want
			}
			r := run(t, tc.new, "check-update", "--offline", "--crd-file", exampleCRD, "--old", oldFile, "-f", "-")
			if r.code != ExitInput || r.stdout != "" || r.stderr != want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s", r.code, r.stdout, r.stderr, want)
			}
		})
	}

	// The same file as a valid old object: the new one is checked against it.
	r := run(t, good, "check-update", "--offline", "--crd-file", exampleCRD, "--old", goodFile, "-f", "-")
	if r.code != 0 || r.stdout != "MaintenanceNightlyJob ops/rotate-logs: update allowed (-:1)\n" {
		t.Errorf("valid objects: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// unknownVersion is the warning of a run that answered without the
// version of its cluster, which it could not reach (writeKubeconfig's
// https://127.0.0.1:1).
const unknownVersion = "Warning: the cluster's version is unknown (reading /version: cannot reach the API server at https://127.0.0.1:1 (context \"ctx\"): dial tcp 127.0.0.1:1: connect: connection refused; to work without a cluster, pass --offline and give the CRDs with --crd-file): answered as Kubernetes 1.37; say which with --kube-version\n"

// Against a cluster, what the server would refuse to decode is found before
// the old object is asked for: an input error, not a cluster error. An object
// without a name has no old version to ask for: it is a create.
func TestCheckUpdateBadObjectsLive(t *testing.T) {
	kc := writeKubeconfig(t, "https://127.0.0.1:1") // the CRD comes from the file: only the old objects would need it
	for _, tc := range []struct {
		name, in string
		code     int
		stdout   string
		stderr   string
	}{
		{"a string for metadata", "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata: x\n", ExitInput, "",
			"error: -:1: the server would refuse this object: metadata: json: cannot unmarshal string into Go value of type v1.ObjectMeta\n"},
		{"a number for a name", "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: 5\n", ExitInput, "",
			"error: -:1: the server would refuse this object: metadata: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string\n"},
		{"no name", "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  generateName: job-\n", 0,
			"MaintenanceNightlyJob team-a/<unnamed>: no old object: a create, not an update (-:1)\n", unknownVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.in, "--kubeconfig", kc, "check-update", "--crd-file", exampleCRD, "-f", "-")
			if r.code != tc.code || r.stdout != tc.stdout || r.stderr != tc.stderr {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// An input without objects checks nothing: prune and check-update say so on
// stderr and exit 0, explain-structural -f finds no CRD: exit 2.
func TestNoObjects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content string }{
		{"empty", ""},
		{"separators", "---\n---\n"},
		{"comments", "# nothing\n---\n# here\n"},
		{"nulls", "null\n---\n~\n"},
		{"empty List", "apiVersion: v1\nkind: List\nitems: []\n"},
		{"empty JSON List", `{"apiVersion": "v1", "kind": "List", "items": []}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			warning := "Warning: no objects in the input (" + file + "): nothing was checked\n"
			for _, args := range [][]string{
				{"prune", "--offline", "-f", file},
				{"prune", "--offline", "-f", file, "--report", "-"},
				{"check-update", "--offline", "--old", exampleJob, "-f", file},
				{"check-update", "--offline", "--old", exampleJob, "-f", file, "-o", "json"},
			} {
				r := run(t, "", args...)
				// Whatever else is said (a List's own warning), the warning comes first.
				if r.code != 0 || !strings.HasPrefix(r.stderr, warning) {
					t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 0, stderr starting with:\n%s", strings.Join(args, " "), r.code, r.stderr, warning)
				}
			}
			r := run(t, "", "explain-structural", "-f", file)
			if want := "error: no CustomResourceDefinition found in " + file + "\n"; r.code != ExitInput || r.stderr != want {
				t.Errorf("explain-structural: exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
			}
		})
	}

	// Stdin, and several files that hold no objects between them.
	r := run(t, "---\n", "prune", "--offline", "-f", "-")
	if want := "Warning: no objects in the input (-): nothing was checked\n"; r.code != 0 || r.stdout != "" || r.stderr != want {
		t.Errorf("stdin: exit %d, stdout %q, stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	empty := filepath.Join(dir, "empty.yaml")
	r = run(t, "", "check-update", "--offline", "--old", exampleJob, "-f", empty+","+empty)
	if want := "Warning: no objects in the input (" + empty + ", " + empty + "): nothing was checked\n"; r.code != 0 || r.stdout != "" || r.stderr != want {
		t.Errorf("two files: exit %d, stdout %q, stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
	// One object anywhere among the inputs is something to check.
	r = run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "-f", empty, "-f", exampleJob)
	if r.code != 0 || strings.Contains(r.stderr, "no objects") {
		t.Errorf("an empty file and a file of objects: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// A CRD defined twice, differently, among the inputs is warned about with
// both sources and the one used (the later); the same CRD twice is not.
func TestCRDDefinedTwice(t *testing.T) {
	crd, err := os.ReadFile(exampleCRD)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	same := filepath.Join(dir, "same.yaml")
	changed := filepath.Join(dir, "changed.yaml")
	if err := os.WriteFile(same, crd, 0o644); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(crd), "minLength: 1", "minLength: 2", 1)
	if other == string(crd) {
		t.Fatal("the example CRD changed: no minLength: 1 to change")
	}
	if err := os.WriteFile(changed, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "prune", "--offline", "--crd-file", exampleCRD, "--crd-file", same, "-f", exampleJob)
	if strings.Contains(r.stderr, "defined twice") {
		t.Errorf("the same CRD twice: stderr:\n%s", r.stderr)
	}
	for _, cmd := range [][]string{
		{"prune", "--offline", "--crd-file", exampleCRD, "-f", changed + "," + exampleJob},
		{"check-update", "--offline", "--crd-file", exampleCRD, "--old", exampleJob, "-f", changed + "," + exampleJob},
	} {
		r := run(t, "", cmd...)
		want := "Warning: CustomResourceDefinition maintenancenightlyjobs.operations.example.com: defined twice, differently (" +
			exampleCRD + ":3 and " + changed + ":3): the later one, of " + changed + ":3, is used (" + changed + ":3)\n"
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s: stderr:\n%s\nwant a line:\n%s", cmd[0], r.stderr, want)
		}
	}
}

// The warnings about the inputs are in the prune report too.
func TestReportWarnings(t *testing.T) {
	in := "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: a\n  name: b\n  namespace: ops\nspec:\n  shell: x\n"
	r := run(t, in, "prune", "--offline", "--crd-file", exampleCRD, "-f", "-", "--report", "-")
	var report struct {
		Warnings []struct {
			Object struct{ Kind, Name string }
			Source struct {
				File string
				Line int
			}
			Message string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v:\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if len(report.Warnings) != 1 || report.Warnings[0].Object.Name != "b" || report.Warnings[0].Source.Line != 5 ||
		!strings.HasPrefix(report.Warnings[0].Message, `duplicate key "metadata.name"`) {
		t.Errorf("report warnings: %+v", report.Warnings)
	}
}

// TestCRDsPreparedConcurrentlyInOrder: the CRDs are decoded and validated
// on several goroutines, and still added in the order read: of several the
// server refuses, the first read is the one named, and a CRD defined twice
// is warned about with its sources in order.
func TestCRDsPreparedConcurrentlyInOrder(t *testing.T) {
	b, err := os.ReadFile(exampleCRD)
	if err != nil {
		t.Fatal(err)
	}
	crd := string(b)
	var crds strings.Builder
	for i := 0; i < 12; i++ {
		text := strings.ReplaceAll(crd, "operations.example.com", fmt.Sprintf("ops%d.example.com", i))
		if i == 5 || i == 9 {
			// metadata.name no longer plural.group: refused.
			text = strings.Replace(text, "name: maintenancenightlyjobs.", "name: jobs.", 1)
		}
		fmt.Fprintf(&crds, "---\n%s", text)
	}
	dir := t.TempDir()
	crdFile := filepath.Join(dir, "crds.yaml")
	if err := os.WriteFile(crdFile, []byte(crds.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// An object of every kind: each CRD is used, so each is prepared.
	job, err := os.ReadFile(exampleJob)
	if err != nil {
		t.Fatal(err)
	}
	var jobs strings.Builder
	for i := 11; i >= 0; i-- {
		fmt.Fprintf(&jobs, "---\n%s", strings.ReplaceAll(string(job), "operations.example.com", fmt.Sprintf("ops%d.example.com", i)))
	}
	jobFile := filepath.Join(dir, "jobs.yaml")
	if err := os.WriteFile(jobFile, []byte(jobs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "prune", "--offline", "--crd-file", crdFile, "-f", jobFile)
	if r.code != 2 || !strings.Contains(r.stderr, "CustomResourceDefinition jobs.ops5.example.com is invalid") || strings.Contains(r.stderr, "ops9") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming the first refused CRD (ops5) only", r.code, r.stderr)
	}
	// Only the objects' CRDs are prepared: with the objects of ops9 and
	// after only, the CRD named is ops9's; with none of a refused CRD's
	// kinds, the run passes, with a warning of each, in order.
	warned := func(stderr string) bool {
		const unused = "the API server would refuse this CRD, which no object of this run uses: CustomResourceDefinition jobs.ops%d.example.com is invalid"
		five, nine := strings.Index(stderr, fmt.Sprintf(unused, 5)), strings.Index(stderr, fmt.Sprintf(unused, 9))
		return five >= 0 && nine > five && strings.Count(stderr, "which no object of this run uses") == 2 &&
			strings.Contains(stderr, "("+crdFile+":229)") && strings.Contains(stderr, "("+crdFile+":409)")
	}
	r = run(t, "", "prune", "--offline", "--crd-file", crdFile, "-f", "-")
	if r.code != 0 || !warned(r.stderr) {
		t.Errorf("no objects: exit %d, stderr:\n%s\nwant exit 0 and a warning of ops5's and ops9's CRDs", r.code, r.stderr)
	}
	ops9 := strings.ReplaceAll(string(job), "operations.example.com", "ops9.example.com")
	r = run(t, ops9, "prune", "--offline", "--crd-file", crdFile, "-f", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "CustomResourceDefinition jobs.ops9.example.com is invalid") || strings.Contains(r.stderr, "ops5") {
		t.Errorf("objects of ops9: exit %d, stderr:\n%s\nwant exit 2 naming ops9's CRD only", r.code, r.stderr)
	}
	ops3 := strings.ReplaceAll(string(job), "operations.example.com", "ops3.example.com")
	r = run(t, ops3, "prune", "--offline", "--crd-file", crdFile, "-f", "-")
	if r.code != 0 || !warned(r.stderr) {
		t.Errorf("objects of ops3: exit %d, stderr:\n%s\nwant the refused CRDs of no object warned of only", r.code, r.stderr)
	}

	twice := crd + "---\n" + strings.Replace(crd, "shortNames: [mnj]", "shortNames: [job]", 1) + "---\n" + crd
	if err := os.WriteFile(crdFile, []byte(twice), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, "", "prune", "--offline", "--crd-file", crdFile, "-f", exampleJob)
	first := strings.Index(r.stderr, "("+crdFile+":3 and "+crdFile+":")
	second := strings.LastIndex(r.stderr, "defined twice")
	if r.code != 0 || first < 0 || second <= first {
		t.Errorf("exit %d, stderr:\n%s\nwant two warnings about the CRD defined twice, in order", r.code, r.stderr)
	}
}

// -f and --objects read files, directories and standard input: a URL
// among them is refused (exit 2), its password left out, saying how to
// give a remote object, before anything is read or contacted (kubectl
// reads -f by URL; the path does not exist, said before, was wrong).
func TestRemoteObjectsRefused(t *testing.T) {
	hint := func(flag, cmd string) string {
		return flag + " reads files, directories and standard input (-), not URLs: give a remote object through standard input, e.g. curl -fsSL URL | kubectl crd " + cmd + " " + flag + " -\n"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", "--offline", "--crd-file", exampleCRD, "-f", "https://user:secret@example.com/objects.yaml"},
			"error: -f https://example.com/objects.yaml: " + hint("-f", "prune")},
		{[]string{"check-update", "--offline", "--old", exampleJob, "-f", "https://example.com/new.yaml"},
			"error: -f https://example.com/new.yaml: " + hint("-f", "check-update")},
		{[]string{"check-update", "--offline", "--old", exampleCRD, "--objects", "oci://registry.example/backup:v1", "-f", exampleCRD},
			"error: --objects oci://registry.example/backup:v1: " + hint("--objects", "check-update")},
		{[]string{"explain-structural", "-f", "https://example.com/crd.yaml"},
			"error: -f https://example.com/crd.yaml: " + hint("-f", "explain-structural")},
		{[]string{"lower-mutability", "-f", "HTTPS://example.com/crd.yaml"},
			"error: -f HTTPS://example.com/crd.yaml: " + hint("-f", "lower-mutability")},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != ExitInput || r.stdout != "" || r.stderr != tc.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}
