package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	exampleCRD     = "examples/maintenance/crd.yaml"
	exampleCRDName = "maintenancenightlyjobs.operations.example.com"
	exampleJobs    = "examples/maintenance/job.yaml"
)

// requireOwnCluster skips tests that need the contexts of the suite's own API server.
func requireOwnCluster(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	if !cluster.own {
		t.Skipf("needs the suite's own test API server (its kubeconfig contexts); %s is set", EnvKubeconfig)
	}
}

// MatrixEnv runs the corpus-wide sweeps against the real server (every
// CRD and sample of the corpus, one by one): .ci/run's matrix target runs
// them with it set, so that the README's test command stays under 15
// minutes on two cores. Without it they are skipped, saying so.
const MatrixEnv = "KUBECTL_CRD_E2E_MATRIX"

// corpusSweep skips a corpus-wide sweep outside the matrix target.
func corpusSweep(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	if os.Getenv(MatrixEnv) == "" {
		t.Skipf("a corpus-wide sweep against the real server: run by .ci/run's matrix target (%s=1 go test -run %s ./test/e2e)", MatrixEnv, t.Name())
	}
}

// matrixSweep skips a test of many inputs against the real server outside
// the matrix target: the README's test command runs a representative part
// of them (say which in the test's comment).
func matrixSweep(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	if os.Getenv(MatrixEnv) == "" {
		t.Skipf("a sweep of many inputs against the real server: run by .ci/run's matrix target (%s=1 go test -run %s ./test/e2e)", MatrixEnv, t.Name())
	}
}

// applyExampleCRD creates the example CRD on the cluster and waits until it is served.
func applyExampleCRD(t *testing.T) {
	t.Helper()
	x := NewTest(t)
	k := kubectls[0].Path
	if r := x.Run(k, "apply", "-f", exampleCRD); r.Code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := x.Run(k, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+exampleCRDName); r.Code != 0 {
		t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
	}
}

// The plugin runs through every kubectl, with schemas from the cluster.
func TestLiveThroughKubectl(t *testing.T) {
	applyExampleCRD(t)
	for _, k := range kubectls {
		t.Run(k.Name, func(t *testing.T) {
			x := NewTest(t)
			r := x.Run(k.Path, "crd", "prune", "-f", exampleJobs)
			if r.Code != 0 {
				t.Fatalf("prune: exit %d\n%s", r.Code, r.Stderr)
			}
			for _, want := range []string{
				`Warning: MaintenanceNightlyJob ops/backdoor-check: dropped unknown metadata field "metadata.lables" (examples/maintenance/job.yaml:9)`,
				`Warning: MaintenanceNightlyJob ops/backdoor-check: pruned unknown field "spec.privileged" (examples/maintenance/job.yaml:17)`,
			} {
				if !strings.Contains(r.Stderr, want+"\n") {
					t.Errorf("prune: stderr lacks %q:\n%s", want, r.Stderr)
				}
			}
			if strings.Contains(r.Stdout, "privileged: true") || !strings.Contains(r.Stdout, "# runs every night") {
				t.Errorf("prune: stdout:\n%s", r.Stdout)
			}

			// Every way to name a CRD, as kubectl get accepts them.
			for _, name := range []string{exampleCRDName, "maintenancenightlyjobs", "maintenancenightlyjob", "MaintenanceNightlyJob", "mnj", "mnj.operations.example.com"} {
				r := x.Run(k.Path, "crd", "explain-structural", name)
				want := "CustomResourceDefinition " + exampleCRDName + " (https://"
				if r.Code != 0 || !strings.HasPrefix(r.Stdout, want) || !strings.Contains(r.Stdout, "): structural\n") {
					t.Errorf("explain-structural %s: exit %d, stdout:\n%s\nstderr:\n%s", name, r.Code, r.Stdout, r.Stderr)
				}
			}

			r = x.Run(k.Path, "crd", "explain-structural", "--all", "-o", "json")
			var report struct {
				CRDs []struct {
					Name       string
					Cluster    string
					Structural bool
				}
			}
			// Exit 1 when any CRD of the cluster is not structural (the own server's legacy one).
			if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || (r.Code != 0 && r.Code != 1) {
				t.Fatalf("explain-structural --all: exit %d, %v\n%s", r.Code, err, r.Stderr)
			}
			found := false
			for _, c := range report.CRDs {
				found = found || c.Name == exampleCRDName && c.Structural && c.Cluster != ""
			}
			if !found {
				t.Errorf("explain-structural --all: %s is not listed as structural:\n%s", exampleCRDName, r.Stdout)
			}
		})
	}
}

// -n, --context and the context's namespace decide where objects without a
// namespace go, wherever the flags stand on the command line.
func TestLiveNamespaceAndContext(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)
	obj := "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: x\nspec:\n  command: date\n  extra: 1\n"
	for _, k := range kubectls {
		for _, tc := range []struct {
			args []string
			ns   string
		}{
			{[]string{"crd", "prune", "-f", "-"}, "default"},
			{[]string{"crd", "--context", "crd-test-other", "prune", "-f", "-"}, "other"},
			{[]string{"crd", "prune", "-f", "-", "--context=crd-test-other"}, "other"},
			{[]string{"crd", "prune", "-n", "team-a", "-f", "-"}, "team-a"},
			{[]string{"crd", "-n", "team-a", "--context", "crd-test-other", "prune", "-f", "-"}, "team-a"},
		} {
			r := NewTest(t).WithStdin(obj).Run(k.Path, tc.args...)
			want := "Warning: MaintenanceNightlyJob " + tc.ns + "/x: pruned unknown field \"spec.extra\" (-:7)\n"
			if r.Code != 0 || r.Stderr != want {
				t.Errorf("%s %s: exit %d, stderr:\n%s\nwant:\n%s", k.Name, strings.Join(tc.args, " "), r.Code, r.Stderr, want)
			}
		}
	}
	r := NewTest(t).WithStdin(strings.Replace(obj, "name: x", "name: x\n  namespace: dev", 1)).Run("kubectl-crd", "prune", "-n", "prod", "-f", "-")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, `the namespace from the provided object "dev" does not match the namespace "prod"`) {
		t.Errorf("namespace mismatch: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Cluster and input errors: a clear message, the right exit code, nothing
// on stdout, never a stack trace.
func TestLiveErrors(t *testing.T) {
	requireOwnCluster(t)
	applyExampleCRD(t)
	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	kc, err := os.ReadFile(cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// The same kubeconfig, but nothing listens on port 1.
	if err := os.WriteFile(unreachable, []byte(strings.ReplaceAll(string(kc), "127.0.0.1:", "127.0.0.1:1#")), 0o600); err != nil {
		t.Fatal(err)
	}
	unknownKind := "apiVersion: nowhere.example.com/v1\nkind: Bar\nmetadata:\n  name: b\n"
	for _, tc := range []struct {
		name  string
		env   []string
		stdin string
		args  []string
		code  int
		want  []string
	}{
		{"forbidden", nil, "", []string{"--context", "crd-test-denied", "explain-structural", "--all"}, 3,
			[]string{`error: listing CustomResourceDefinitions on https://127.0.0.1:`, `(context "crd-test-denied"): forbidden: customresourcedefinitions.apiextensions.k8s.io is forbidden: User "denied" cannot list resource "customresourcedefinitions"`}},
		{"forbidden, get by name", nil, "", []string{"--context", "crd-test-denied", "explain-structural", exampleCRDName}, 3,
			[]string{`error: getting CustomResourceDefinition "` + exampleCRDName + `" on https://127.0.0.1:`, `forbidden: `}},
		{"forbidden, prune", nil, unknownKind, []string{"--context", "crd-test-denied", "prune", "-f", "-"}, 3,
			[]string{`error: discovering the API groups on https://127.0.0.1:`, `forbidden: `}},
		{"unreachable", []string{"KUBECONFIG=" + unreachable}, unknownKind, []string{"prune", "-f", "-"}, 3,
			[]string{"error: discovering the API groups: cannot reach the API server at https://127.0.0.1:1", "connection refused", "pass --offline"}},
		{"CRD not found", nil, "", []string{"explain-structural", "nosuchthings"}, 2,
			[]string{`error: no CustomResourceDefinition "nosuchthings" on https://127.0.0.1:`}},
		{"kind without CRD", nil, unknownKind, []string{"prune", "-f", "-"}, 2,
			[]string{`error: -:1: Bar b: no CustomResourceDefinition defines kind "Bar" in nowhere.example.com/v1, on https://127.0.0.1:`, "the API server would refuse it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewTest(t).WithEnv(tc.env...).WithStdin(tc.stdin).Run("kubectl-crd", tc.args...)
			if r.Code != tc.code || r.Stdout != "" {
				t.Errorf("exit %d (want %d), stdout %q", r.Code, tc.code, r.Stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
			if strings.Contains(r.Stderr, "goroutine ") || strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("want one line on stderr:\n%s", r.Stderr)
			}
		})
	}

	// --offline never contacts the cluster: the unknown kind passes through
	// unchecked, an error (exit 1) unless --ignore-missing-crds.
	r := NewTest(t).WithEnv("KUBECONFIG="+unreachable).WithStdin(unknownKind).Run("kubectl-crd", "prune", "--offline", "-f", "-")
	if r.Code != 1 || r.Stdout != unknownKind || !strings.Contains(r.Stderr, "Error: Bar b: no CustomResourceDefinition for nowhere.example.com/v1, kind Bar: not checked") {
		t.Errorf("--offline: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = NewTest(t).WithEnv("KUBECONFIG="+unreachable).WithStdin(unknownKind).Run("kubectl-crd", "prune", "--offline", "--ignore-missing-crds", "-f", "-")
	if r.Code != 0 || r.Stdout != unknownKind || !strings.Contains(r.Stderr, "Warning: Bar b: no CustomResourceDefinition for nowhere.example.com/v1, kind Bar: not checked") {
		t.Errorf("--offline --ignore-missing-crds: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// Built-in kinds need no CRD; offline, no cluster either. Live, the cluster's discovery
	// says whether it serves them, as kubectl asks it: unreachable, that is a cluster error.
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	r = NewTest(t).WithEnv("KUBECONFIG="+unreachable).WithStdin(cm).Run("kubectl-crd", "prune", "--offline", "-f", "-")
	if r.Code != 0 || r.Stdout != cm || r.Stderr != "" {
		t.Errorf("built-in kind, offline: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = NewTest(t).WithEnv("KUBECONFIG="+unreachable).WithStdin(cm).Run("kubectl-crd", "prune", "-f", "-")
	if r.Code != 3 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "error: discovering the API groups: cannot reach the API server at https://127.0.0.1:1") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("built-in kind, live: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A legacy CRD the server holds but would no longer accept: explain-structural
// finds the violations the server's NonStructuralSchema condition lists, in the
// same words, and shows the condition.
func TestLiveLegacyNonStructural(t *testing.T) {
	requireOwnCluster(t)
	x := NewTest(t)
	r := x.Run("kubectl-crd", "explain-structural", "legacythings", "-o", "json")
	var report struct {
		CRDs []struct {
			Name       string
			Structural bool
			Violations []struct{ Message string }
			// The server's condition.
			ServerCondition *struct{ Type, Status, Reason, Message string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || r.Code != 1 || len(report.CRDs) != 1 {
		t.Fatalf("exit %d (want 1), %v:\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	c := report.CRDs[0]
	if c.Structural || len(c.Violations) == 0 {
		t.Fatalf("want violations: %+v", c)
	}
	if c.ServerCondition == nil || c.ServerCondition.Type != "NonStructuralSchema" || c.ServerCondition.Status != "True" || c.ServerCondition.Reason != "Violations" {
		t.Fatalf("server condition: %+v", c.ServerCondition)
	}
	// The controller's message is the violations as an aggregate error.
	var msgs []string
	for _, v := range c.Violations {
		msgs = append(msgs, v.Message)
	}
	want := msgs[0]
	if len(msgs) > 1 {
		want = "[" + strings.Join(msgs, ", ") + "]"
	}
	if c.ServerCondition.Message != want {
		t.Errorf("the server's condition says:\n%s\nexplain-structural found:\n%s", c.ServerCondition.Message, want)
	}

	r = x.Run("kubectl-crd", "explain-structural", "legacythings")
	if r.Code != 1 || !strings.Contains(r.Stdout, "): NOT structural (") || !strings.Contains(r.Stdout, "  server condition NonStructuralSchema=True (Violations): ") {
		t.Errorf("text: exit %d\n%s", r.Code, r.Stdout)
	}
	// preserveUnknownFields: true, so the server prunes nothing.
	obj := "apiVersion: example.com/v1\nkind: LegacyThing\nmetadata:\n  name: l\nspec:\n  anything: goes\n"
	r = NewTest(t).WithStdin(obj).Run("kubectl-crd", "prune", "--fail-on-prune", "-f", "-")
	if r.Code != 0 || r.Stdout != obj || r.Stderr != "" {
		t.Errorf("prune: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
