package crdtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// shortNameSuite: the k8s-short-name format is checked by the servers of
// 1.35 on (written in 1.34); older ones create an object whatever the
// field holds. The case expects the refusal, but of 1.31 the create.
const shortNameSuite = `crds: crd.yaml
cases:
- name: an uppercase name
  object:
    apiVersion: example.com/v1
    kind: Widget
    metadata: {name: w, namespace: default}
    spec: {short: Not-Short}
  expect:
    result: refused
    errors:
    - field: spec.short
  expectByVersion:
    "1.31": allowed
`

const shortNameCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
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
              short: {type: string, format: k8s-short-name}
`

// A case expects of each minor what its expectByVersion says of it, else
// its expect; the run as each minor answers, its report naming the minor.
func TestExpectByVersion(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	dir := t.TempDir()
	for name, text := range map[string]string{"crd.yaml": shortNameCRD, "s.test.yaml": shortNameSuite} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	suites, err := ReadFile(filepath.Join(dir, "s.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		minor    kubeversion.Minor
		observed Result
		pass     bool
	}{
		{31, Allowed, true},  // expectByVersion's
		{34, Allowed, false}, // expect's: 1.34 does not check the format yet
		{35, Refused, true},
		{37, Refused, true},
	} {
		var results []*SuiteResult
		err := kubeversion.Each([]kubeversion.Minor{tc.minor}, func(m kubeversion.Minor) error {
			r := NewRunner(Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}, Minor: m})
			res, err := r.Run(context.Background(), suites[0])
			results = append(results, res)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.minor, err)
		}
		rep := Summarize(results)
		c := rep.Cases[0]
		if c.Observed.Result != tc.observed || c.Pass != tc.pass || c.KubeVersion != tc.minor.String() || c.Unexpected {
			t.Errorf("%s: observed %s, pass %v (%v), kubeVersion %q; want %s, pass %v", tc.minor, c.Observed.Result, c.Pass, c.Mismatches, c.KubeVersion, tc.observed, tc.pass)
		}
	}
}

// expectByVersion's keys are minors answered, each once; an error names
// the line.
func TestExpectByVersionErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(shortNameCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	for bad, want := range map[string]string{
		`"1.30": allowed`:                       `s.test.yaml:14: cases[0].expectByVersion.1.30: Kubernetes 1.30 is not answered: the versions answered are 1.31 to 1.37`,
		`latest: allowed`:                       `s.test.yaml:14: cases[0].expectByVersion.latest: "latest" is not a Kubernetes version (1.N, as 1.31)`,
		"\"1.31\": allowed\n    v1.31: refused": `Kubernetes 1.31 already has an expectation`,
		`"1.31": maybe`:                         `s.test.yaml:14: cases[0].expectByVersion.1.31: expected allowed or refused, not "maybe"`,
	} {
		suite := strings.Replace(shortNameSuite, `"1.31": allowed`, bad, 1)
		name := filepath.Join(dir, "s.test.yaml")
		if err := os.WriteFile(name, []byte(suite), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
}
