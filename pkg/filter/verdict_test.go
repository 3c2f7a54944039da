package filter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// operationsCRD defines Job in operations.example.com, served in v1 and
// stored in v2 through a conversion webhook.
const operationsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: jobs.operations.example.com}
spec:
  group: operations.example.com
  names: {kind: Job, plural: jobs, singular: job, listKind: JobList} # as the server stores them
  scope: Namespaced
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "https://example.com/convert"}
  versions:
  - name: v1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
  - name: v2
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`

// runFunction runs the function over items with config: its results as
// resultLine lines, and whether they fail the run.
func runResults(t *testing.T, config string, items ...string) (lines []string, failed bool) {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(strings.Join(items, "\n---\n"))}).Read()
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{Items: nodes}
	if rl.FunctionConfig, err = yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nmetadata: {name: check}\n" + config); err != nil {
		t.Fatal(err)
	}
	perr := (Processor{}).Process(rl)
	var results framework.Results
	if perr != nil && !errors.As(perr, &results) {
		t.Fatal(perr)
	}
	for _, r := range findingResults(t, rl.Results) {
		lines = append(lines, resultLine(r))
	}
	return lines, perr != nil
}

// The function shows every finding of the verdict, the notes on what is
// not computed included: an object stored through a conversion webhook is
// a warning, as the plugin prints it.
func TestFunctionReportsStorageUnchecked(t *testing.T) {
	job := "apiVersion: operations.example.com/v1\nkind: Job\nmetadata: {name: nightly, namespace: ops}\nspec: {size: 3}\n"
	got, failed := runResults(t, "", operationsCRD, job)
	want := []string{"[warning] Job ops/nightly: stored as v2 through the CRD's conversion webhook: what that version keeps is not checked"}
	if d := cmp.Diff(want, got); d != "" || failed {
		t.Errorf("results (-want +got):\n%s\nfailed: %v", d, failed)
	}
}

// A typo in an object's group leaves it of a kind nothing defines: by
// default an error, so that the gate fails closed; ignoreMissingCRDs (or a
// failOn without MissingCRD) lets it through with the warning.
func TestFunctionMissingCRDFailsClosed(t *testing.T) {
	typo := "apiVersion: operatons.example.com/v1\nkind: Job\nmetadata: {name: nightly, namespace: ops}\nspec: {size: 3}\n"
	const msg = "Job ops/nightly: no CustomResourceDefinition for operatons.example.com/v1, kind Job: not checked"
	for _, tc := range []struct {
		config string
		want   string
		fails  bool
	}{
		{config: "", want: "[error] " + msg, fails: true},
		{config: "ignoreMissingCRDs: true\n", want: "[warning] " + msg},
		{config: "failOn: [Invalid]\n", want: "[warning] " + msg},
		{config: "failOn: [MissingCRD]\nignoreMissingCRDs: true\n", want: "[warning] " + msg},
	} {
		got, failed := runResults(t, tc.config, operationsCRD, typo)
		if d := cmp.Diff([]string{tc.want}, got); d != "" || failed != tc.fails {
			t.Errorf("config %q: results (-want +got):\n%s\nfailed: %v, want %v", tc.config, d, failed, tc.fails)
		}
	}
	// A built-in kind needs no CRD.
	if got, failed := runResults(t, "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"); len(got) != 0 || failed {
		t.Errorf("a ConfigMap: %v, failed %v", got, failed)
	}
}

// crdPaths are an index: a CRD there that the server would refuse fails the
// run only when an item is of its kind, and is else a warning.
func TestCRDPathsRefusedOnlyWhenUsed(t *testing.T) {
	t.Chdir("testdata/invalid-crd-path")
	config := "crdPaths: crds/\n"
	job := "apiVersion: operations.example.com/v1\nkind: Job\nmetadata: {name: nightly, namespace: ops}\nspec: {size: 3}\n"
	got, failed := runResults(t, config, operationsCRD, job)
	warning := "[warning] CustomResourceDefinition gizmos.example.com: " +
		"the API server would refuse this CRD, which no object of this run uses: CustomResourceDefinition gizmos.example.com is invalid: "
	if failed || len(got) == 0 || !strings.HasPrefix(got[0], warning) || strings.Count(strings.Join(got, "\n"), "would refuse") != 1 {
		t.Errorf("no Gizmo among the items: failed %v, results:\n%s\nwant the warning %q first", failed, strings.Join(got, "\n"), warning)
	}
	gizmo := "apiVersion: example.com/v2\nkind: Gizmo\nmetadata: {name: g}\nspec: {size: 1}\n"
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(gizmo)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{Items: nodes}
	if rl.FunctionConfig, err = yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\n" + config); err != nil {
		t.Fatal(err)
	}
	if err := (Processor{}).Process(rl); err == nil || !strings.HasPrefix(err.Error(), "crdPaths: crds/gizmo.yaml:2: CustomResourceDefinition gizmos.example.com is invalid") {
		t.Errorf("a Gizmo among the items: error %v", err)
	}
}
