package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bigJob is a MaintenanceNightlyJob whose JSON is n bytes, valid but for its
// size: a long command.
func bigJob(t *testing.T, n int) string {
	t.Helper()
	obj := map[string]interface{}{"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob",
		"metadata": map[string]interface{}{"name": "big", "namespace": "ops"},
		"spec":     map[string]interface{}{"command": ""}}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: big\n  namespace: ops\nspec:\n  command: %s\n",
		strings.Repeat("x", n-len(b)))
}

var tooLarge = regexp.MustCompile(`Request entity too large: limit is \d+`)

// An object larger than the API server reads in a request body: the server
// (through kubectl) and kubectl crd draw the line at the same byte, and
// kubectl crd refuses it in the server's words. Either side of the line, the
// server takes one object and refuses the other.
func TestRequestBodyLimitParity(t *testing.T) {
	applyExampleCRD(t)
	x := NewTest(t)
	dir := t.TempDir()
	const limit = 3 << 20
	refused := map[bool]bool{}
	for _, n := range []int{limit - 2, limit - 1, limit, limit + 1} {
		file := filepath.Join(dir, fmt.Sprintf("job-%d.yaml", n))
		if err := os.WriteFile(file, []byte(bigJob(t, n)), 0o644); err != nil {
			t.Fatal(err)
		}
		server := x.Run(kubectls[0].Path, "create", "--dry-run=server", "-f", file)
		ours := x.Run("kubectl-crd", "prune", "-f", file)
		words := tooLarge.FindString(server.Stderr)
		switch {
		case server.Code == 0 && ours.Code == 2:
			t.Errorf("%d bytes: the server takes it, kubectl crd refuses it:\n%s", n, ours.Stderr)
		case server.Code != 0 && words == "":
			t.Errorf("%d bytes: the server refuses it for another reason:\n%s", n, server.Stderr)
		case server.Code != 0 && (ours.Code != 2 || !strings.Contains(ours.Stderr, `413 "`+words+`"`)):
			t.Errorf("%d bytes: the server answers %q; kubectl crd: exit %d\n%s", n, words, ours.Code, ours.Stderr)
		}
		t.Logf("%d bytes: server exit %d %s; kubectl crd exit %d", n, server.Code, words, ours.Code)
		refused[server.Code != 0] = true
	}
	if !refused[true] || !refused[false] {
		t.Errorf("the server did not both take and refuse one: %v", refused)
	}
}
