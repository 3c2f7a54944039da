package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

const crdRefusedDir = "test/e2e/testdata/crdupgrade-refused"

// refusedPrefix starts the message of a Refused change.
const refusedPrefix = "the server would refuse the CRD update: "

// refusedReport is the part of check-update -o json this test reads.
type refusedReport struct {
	Upgrades []struct {
		CRD    string `json:"crd"`
		Source struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"source"`
		Changes []struct {
			Kind     string               `json:"kind"`
			Severity string               `json:"severity"`
			Message  string               `json:"message"`
			Objects  []document.ObjectRef `json:"objects"`
		} `json:"changes"`
		Unexplained []json.RawMessage `json:"unexplained"`
	} `json:"upgrades"`
}

// New CRDs the server's CRD update validation refuses over the Widget CRD
// it holds: a CEL rule over the cost budget and one that no longer
// compiles (the create validation refuses them too), a selectable field
// naming a removed field, and a scope change (which only the update
// validation refuses). The server refuses each update (kubectl apply, and
// the API for its causes one by one); check-update, live and offline
// (--old, --objects), text and JSON, reports each refusal as a Breaking
// finding with exactly the server's errors, the new CRD's file and line,
// and exits 1. The scope change names the objects it hurts with their
// namespace and leaves nothing unexplained.
func TestCRDUpgradeRefusedParity(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.WarningHandler = rest.NoWarnings{}
	crdClient := apiextensionsclient.NewForConfigOrDie(cfg)
	crds := crdClient.ApiextensionsV1().CustomResourceDefinitions()
	readCRD := func(name string) (string, int, *apiextensionsv1.CustomResourceDefinition) {
		file := crdRefusedDir + "/" + name
		d := readOneCRD(t, file)
		// Decoded only: the create validation refuses some of them.
		c, _, err := schema.DecodeObject(d.Object, nil)
		if err != nil {
			t.Fatal(err)
		}
		return file, d.Source.Line, c.Object
	}
	oldFile, _, old := readCRD("old.yaml")
	if err := replaceCRD(ctx, crdClient, old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), old.Name, metav1.DeleteOptions{}) })
	objectsFile := crdRefusedDir + "/objects.yaml"
	gvr := runtimeschema.GroupVersionResource{Group: "refused.example.com", Version: "v1", Resource: "widgets"}
	for _, d := range readDocs(t, filepath.Join(repoRoot(), objectsFile)) {
		ns := document.Ref(d.Object).Namespace
		if ns == "" {
			ns = "default" // the namespace of the kubeconfig's context
		}
		if _, err := createRetrying(ctx, dynamicClient(t).Resource(gvr).Namespace(ns), &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)}); err != nil {
			t.Fatalf("%s: %v", d.Source, err)
		}
	}
	wantObjects := []string{"Widget default/w2", "Widget other/w1"}
	k := kubectls[0].Path

	for _, name := range []string{"cost.yaml", "compile.yaml", "selectable.yaml", "scope.yaml"} {
		t.Run(name, func(t *testing.T) {
			x := NewTest(t)
			file, line, newCRD := readCRD(name)
			// The server: kubectl apply is refused; the causes, from a dry-run update.
			if r := x.Run(k, "apply", "-f", file); r.Code == 0 || !strings.Contains(r.Stderr, " is invalid") {
				t.Fatalf("kubectl apply: exit %d, want a refusal:\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			held, err := crds.Get(ctx, old.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			update := held.DeepCopy()
			update.Spec = newCRD.Spec
			_, err = crds.Update(ctx, update, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			server, err := invalidCauses(err)
			if err != nil || len(server) == 0 {
				t.Fatalf("the dry-run update: causes %q, %v", server, err)
			}

			if name == "cost.yaml" {
				// Without an old CRD it is a create, which the server refuses: bad input.
				r := x.Run("kubectl-crd", "check-update", "--offline", "--old", objectsFile, "-f", file, "-o", "json")
				if r.Code != 2 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "error: "+file+":"+strconv.Itoa(line)+": CustomResourceDefinition "+old.Name+" is invalid: ") {
					t.Errorf("without an old CRD: exit %d (want 2), stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
				}
			}
			for _, mode := range []struct {
				name string
				args []string
			}{
				{"live", []string{"check-update", "-f", file}},
				{"offline", []string{"check-update", "--offline", "--old", oldFile, "--objects", objectsFile, "-f", file}},
			} {
				// JSON: the Refused changes are the server's causes, Breaking.
				r := x.Run("kubectl-crd", append(mode.args, "-o", "json")...)
				var report refusedReport
				if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || r.Code != 1 || len(report.Upgrades) != 1 {
					t.Fatalf("%s -o json: exit %d (want 1), %v\n%s%s", mode.name, r.Code, err, r.Stdout, r.Stderr)
				}
				up := report.Upgrades[0]
				if up.Source.File != file || up.Source.Line != line {
					t.Errorf("%s -o json: source %s:%d, want %s:%d", mode.name, up.Source.File, up.Source.Line, file, line)
				}
				var ours []string
				for _, ch := range up.Changes {
					switch {
					case ch.Kind == "Refused":
						if ch.Severity != "Breaking" {
							t.Errorf("%s -o json: a Refused change of severity %s", mode.name, ch.Severity)
						}
						ours = append(ours, strings.TrimPrefix(ch.Message, refusedPrefix))
					case ch.Kind == "ScopeChanged":
						if diff := cmp.Diff(wantObjects, objectNames(ch.Objects)); diff != "" {
							t.Errorf("%s -o json: the objects the scope change hurts (-want +got):\n%s", mode.name, diff)
						}
					}
				}
				sort.Strings(ours)
				if diff := cmp.Diff(server, ours); diff != "" {
					t.Errorf("%s -o json: the server's causes (-) and the Refused changes (+):\n%s", mode.name, diff)
				}
				if len(up.Unexplained) > 0 {
					t.Errorf("%s -o json: unexplained %s", mode.name, up.Unexplained)
				}

				// Text: the same, under Breaking, after the CRD's file and line.
				r = x.Run("kubectl-crd", mode.args...)
				if r.Code != 1 {
					t.Fatalf("%s: exit %d, want 1:\n%s%s", mode.name, r.Code, r.Stdout, r.Stderr)
				}
				head := "CustomResourceDefinition " + old.Name + " (" + file + ":" + strconv.Itoa(line) + ", replacing "
				if !strings.HasPrefix(r.Stdout, head) || !strings.Contains(r.Stdout, "\n  Breaking:\n") {
					t.Errorf("%s: stdout does not start with %q and a Breaking section:\n%s", mode.name, head, r.Stdout)
				}
				for _, cause := range server {
					// Each cause as text prints it: escaped, a CEL compile error's line breaks
					// included (the CRD's rule is untrusted text).
					if !strings.Contains(r.Stdout, "\n    "+refusedPrefix+printable.Line(cause)) {
						t.Errorf("%s: stdout lacks the server's %q:\n%s", mode.name, cause, r.Stdout)
					}
				}
				if strings.Contains(r.Stdout, "Unexplained") {
					t.Errorf("%s: something unexplained:\n%s", mode.name, r.Stdout)
				}
				if name == "scope.yaml" {
					for _, o := range wantObjects {
						if !strings.Contains(r.Stdout, "\n    "+o+": ") {
							t.Errorf("%s: the objects hurt do not name %s:\n%s", mode.name, o, r.Stdout)
						}
					}
				}
			}
		})
	}
}

// The KRM function through kustomize build: a new CRD among the items
// that the server refuses over the one of previous: (a CEL rule over the
// cost budget) is an error result of the CRD per server's cause, not a
// failure of the function's input.
func TestKRMKustomizeUpgradeRefused(t *testing.T) {
	x := NewTest(t)
	dir := t.TempDir()
	root := repoRoot()
	copyFile := func(from, to string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), mustRead(t, filepath.Join(root, from)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(crdRefusedDir+"/old.yaml", "previous/crd.yaml")
	copyFile(crdRefusedDir+"/cost.yaml", "crd.yaml")
	copyFile(crdRefusedDir+"/objects.yaml", "widgets.yaml")
	copyFile(krmUpgradeDir+"/check.yaml", "check.yaml")
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- crd.yaml\n- widgets.yaml\ntransformers:\n- check.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The server's causes, from its own CRD update validation
	// (TestCRDUpgradeRefusedParity holds it to the server's refusal).
	decode := func(name string) *apiextensionsv1.CustomResourceDefinition {
		c, _, err := schema.DecodeObject(readOneCRD(t, crdRefusedDir+"/"+name).Object, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Object
	}
	causes := fieldMessages((strategy.Validators{}).ValidateCRDUpdate(decode("old.yaml"), decode("cost.yaml")))
	if len(causes) == 0 {
		t.Fatal("the server's CRD update validation accepts the new CRD")
	}

	r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	if r.Code != 1 || r.Stdout != "" {
		t.Fatalf("exit %d, want 1 and nothing on stdout:\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, cause := range causes {
		want := "[error] apiextensions.k8s.io/v1/CustomResourceDefinition/widgets.refused.example.com: " + refusedPrefix + cause
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks\n  %s\nstderr:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, " is invalid") {
		t.Errorf("the function refuses the new CRD as input:\n%s", r.Stderr)
	}
}

// objectNames are the objects as the report names them (Kind
// namespace/name), sorted: a live scan lists them by namespace.
func objectNames(refs []document.ObjectRef) []string {
	var out []string
	for _, o := range refs {
		out = append(out, o.String())
	}
	sort.Strings(out)
	return out
}
