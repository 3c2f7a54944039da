package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	refusedCRD     = "../../examples/refused/crd.yaml"
	refusedBackups = "../../examples/refused/backups.yaml"
)

// The report of prune on objects the server refuses.
type invalidReport struct {
	Items []struct {
		Object struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"object"`
		Status  string            `json:"status"`
		Changes []json.RawMessage `json:"changes"`
		Errors  []struct {
			Field   string `json:"field"`
			Type    string `json:"type"`
			Value   any    `json:"value"`
			Detail  string `json:"detail"`
			Message string `json:"message"`
			Line    int    `json:"line"`
		} `json:"errors"`
	} `json:"items"`
}

// An object the server's create validation refuses is Invalid: its errors
// in the report and on stderr with their lines, exit 1 without
// --fail-on-prune, and every object still printed, pruned.
func TestPruneInvalid(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.json")
	r := run(t, "", "prune", "--offline", "--crd-file", refusedCRD, "-f", refusedBackups, "--report", report)
	if r.code != ExitFindings {
		t.Errorf("exit %d, want %d; stderr:\n%s", r.code, ExitFindings, r.stderr)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var got invalidReport
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}

	// Per object: its status and the fields refused, with their lines (the
	// server's root error, "<nil>", at the document's first line).
	var summary []string
	var wantStderr strings.Builder
	for _, it := range got.Items {
		s := it.Object.Name + " " + it.Status
		for _, e := range it.Errors {
			s += fmt.Sprintf(" %s:%d", e.Field, e.Line)
			if !strings.HasPrefix(e.Message, e.Field+": "+e.Type) || !strings.HasSuffix(e.Message, e.Detail) {
				t.Errorf("%s: the message does not read field, type, detail: %+v", it.Object.Name, e)
			}
			fmt.Fprintf(&wantStderr, "Error: Backup %s/%s: the server would refuse it: %s (%s:%d)\n", it.Object.Namespace, it.Object.Name, e.Message, refusedBackups, e.Line)
		}
		summary = append(summary, s)
	}
	want := []string{
		"orders-nightly Checked",
		"orders_hourly Invalid <nil>:10 metadata.name:13 spec.schedule:16 spec.storage:17",
		"orders-weekly Invalid spec:24",
		"orders-monthly Invalid <nil>:29 spec:34",
	}
	if d := cmp.Diff(want, summary); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	// The values the server names, and none where its message shows none.
	if e := got.Items[1].Errors[3]; e.Value != "ftp" || e.Type != "Unsupported value" {
		t.Errorf("spec.storage: %+v", e)
	}
	if e := got.Items[2].Errors[0]; e.Value != nil {
		t.Errorf("a CEL rule's error names no value: %+v", e)
	}

	// Each error is a line of stderr, after the object's warnings.
	var errLines strings.Builder
	for _, l := range strings.SplitAfter(r.stderr, "\n") {
		if strings.HasPrefix(l, "Error: ") {
			errLines.WriteString(l)
		}
	}
	if d := cmp.Diff(wantStderr.String(), errLines.String()); d != "" {
		t.Errorf("stderr's Error lines (-want +got):\n%s", d)
	}
	if !strings.Contains(r.stderr, "Warning: Backup default/orders-weekly: pruned unknown field \"spec.retention\" (../../examples/refused/backups.yaml:27)\nError: Backup default/orders-weekly:") {
		t.Errorf("stderr: the warnings of an invalid object come first:\n%s", r.stderr)
	}

	// Every object is printed, pruned.
	in, err := os.ReadFile(refusedBackups)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(deleteLines(string(in), 27), r.stdout); d != "" {
		t.Errorf("stdout (-want +got):\n%s", d)
	}

	// --fail-on-prune changes nothing; -o json prints every object too.
	r = run(t, "", "prune", "--offline", "--crd-file", refusedCRD, "-f", refusedBackups, "--fail-on-prune", "-o", "json")
	var list struct{ Items []any }
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != ExitFindings || len(list.Items) != 4 {
		t.Errorf("--fail-on-prune -o json: exit %d, %v, %d items", r.code, err, len(list.Items))
	}
	// The valid object alone passes.
	r = run(t, strings.SplitN(string(in), "---\n", 2)[0], "prune", "--offline", "--crd-file", refusedCRD, "-f", "-")
	if r.code != ExitOK || r.stderr != "" {
		t.Errorf("the valid object: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// Validation runs on the object as the server decodes it: defaulted even
// without --defaults, in the request's namespace (-n, the context's, else
// "default"), without its status under the status subresource.
func TestPruneValidatesAsTheServerDecodes(t *testing.T) {
	// keepWeekly 8 is fine against keep's default only when keep is set higher.
	obj := "apiVersion: storage.example.com/v1\nkind: Backup\nmetadata: {name: b}\nspec: {schedule: '0 3 * * *', keepWeekly: 7}\n"
	for _, args := range [][]string{
		{"prune", "--offline", "--crd-file", refusedCRD, "-f", "-"},
		{"prune", "--offline", "--crd-file", refusedCRD, "-f", "-", "--defaults"},
		{"prune", "--offline", "--crd-file", refusedCRD, "-f", "-", "-n", "team-a"},
	} {
		if r := run(t, obj, args...); r.code != ExitOK || strings.Contains(r.stderr, "Error:") {
			t.Errorf("%s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	bad := strings.Replace(obj, "keepWeekly: 7", "keepWeekly: 8", 1)
	r := run(t, bad, "prune", "--offline", "--crd-file", refusedCRD, "-f", "-")
	if want := "Error: Backup b: the server would refuse it: spec: Invalid value: keepWeekly cannot exceed keep (-:4)\n"; r.code != ExitFindings || r.stderr != want {
		t.Errorf("keep's default: exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
	// A namespace the server refuses, from -n.
	r = run(t, obj, "prune", "--offline", "--crd-file", refusedCRD, "-f", "-", "-n", "Team_A")
	if r.code != ExitFindings || !strings.Contains(r.stderr, "Error: Backup Team_A/b: the server would refuse it: metadata.namespace: Invalid value: \"Team_A\"") {
		t.Errorf("-n Team_A: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// Under the status subresource, the status is dropped before validation.
	crd, err := os.ReadFile(refusedCRD)
	if err != nil {
		t.Fatal(err)
	}
	statusSchema := string(crd) + "          status:\n            type: object\n            properties:\n              copies: {type: integer}\n"
	subresource := strings.Replace(statusSchema, "    storage: true\n", "    storage: true\n    subresources: {status: {}}\n", 1)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, crd string
		code      int
		stderr    string
	}{
		{"the status subresource", subresource, ExitOK, `"status" is ignored`},
		{"no status subresource", statusSchema, ExitFindings, "Error: Backup b: the server would refuse it: status.copies: Invalid value: \"string\""},
	} {
		crdFile := filepath.Join(dir, "crd.yaml")
		if err := os.WriteFile(crdFile, []byte(tc.crd), 0o644); err != nil {
			t.Fatal(err)
		}
		r = run(t, obj+"status: {copies: many}\n", "prune", "--offline", "--crd-file", crdFile, "-f", "-")
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit %d and %q", tc.name, r.code, r.stderr, tc.code, tc.stderr)
		}
	}
}

// A checked object without changes has "changes": [] in the report, as
// json.md promises ("empty when none"), not null.
func TestPruneReportNoChanges(t *testing.T) {
	r := run(t, "", "prune", "--offline", "--crd-file", "../../examples/immutable/crd.yaml", "-f", "../../examples/immutable/database.yaml", "--report", "-")
	var report struct {
		Items []struct {
			Status  string            `json:"status"`
			Changes []json.RawMessage `json:"changes"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != ExitOK || len(report.Items) != 1 {
		t.Fatalf("exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if it := report.Items[0]; it.Status != "Checked" || it.Changes == nil || len(it.Changes) != 0 {
		t.Errorf("want status Checked, changes []:\n%s", r.stdout)
	}
}
