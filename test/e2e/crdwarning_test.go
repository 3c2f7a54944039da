package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// warnedCRD is a CRD the API server accepts with warnings: a format it does
// not know, a list-type set of objects.
const warnedCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: warnedwidgets.warnings.example.com
spec:
  group: warnings.example.com
  names: {plural: warnedwidgets, singular: warnedwidget, kind: WarnedWidget, listKind: WarnedWidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, format: uint}
              ports:
                type: array
                x-kubernetes-list-type: set
                items: {type: object, x-kubernetes-map-type: atomic, properties: {port: {type: integer}}}
`

const warnedWidget = `apiVersion: warnings.example.com/v1
kind: WarnedWidget
metadata:
  name: w
  namespace: default
spec:
  replicas: 3
`

// legacyCRD is a structural CRD in apiextensions.k8s.io/v1beta1.
const legacyCRD = `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: oldwidgets.warnings.example.com
spec:
  group: warnings.example.com
  names: {plural: oldwidgets, kind: OldWidget}
  scope: Namespaced
  version: v1
  preserveUnknownFields: false
  validation:
    openAPIV3Schema:
      type: object
      properties:
        spec: {type: object, properties: {size: {type: integer}}}
`

// serverWarnings are the "Warning: " lines kubectl prints, without the prefix.
func serverWarnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if w, ok := strings.CutPrefix(l, "Warning: "); ok {
			out = append(out, w)
		}
	}
	return out
}

// TestCRDWarningsAsTheServer creates a CRD with kubectl against the API
// server (a server-side dry run), which warns of it; every command of
// kubectl crd that reads the CRD passes each warning on, in the server's
// words, naming the CRD and its line, and exits as without them.
func TestCRDWarningsAsTheServer(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"crd.yaml": warnedCRD, "widget.yaml": warnedWidget, "both.yaml": warnedCRD + "---\n" + warnedWidget} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x := NewTest(t).WithDir(dir)
	r := x.Run(kubectls[0].Path, "create", "--dry-run=server", "-f", "crd.yaml")
	server := serverWarnings(r.Stderr)
	if r.Code != 0 || len(server) < 2 {
		t.Fatalf("kubectl create: exit %d, want the CRD accepted with two warnings:\n%s", r.Code, r.Stderr)
	}
	t.Logf("the server's warnings: %q", server)

	const ref = "CustomResourceDefinition warnedwidgets.warnings.example.com"
	for _, tc := range []struct {
		name string
		args []string
		line string // where the CRD is
	}{
		{"explain-structural", []string{"explain-structural", "-f", "crd.yaml"}, "crd.yaml:1"},
		{"explain-structural -o json", []string{"explain-structural", "-f", "crd.yaml", "-o", "json"}, "crd.yaml:1"},
		{"prune, the CRD in -f", []string{"prune", "--offline", "-f", "both.yaml"}, "both.yaml:1"},
		{"prune --crd-file", []string{"prune", "--offline", "--crd-file", "crd.yaml", "-f", "widget.yaml"}, "crd.yaml:1"},
		{"check-update --crd-file", []string{"check-update", "--offline", "--crd-file", "crd.yaml", "--old", "widget.yaml", "-f", "widget.yaml"}, "crd.yaml:1"},
		{"check-update, the CRD in -f", []string{"check-update", "--offline", "--old", "widget.yaml", "-f", "both.yaml"}, "both.yaml:1"},
		{"lower-mutability", []string{"lower-mutability", "-f", "crd.yaml"}, "crd.yaml:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := x.Run("kubectl-crd", tc.args...)
			if r.Code != 0 {
				t.Errorf("exit %d, want 0: warnings fail nothing\n%s", r.Code, r.Stderr)
			}
			for _, w := range server {
				if want := "Warning: " + ref + ": " + w + " (" + tc.line + ")\n"; strings.Count(r.Stderr, want) != 1 {
					t.Errorf("stderr does not have once\n  %s\nit is:\n%s", want, r.Stderr)
				}
			}
		})
	}

	// The function: results of warning severity, an error with failOn.
	for _, failOn := range []string{"", "failOn: [CRDWarning]\n"} {
		list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: crd.kubectl.dev/v1alpha1\n  kind: CRDCheck\n  metadata: {name: check}\n" +
			indentLines(failOn, "  ") + "items:\n" + indentLines("- "+strings.ReplaceAll(strings.TrimSuffix(warnedCRD, "\n"), "\n", "\n  ")+"\n", "")
		r := NewTest(t).WithStdin(list).Run("kubectl-crd", "krm")
		wantCode := 0
		if failOn != "" {
			wantCode = 1
		}
		if r.Code != wantCode {
			t.Errorf("krm %q: exit %d, want %d\n%s%s", failOn, r.Code, wantCode, r.Stdout, r.Stderr)
		}
		for _, w := range server {
			if !strings.Contains(r.Stdout, ref+": "+w) {
				t.Errorf("krm %q: the results lack %q:\n%s", failOn, w, r.Stdout)
			}
		}
	}
}

func indentLines(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// A CRD in apiextensions.k8s.io/v1beta1: the API server does not serve
// the version at all, and kubectl crd says so and what to do, beyond
// whether the schema is structural; the exit code is unchanged.
func TestV1beta1CRDNotServed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "legacy.yaml"), []byte(legacyCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	x := NewTest(t).WithDir(dir)
	r := x.Run(kubectls[0].Path, "apply", "--dry-run=server", "-f", "legacy.yaml")
	if r.Code == 0 || !strings.Contains(r.Stderr, `no matches for kind "CustomResourceDefinition" in version "apiextensions.k8s.io/v1beta1"`) {
		t.Fatalf("kubectl apply: exit %d, want the version unknown to the server:\n%s", r.Code, r.Stderr)
	}

	r = x.Run("kubectl-crd", "explain-structural", "-f", "legacy.yaml")
	if r.Code != 0 {
		t.Errorf("explain-structural: exit %d, want 0 (structural)\n%s", r.Code, r.Stderr)
	}
	header, _, _ := strings.Cut(r.Stdout, "\n")
	if !strings.Contains(header, "structural, in apiextensions.k8s.io/v1beta1, which no API server serves since Kubernetes 1.22") {
		t.Errorf("explain-structural: the verdict does not say the version is not served:\n%s", header)
	}
	for _, words := range []string{
		"Warning: CustomResourceDefinition oldwidgets.warnings.example.com: apiextensions.k8s.io/v1beta1 is served by no API server since Kubernetes 1.22, so this file cannot be applied",
		"Write it in apiextensions.k8s.io/v1", "(legacy.yaml:1)",
	} {
		if !strings.Contains(r.Stderr, words) {
			t.Errorf("explain-structural: stderr lacks %q:\n%s", words, r.Stderr)
		}
	}
	r = x.Run("kubectl-crd", "prune", "--offline", "-f", "legacy.yaml")
	if r.Code != 0 || !strings.Contains(r.Stderr, "Warning: CustomResourceDefinition oldwidgets.warnings.example.com: apiextensions.k8s.io/v1beta1 is served by no API server") {
		t.Errorf("prune: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
}

// TestCRDWarningsCorpus sends every apiextensions.k8s.io/v1 CRD of the
// corpus the server accepts to it, a dry-run create: the warnings it
// returns are those of the engine, word for word.
func TestCRDWarningsCorpus(t *testing.T) {
	corpusSweep(t)
	dir := corpus.Dir(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	warnings := &warningCollector{}
	cfg.WarningHandler = warnings
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx := context.Background()
	var compared, warned int
	for _, f := range corpus.CRDFiles(t, dir) {
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			continue
		}
		for _, d := range docs {
			c, ok, err := schema.DecodeObject(d.Object, strategy.Validators{})
			if !ok || err != nil || d.Object["apiVersion"] != "apiextensions.k8s.io/v1" || len(c.Invalid()) > 0 {
				continue
			}
			theirs, err := serverWarningsOnCreate(ctx, dyn, warnings, d.Object)
			if err != nil {
				continue // taken by another test, or refused: TestCRDValidationCorpus compares refusals
			}
			compared++
			if len(theirs) > 0 {
				warned++
			}
			if diff := cmp.Diff(theirs, c.Warnings(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: warnings (-server +kubectl crd):\n%s", d.Source, diff)
			}
		}
	}
	t.Logf("%d CRDs compared, %d of them with warnings", compared, warned)
	if compared == 0 || warned == 0 {
		t.Errorf("%d CRDs compared, %d with warnings: the corpus does not test the warnings", compared, warned)
	}
}

// serverWarningsOnCreate creates obj with dryRun=All and returns the
// warnings of the response, sorted, each once (kubectl prints them so).
func serverWarningsOnCreate(ctx context.Context, dyn dynamic.Interface, warnings *warningCollector, obj map[string]interface{}) ([]string, error) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	warnings.take()
	_, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Ignore"})
	out := warnings.take()
	slices.Sort(out)
	return slices.Compact(out), err
}

var _ rest.WarningHandler = (*warningCollector)(nil)
