package filter

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/exitcode"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// runFunction runs the function's command with args and stdin: its exit
// code (0 on success), stdout and stderr with the error.
func runFunction(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand()
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	if err == nil {
		return 0, out.String(), errOut.String()
	}
	var coded *exitcode.Error
	if !errors.As(err, &coded) {
		t.Fatalf("an error without an exit code: %v", err)
	}
	return coded.Code, out.String(), errOut.String() + err.Error()
}

const checkConfig = "functionConfig:\n  apiVersion: crd.kubectl.dev/v1alpha1\n  kind: CRDCheck\n  metadata: {name: c}\n"

// Annotations, labels or metadata that are not maps: kyaml dropped the
// annotations silently (exit 0) or failed without a line; the API server
// refuses the object, whatever its kind. Refused at the item's line, in
// the server's words, in both modes.
func TestItemMetadataNotAMap(t *testing.T) {
	for _, tc := range []struct{ name, meta, want string }{
		{"annotations", "    name: a\n    annotations: x\n", "cannot unmarshal string into Go struct field ObjectMeta.annotations"},
		{"labels", "    name: a\n    labels: [x]\n", "cannot unmarshal array into Go struct field ObjectMeta.labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := "the server would refuse this object: metadata: json: " + tc.want
			list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: ok\n" +
				"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n" + tc.meta + checkConfig
			code, out, errOut := runFunction(t, list)
			if code != 2 || out != "" || !strings.Contains(errOut, "stdin:8: ") || !strings.Contains(errOut, want) {
				t.Errorf("ResourceList: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
			}
			dir := t.TempDir()
			config, file := filepath.Join(dir, "fc.yaml"), filepath.Join(dir, "cm.yaml")
			if err := os.WriteFile(config, []byte("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nmetadata: {name: c}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n"+strings.ReplaceAll(tc.meta, "    ", "  ")), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut = runFunction(t, "", config, file)
			if code != 2 || out != "" || !strings.Contains(errOut, file+":1: ") || !strings.Contains(errOut, want) {
				t.Errorf("standalone: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
			}
		})
	}
}

// An anchor in one item and its alias in another is valid YAML, one
// document: the item reads as it does in the list, and the list is written
// back as it came.
func TestAliasOfAnotherItem(t *testing.T) {
	list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    labels: &l {team: x}\n  data: &d {k: v}\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n    labels: *l\n  data: *d\n" + checkConfig
	code, out, errOut := runFunction(t, list)
	// The list as it came, and the result that says which minor answered.
	if code != 0 || !strings.HasPrefix(out, list+"results:\n- message: "+kubeversion.Current().Verdicts()+"\n") {
		t.Errorf("exit %d, stderr:\n%s\nstdout:\n%s", code, errOut, out)
	}
}

// Aliases of other items' anchors that expand without end (each item
// aliasing the one before it sixteen times) are refused, not expanded.
func TestAliasesOfAnotherItemBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	b.WriteString("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c0}, data: {l: &l0 [" + strings.Repeat("x, ", 15) + "x]}}\n")
	for i := 1; i < 6; i++ {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}, data: {l: &l%d [%s*l%d]}}\n", i, i, strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 15), i-1)
	}
	b.WriteString(checkConfig)
	code, _, errOut := runFunction(t, b.String())
	if code != 2 || !strings.Contains(errOut, "items[4]: aliases of anchors in other items expand to more than 1048576 YAML nodes") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}
