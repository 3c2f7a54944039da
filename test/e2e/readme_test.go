package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEFirstCommand runs the README's "build and run" command with the
// built binary and checks the output the README shows.
func TestREADMEFirstCommand(t *testing.T) {
	x := NewTest(t)
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?m)^go run ./cmd/kubectl-crd (.*)$").FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal("README has no `go run ./cmd/kubectl-crd` command")
	}
	r := x.Run("kubectl-crd", strings.Fields(m[1])...)
	if r.Code != 0 {
		t.Fatalf("exit %d:\n%s", r.Code, r.Stderr)
	}
	// Every Warning line the README shows is printed, word for word.
	for _, l := range regexp.MustCompile(`(?m)^Warning: .*$`).FindAllString(string(readme), -1) {
		if !strings.Contains(r.Stderr, l+"\n") {
			t.Errorf("README shows %q, the command printed:\n%s", l, r.Stderr)
		}
	}
	if strings.Contains(r.Stdout, "privileged: true") {
		t.Errorf("spec.privileged is still in the output:\n%s", r.Stdout)
	}
}

// TestPluginThroughKubectl runs "kubectl crd" through a real kubectl, which
// finds the plugin on PATH.
func TestPluginThroughKubectl(t *testing.T) {
	x := NewTest(t)
	kubectl := "/usr/bin/kubectl"
	if _, err := os.Stat(kubectl); err != nil {
		t.Skip("no kubectl at /usr/bin/kubectl")
	}
	r := x.Run(kubectl, "crd", "prune", "--crd-file", "examples/maintenance/crd.yaml", "-f", "examples/maintenance/job.yaml", "--fail-on-prune")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (findings):\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, `pruned unknown field "spec.privileged" (examples/maintenance/job.yaml:17)`) {
		t.Errorf("stderr:\n%s", r.Stderr)
	}
	r = x.Run(kubectl, "crd", "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "kubectl crd [command]") {
		t.Errorf("help through kubectl: exit %d\n%s", r.Code, r.Stdout)
	}
}
