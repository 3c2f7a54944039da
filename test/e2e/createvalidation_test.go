package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

const (
	createValidationCRDs    = "test/e2e/testdata/createvalidation/crds.yaml"
	createValidationObjects = "test/e2e/testdata/createvalidation/objects.yaml"
)

// createVerdict is what happens to one object sent as a create: refused or
// not, and the errors, "field: message" as the server words them, sorted.
type createVerdict struct {
	Refused bool
	Errors  []string
}

// The server refuses exactly the objects prune calls Invalid, with the same
// errors: each object of testdata/createvalidation is sent to the test API
// server as a create with dryRun=All, and prune reads the same file, with
// the schemas of the cluster and, offline, of the CRD file.
func TestCreateValidationParity(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	ctx := context.Background()
	root := repoRoot()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.WarningHandler = rest.NoWarnings{} // unknown fields are not this test's business
	crdClient := apiextensionsclient.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	crds := map[runtimeschema.GroupKind]*apiextensionsv1.CustomResourceDefinition{}
	for _, d := range readDocs(t, filepath.Join(root, createValidationCRDs)) {
		js, err := d.JSON()
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(js, crd); err != nil {
			t.Fatal(err)
		}
		if err := replaceCRD(ctx, crdClient, crd); err != nil {
			t.Fatalf("creating %s: %v", crd.Name, err)
		}
		t.Cleanup(func() {
			_ = crdClient.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
		})
		crds[runtimeschema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = crd
	}

	// What the server does.
	docs := readDocs(t, filepath.Join(root, createValidationObjects))
	server := make([]createVerdict, len(docs))
	for i, d := range docs {
		obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)}
		gvk := obj.GroupVersionKind()
		crd := crds[gvk.GroupKind()]
		if crd == nil {
			t.Fatalf("%s: no CRD in %s for %s", d.Source, createValidationCRDs, gvk)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(gvk.GroupVersion().WithResource(crd.Spec.Names.Plural))
		if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = "default" // the namespace of the kubeconfig's context, where prune puts it
			}
			ri = dyn.Resource(gvk.GroupVersion().WithResource(crd.Spec.Names.Plural)).Namespace(ns)
		}
		_, err := createDryRun(ctx, ri, obj)
		if err == nil {
			continue
		}
		var status *apierrors.StatusError
		if !errors.As(err, &status) || status.ErrStatus.Reason != metav1.StatusReasonInvalid || status.ErrStatus.Details == nil {
			t.Fatalf("%s: the server refuses it, not as invalid: %v", d.Source, err)
		}
		server[i].Refused = true
		for _, c := range status.ErrStatus.Details.Causes {
			server[i].Errors = append(server[i].Errors, c.Field+": "+c.Message)
		}
		sort.Strings(server[i].Errors)
	}

	// The fixture tests what it means to: its names say which objects are valid.
	var refused int
	for i, d := range docs {
		name := prefixOf(d.Object)
		if meant := !strings.Contains(name, "ok-"); meant != server[i].Refused {
			t.Errorf("%s: %q: the server refused it: %v (%v); fix the fixture", d.Source, name, server[i].Refused, server[i].Errors)
		}
		if server[i].Refused {
			refused++
		}
	}
	if refused < 15 || refused == len(docs) {
		t.Fatalf("the server refused %d objects of %d", refused, len(docs))
	}

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"schemas from the cluster", nil},
		{"offline, schemas from the file", []string{"--offline", "--crd-file", createValidationCRDs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"prune", "-f", createValidationObjects, "--report", report}, tc.args...)
			r := NewTest(t).Run("kubectl-crd", args...)
			if r.Code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", r.Code, r.Stderr)
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Items []struct {
					Status string `json:"status"`
					Errors []struct {
						Field   string `json:"field"`
						Message string `json:"message"`
					} `json:"errors"`
				} `json:"items"`
			}
			if err := json.Unmarshal(b, &got); err != nil || len(got.Items) != len(docs) {
				t.Fatalf("report: %v, %d items for %d objects", err, len(got.Items), len(docs))
			}
			for i, it := range got.Items {
				ours := createVerdict{Refused: it.Status == "Invalid"}
				if it.Status != "Invalid" && it.Status != "Checked" {
					t.Errorf("%s: status %s", docs[i].Source, it.Status)
				}
				for _, e := range it.Errors {
					ours.Errors = append(ours.Errors, e.Message)
					if !strings.HasPrefix(e.Message, e.Field+": ") {
						t.Errorf("%s: the message does not start with the field: %+v", docs[i].Source, e)
					}
				}
				sort.Strings(ours.Errors)
				if d := cmp.Diff(server[i], ours, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s (%s): (-server +prune):\n%s", docs[i].Source, prefixOf(docs[i].Object), d)
				}
			}
		})
	}
}

// prefixOf is the object's name, or its generateName.
func prefixOf(obj map[string]interface{}) string {
	u := unstructured.Unstructured{Object: obj}
	if n := u.GetName(); n != "" {
		return n
	}
	return u.GetGenerateName()
}

func readDocs(t *testing.T, name string) []*document.Document {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := document.Read(bytes.NewReader(b), name)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// refusedSample is a corpus sample the server refuses as invalid.
type refusedSample struct {
	cr      *parityCR
	verdict createVerdict
}

// refusalStats counts the corpus samples the server refuses as invalid.
type refusalStats struct {
	invalid, same, badInput int
}

// invalidVerdict reads the server's refusal of a create: ok when it is a
// validation error (reason Invalid), with its errors.
func invalidVerdict(err error) (createVerdict, bool) {
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Reason != metav1.StatusReasonInvalid || status.ErrStatus.Details == nil {
		return createVerdict{}, false
	}
	v := createVerdict{Refused: true}
	for _, c := range status.ErrStatus.Details.Causes {
		v.Errors = append(v.Errors, c.Field+": "+c.Message)
	}
	sort.Strings(v.Errors)
	return v, true
}

// checkRefusedSamples runs prune (schemas from the cluster) on the samples
// of a set that the server refuses as invalid: each must be Invalid, with
// the server's errors. prune may instead refuse one as bad input (exit 2:
// it cannot be decoded, which the server words as a validation error too);
// those are counted, and checked one at a time.
func checkRefusedSamples(t *testing.T, set string, samples []refusedSample, stats *refusalStats) {
	t.Helper()
	if len(samples) == 0 {
		return
	}
	stats.invalid += len(samples)
	var docs []*parityCR
	for _, s := range samples {
		docs = append(docs, s.cr)
	}
	if code, reports := pruneReports(t, docs); code != 2 {
		for i, s := range samples {
			compareRefusal(t, s, reports[i], stats)
		}
		return
	}
	for _, s := range samples {
		code, reports := pruneReports(t, []*parityCR{s.cr})
		if code == 2 {
			stats.badInput++
			continue
		}
		compareRefusal(t, s, reports[0], stats)
	}
}

func compareRefusal(t *testing.T, s refusedSample, it pruneReportItem, stats *refusalStats) {
	t.Helper()
	ours := createVerdict{Refused: it.Status == "Invalid"}
	for _, e := range it.Errors {
		ours.Errors = append(ours.Errors, e.Message)
	}
	sort.Strings(ours.Errors)
	if d := cmp.Diff(s.verdict, ours, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s: the server refuses it; prune says %s (-server +prune):\n%s", s.cr.where, it.Status, d)
		return
	}
	stats.same++
}

// pruneReports runs kubectl crd prune --report - on docs, joined on stdin,
// with schemas from the cluster: the exit code, and the report's items
// unless it is 2 (bad input).
func pruneReports(t *testing.T, docs []*parityCR) (int, []pruneReportItem) {
	t.Helper()
	var in bytes.Buffer
	for _, d := range docs {
		b, err := d.doc.Encode()
		if err != nil {
			t.Fatal(err)
		}
		in.WriteString("---\n")
		in.Write(b)
	}
	r := NewTest(t).WithStdin(in.String()).Run("kubectl-crd", "prune", "--report", "-", "-f", "-")
	if r.Code == 2 {
		return r.Code, nil
	}
	var report struct {
		Items []pruneReportItem `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || len(report.Items) != len(docs) || (r.Code != 0 && r.Code != 1) {
		t.Fatalf("prune: exit %d, %v, %d items for %d objects:\n%s", r.Code, err, len(report.Items), len(docs), r.Stderr)
	}
	return r.Code, report.Items
}
