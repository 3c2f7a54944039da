package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check-update reads Lists as kubectl does, new and old: each item is
// matched with its old version and checked, with its own line.
func TestCheckUpdateLists(t *testing.T) {
	dir := t.TempDir()
	item := func(name, shell string) string {
		return "- apiVersion: operations.example.com/v1\n  kind: MaintenanceNightlyJob\n  metadata: {name: " + name + ", namespace: ops}\n  spec: {shell: " + shell + "}\n"
	}
	old := "apiVersion: v1\nkind: List\nitems:\n" + item("a", "x") + item("b", "y")
	// The new List has the items the other way round, and no apiVersion and kind in them.
	newList := "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJobList\nitems:\n" +
		"- metadata: {name: b, namespace: ops}\n  spec: {shell: y2, bogus: 1}\n" +
		"- metadata: {name: a, namespace: ops}\n  spec: {shell: x}\n"
	oldFile, newFile := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
	if err := os.WriteFile(oldFile, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newFile, []byte(newList), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "check-update", "--offline", "--crd-file", exampleCRD, "--old", oldFile, "-f", newFile)
	want := "MaintenanceNightlyJob ops/b: update allowed (" + newFile + ":4)\n" +
		"MaintenanceNightlyJob ops/a: update allowed (" + newFile + ":6)\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
	if !strings.Contains(r.stderr, `Warning: MaintenanceNightlyJob ops/b: pruned unknown field "spec.bogus" (`+newFile+":5)") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}
