package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	textunicode "golang.org/x/text/encoding/unicode"
)

// Inputs that kubectl's reader reads in its own way, each sent by the real
// kubectl to the real API server (a server-side dry run) and pruned by
// kubectl crd from the cluster's schemas: both must give the same objects.
func TestReaderAgainstKubectlAndServer(t *testing.T) {
	applyExampleCRD(t)
	const job = "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\n"
	utf16 := func(s string) string {
		b, err := textunicode.UTF16(textunicode.LittleEndian, textunicode.UseBOM).NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, in string
		warning  string // a part of a warning kubectl crd must print
	}{
		{name: "block scalar at the end without a final line break",
			in: job + "metadata: {name: a, namespace: default}\nspec:\n  shell: |\n    echo hi"},
		{name: "invalid UTF-8",
			in: job + "metadata: {name: b, namespace: default}\nspec:\n  shell: \"echo \xff\xfe x\xc3\"\n"},
		{name: "UTF-16 with a byte order mark",
			in: utf16(job + "metadata: {name: c, namespace: default}\nspec:\n  shell: échec\n")},
		{name: "CRLF line ends",
			in: strings.ReplaceAll(job+"metadata: {name: d, namespace: default}\nspec:\n  shell: |\n    echo hi\n    exit 1\n  bogus: 1\n", "\n", "\r\n")},
		{name: "duplicate keys",
			in:      job + "metadata:\n  name: e\n  namespace: default\nspec:\n  shell: first\n  shell: second\n",
			warning: `duplicate key "spec.shell" (also at line 7): kubectl sends only the last value, of line 8`},
		{name: "a List of the group's version, items with and without their kind",
			in: "apiVersion: operations.example.com/v1\nkind: List\nitems:\n" +
				"- apiVersion: operations.example.com/v1\n  kind: MaintenanceNightlyJob\n  metadata: {name: f1, namespace: default}\n  spec:\n    shell: x  # kept\n    bogus: 1\n" +
				"- apiVersion: operations.example.com/v1\n  kind: MaintenanceNightlyJob\n  metadata: {name: f2, namespace: default}\n  spec: {shell: y2}\n"},
		{name: "a typed List, items without apiVersion and kind",
			in: "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJobList\nitems:\n" +
				"- metadata: {name: g1, namespace: default}\n  spec:\n    shell: x\n    bogus: 1\n"},
		{name: "a JSON stream",
			in: `{"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob", "metadata": {"name": "h1", "namespace": "default"}, "spec": {"shell": "a"}}` + "\n" +
				`{"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob", "metadata": {"name": "h2", "namespace": "default"}, "spec": {"shell": "b", "bogus": 1}}`},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, fmt.Sprintf("input-%d.yaml", i))
			if err := os.WriteFile(file, []byte(tt.in), 0o644); err != nil {
				t.Fatal(err)
			}
			x := NewTest(t)
			// What the server stores, as the real kubectl reads and sends the file.
			k := x.Run(kubectls[0].Path, "create", "--dry-run=server", "--validate=false", "-o", "json", "-f", file)
			if k.Code != 0 {
				t.Fatalf("kubectl create --dry-run=server: exit %d\n%s", k.Code, k.Stderr)
			}
			want := serverObjects(t, k.Stdout)
			r := x.Run("kubectl-crd", "prune", "--defaults", "-o", "json", "-f", file)
			if r.Code != 0 {
				t.Fatalf("kubectl crd prune: exit %d\n%s", r.Code, r.Stderr)
			}
			var out struct {
				Items []map[string]interface{} `json:"items"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
				t.Fatalf("prune -o json: %v\n%s", err, r.Stdout)
			}
			if len(out.Items) != len(want) {
				t.Fatalf("prune printed %d objects, the server stored %d:\n%s", len(out.Items), len(want), r.Stdout)
			}
			for i := range want {
				w := normalizeServerObject(want[i], out.Items[i])
				g := normalizeServerObject(out.Items[i], out.Items[i])
				if diff := cmp.Diff(w, g); diff != "" {
					t.Errorf("object %d (-server +prune):\n%s", i, diff)
				}
			}
			if tt.warning != "" && !strings.Contains(r.Stderr, tt.warning) {
				t.Errorf("prune: stderr lacks %q:\n%s", tt.warning, r.Stderr)
			}
			// The YAML output reads back, for kubectl, as the objects it printed as JSON.
			y := x.Run("kubectl-crd", "prune", "--defaults", "-f", file)
			if y.Code != 0 {
				t.Fatalf("kubectl crd prune (YAML): exit %d\n%s", y.Code, y.Stderr)
			}
			again := filepath.Join(dir, fmt.Sprintf("output-%d.yaml", i))
			if err := os.WriteFile(again, []byte(y.Stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			k2 := x.Run(kubectls[0].Path, "create", "--dry-run=server", "--validate=false", "-o", "json", "-f", again)
			if k2.Code != 0 {
				t.Fatalf("kubectl create of the YAML output: exit %d\n%s\n%s", k2.Code, k2.Stderr, y.Stdout)
			}
			if diff := cmp.Diff(normalizeAll(want), normalizeAll(serverObjects(t, k2.Stdout))); diff != "" {
				t.Errorf("the YAML output is stored differently (-input +output):\n%s", diff)
			}
		})
	}
}

// serverObjects reads what kubectl create -o json prints: a JSON object per
// object, or a List of them.
func serverObjects(t *testing.T, out string) []map[string]interface{} {
	t.Helper()
	var objs []map[string]interface{}
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var obj map[string]interface{}
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("kubectl's output: %v\n%s", err, out)
		}
		items, ok := obj["items"].([]interface{})
		if !ok {
			objs = append(objs, obj)
			continue
		}
		for _, it := range items {
			objs = append(objs, it.(map[string]interface{}))
		}
	}
}

func normalizeAll(objs []map[string]interface{}) []map[string]interface{} {
	var out []map[string]interface{}
	for _, o := range objs {
		out = append(out, normalizeServerObject(o, o))
	}
	return out
}
