package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// crdValidationDir holds one CRD a file: the API server accepts those of
// valid*.yaml and refuses every other one.
const crdValidationDir = "test/e2e/testdata/crdvalidation"

var crdGVR = runtimeschema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// invalidReport is the part of explain-structural -o json this test reads.
type invalidReport struct {
	CRDs []struct {
		Name    string `json:"name"`
		Invalid []struct {
			Field   string `json:"field"`
			Detail  string `json:"detail"`
			Message string `json:"message"`
		} `json:"invalid"`
	} `json:"crds"`
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.WarningHandler = rest.NoWarnings{} // unrecognized formats of the corpus, by the hundred
	return dynamic.NewForConfigOrDie(cfg)
}

// serverRefusal creates obj, a CRD as read from its file, with dryRun=All
// and returns the causes of the server's Invalid refusal, "field: message"
// sorted; nil when the server's validation passes it (then the create
// succeeds, or finds the name taken: storage comes after validation).
// fieldValidation is Ignore: unknown fields are not what is compared here.
func serverRefusal(ctx context.Context, dyn dynamic.Interface, obj map[string]interface{}) ([]string, error) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	_, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Ignore"})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return nil, nil
	case !apierrors.IsInvalid(err):
		return nil, err
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil, fmt.Errorf("an Invalid status without details: %v", err)
	}
	out := []string{}
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	sort.Strings(out)
	return out, nil
}

// ourRefusal is the engine's verdict in the same form.
func ourRefusal(c *schema.CRD) []string {
	out := []string{}
	for _, e := range c.Invalid() {
		out = append(out, e.Field+": "+e.ErrorBody())
	}
	sort.Strings(out)
	return out
}

func readOneCRD(t *testing.T, file string) *document.Document {
	t.Helper()
	docs, err := document.Read(bytes.NewReader(mustRead(t, filepath.Join(repoRoot(), file))), file)
	if err != nil || len(docs) != 1 {
		t.Fatalf("%s: %d documents, %v", file, len(docs), err)
	}
	return docs[0]
}

// TestCRDValidationAgainstServer sends each CRD of testdata/crdvalidation
// to the API server (kubectl create --dry-run=server, and the API for the
// causes one by one) and runs kubectl crd on its file: the server refuses
// exactly the CRDs kubectl crd refuses, with the same errors, and every
// error kubectl crd prints is in kubectl's own report of the refusal.
func TestCRDValidationAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	files, err := filepath.Glob(filepath.Join(repoRoot(), crdValidationDir, "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d cases in %s: %v", len(files), crdValidationDir, err)
	}
	dyn := dynamicClient(t)
	k := kubectls[0].Path
	const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
	refused := 0
	for _, abs := range files {
		file := filepath.ToSlash(filepath.Join(crdValidationDir, filepath.Base(abs)))
		t.Run(filepath.Base(file), func(t *testing.T) {
			x := NewTest(t)
			wantRefused := !strings.HasPrefix(filepath.Base(file), "valid")

			// The server, through kubectl and through the API.
			server := x.Run(k, "create", "--dry-run=server", "-f", file)
			if refusedByServer := server.Code != 0; refusedByServer != wantRefused {
				t.Fatalf("kubectl create --dry-run=server: exit %d (the case expects refused=%v):\n%s%s", server.Code, wantRefused, server.Stdout, server.Stderr)
			}
			if wantRefused {
				refused++
				if !strings.Contains(server.Stderr, " is invalid") {
					t.Fatalf("kubectl create: not a refusal by validation:\n%s", server.Stderr)
				}
			}
			d := readOneCRD(t, file)
			theirs, err := serverRefusal(context.Background(), dyn, d.Object)
			if err != nil {
				t.Fatalf("dry-run create: %v", err)
			}
			if (len(theirs) > 0) != wantRefused {
				t.Fatalf("dry-run create through the API: causes %q, kubectl says refused=%v", theirs, wantRefused)
			}

			// kubectl crd explain-structural: the same errors, each of them in kubectl's words of the refusal.
			ex := x.Run("kubectl-crd", "explain-structural", "-f", file, "-o", "json")
			var report invalidReport
			if err := json.Unmarshal([]byte(ex.Stdout), &report); err != nil || len(report.CRDs) != 1 {
				t.Fatalf("explain-structural: exit %d, %v\n%s%s", ex.Code, err, ex.Stdout, ex.Stderr)
			}
			ours := []string{}
			for _, e := range report.CRDs[0].Invalid {
				ours = append(ours, e.Message)
				if !strings.Contains(server.Stderr, e.Message) {
					t.Errorf("kubectl crd's error\n  %s\nis not in the server's refusal:\n%s", e.Message, server.Stderr)
				}
			}
			sort.Strings(ours)
			if diff := cmp.Diff(theirs, ours, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors (-server +kubectl crd):\n%s", diff)
			}
			if wantRefused && ex.Code != 1 {
				t.Errorf("explain-structural: exit %d, want 1", ex.Code)
			}

			// kubectl crd prune, the CRD among the inputs (about to be applied, it is
			// validated whatever the objects): an input error naming the file and line,
			// in the server's words. Given with --crd-file, an index, it is validated
			// only for the objects of its kinds: here, none, so that a refusal is a
			// warning, with the server's errors, and no other.
			ix := x.WithStdin(configMap).Run("kubectl-crd", "prune", "--offline", "--crd-file", file, "-f", "-")
			if ix.Code != 0 {
				t.Errorf("prune --crd-file, no object of its kinds: exit %d, want 0:\n%s", ix.Code, ix.Stderr)
			}
			const unused = "the API server would refuse this CRD, which no object of this run uses: "
			if got := strings.Count(ix.Stderr, unused); wantRefused != (got == 1) || got > 1 {
				t.Errorf("prune --crd-file, no object of its kinds: %d warnings of a refused CRD, want %v:\n%s", got, wantRefused, ix.Stderr)
			}
			// The server's errors as text prints them: escaped, a CEL compile error's
			// line breaks included.
			for _, m := range ours {
				if !strings.Contains(ix.Stderr, printable.Line(m)) {
					t.Errorf("prune --crd-file: the warning does not hold the server's error %q:\n%s", m, ix.Stderr)
				}
			}
			pr := x.WithStdin(configMap).Run("kubectl-crd", "prune", "--offline", "-f", file, "-f", "-")
			if !wantRefused {
				if pr.Code != 0 {
					t.Errorf("prune: exit %d, want 0:\n%s", pr.Code, pr.Stderr)
				}
				return
			}
			head := regexp.MustCompile(`^error: ` + regexp.QuoteMeta(file) + `:[0-9]+: CustomResourceDefinition (\S+ )?is invalid: `)
			if pr.Code != 2 || pr.Stdout != "" || !head.MatchString(pr.Stderr) {
				t.Errorf("prune: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %s", pr.Code, pr.Stdout, pr.Stderr, head)
			}
			for _, m := range ours {
				if !strings.Contains(pr.Stderr, printable.Line(m)) {
					t.Errorf("prune: stderr lacks %q:\n%s", m, pr.Stderr)
				}
			}
		})
	}
	if refused == 0 {
		t.Error("no case was refused")
	}
}

// TestCRDValidationLegacy: a v1beta1 file is validated as an unchanged
// write of the CRD it stands for. The test server holds such a CRD
// (testdata/legacy-crd.yaml, non-structural, written into etcd): the server
// accepts an unchanged write of it, and kubectl crd does not refuse its
// file. Two storage versions are refused by both.
func TestCRDValidationLegacy(t *testing.T) {
	requireOwnCluster(t)
	x := NewTest(t)
	k := kubectls[0].Path
	const file = "test/e2e/testdata/legacy-crd.yaml"

	get := x.Run(k, "get", "crd", "legacythings.example.com", "-o", "json")
	if get.Code != 0 {
		t.Fatalf("kubectl get: exit %d\n%s", get.Code, get.Stderr)
	}
	if r := NewTest(t).WithStdin(get.Stdout).Run(k, "replace", "--dry-run=server", "-f", "-"); r.Code != 0 {
		t.Errorf("the server refuses an unchanged write of the legacy CRD: exit %d\n%s", r.Code, r.Stderr)
	}
	ex := x.Run("kubectl-crd", "explain-structural", "-f", file, "-o", "json")
	var report invalidReport
	if err := json.Unmarshal([]byte(ex.Stdout), &report); err != nil || len(report.CRDs) != 1 {
		t.Fatalf("explain-structural: exit %d, %v\n%s", ex.Code, err, ex.Stderr)
	}
	if len(report.CRDs[0].Invalid) != 0 {
		t.Errorf("kubectl crd refuses the legacy CRD the server holds: %+v", report.CRDs[0].Invalid)
	}
	// Its object is checked, not refused; what fails the run by default is
	// the file's structural violations (NonStructural), as in the function.
	obj := "apiVersion: example.com/v1\nkind: LegacyThing\nmetadata: {name: l}\n"
	if pr := NewTest(t).WithStdin(obj).Run("kubectl-crd", "prune", "--offline", "--crd-file", file, "-f", "-"); pr.Code != 1 || strings.Count(pr.Stderr, "Error: ") != 4 || strings.Count(pr.Stderr, "is not structural") != 4 {
		t.Errorf("prune with the legacy CRD file: exit %d\n%s", pr.Code, pr.Stderr)
	}
	if pr := NewTest(t).WithStdin(obj).Run("kubectl-crd", "prune", "--offline", "--fail-on", "Invalid,Update,MissingCRD", "--crd-file", file, "-f", "-"); pr.Code != 0 {
		t.Errorf("prune with the legacy CRD file, NonStructural not failing the run: exit %d\n%s", pr.Code, pr.Stderr)
	}

	// The same CRD with a second storage version: the server refuses the write.
	var live map[string]interface{}
	if err := json.Unmarshal([]byte(get.Stdout), &live); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(live, "spec", "versions")
	v2 := runtime.DeepCopyJSONValue(versions[0]).(map[string]interface{})
	v2["name"] = "v2"
	if err := unstructured.SetNestedSlice(live, append(versions, v2), "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(live)
	server := NewTest(t).WithStdin(string(b)).Run(k, "replace", "--dry-run=server", "-f", "-")
	if server.Code == 0 {
		t.Fatalf("the server accepts two storage versions")
	}
	in := strings.Replace(string(mustRead(t, filepath.Join(repoRoot(), file))),
		"  versions:\n  - name: v1\n    served: true\n    storage: true\n",
		"  versions:\n  - name: v1\n    served: true\n    storage: true\n  - name: v2\n    served: true\n    storage: true\n", 1)
	ex = NewTest(t).WithStdin(in).Run("kubectl-crd", "explain-structural", "-f", "-", "-o", "json")
	report = invalidReport{}
	if err := json.Unmarshal([]byte(ex.Stdout), &report); err != nil || len(report.CRDs) != 1 {
		t.Fatalf("explain-structural: exit %d, %v\n%s", ex.Code, err, ex.Stderr)
	}
	found := false
	for _, e := range report.CRDs[0].Invalid {
		// The rendering of the versions differs (the live object has
		// fields the file lacks): the path and the words are compared.
		if e.Field == "spec.versions" {
			found = true
			if !strings.Contains(server.Stderr, "spec.versions: Invalid value: ") || !strings.Contains(server.Stderr, e.Detail) {
				t.Errorf("the server's refusal lacks spec.versions ... %q:\n%s", e.Detail, server.Stderr)
			}
		}
	}
	if !found {
		t.Errorf("kubectl crd does not refuse two storage versions in a v1beta1 file: %+v", report.CRDs[0].Invalid)
	}
}

// TestCRDValidationCorpus: every CRD of the public corpus. Each
// apiextensions.k8s.io/v1 one is sent to the server as a dry-run create:
// the server and the engine agree on it, error for error. The v1beta1 ones,
// which the server no longer creates, are not refused (they are old
// releases of real projects, stored as such in the clusters of their day).
func TestCRDValidationCorpus(t *testing.T) {
	corpusSweep(t)
	dir := corpus.Dir(t)
	dyn := dynamicClient(t)
	ctx := context.Background()
	start := time.Now()
	var v1, v1beta1, refused int
	for _, f := range corpus.CRDFiles(t, dir) {
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			continue
		}
		for _, d := range docs {
			c, ok, err := schema.DecodeObject(d.Object, strategy.Validators{})
			if !ok || err != nil {
				continue // not a CRD; decoding is compared by the engine's corpus test
			}
			ours := ourRefusal(c)
			if d.Object["apiVersion"] != "apiextensions.k8s.io/v1" {
				v1beta1++
				if len(ours) > 0 {
					t.Errorf("%s: kubectl crd refuses a legacy CRD: %q", d.Source, ours)
				}
				continue
			}
			v1++
			theirs, err := serverRefusal(ctx, dyn, d.Object)
			if err != nil {
				t.Errorf("%s: dry-run create: %v", d.Source, err)
				continue
			}
			if len(theirs) > 0 {
				refused++
				t.Logf("%s: the server refuses it (%d errors)", d.Source, len(theirs))
			}
			if diff := cmp.Diff(theirs, ours, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: errors (-server +kubectl crd):\n%s", d.Source, diff)
			}
		}
	}
	t.Logf("%d apiextensions.k8s.io/v1 CRDs sent to the server (%d refused), %d v1beta1 CRDs checked, in %v", v1, refused, v1beta1, time.Since(start).Round(time.Second))
	if v1 == 0 {
		t.Error("no CRD was compared")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
