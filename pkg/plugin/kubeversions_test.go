package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

func TestParseKubeVersions(t *testing.T) {
	for in, want := range map[string]string{
		"1.31,1.37":            "[1.31 1.37]",
		"1.31-1.33":            "[1.31 1.32 1.33]",
		"1.35, 1.31-1.32,1.32": "[1.31 1.32 1.35]",
		"v1.34.1-eks-1234":     "[1.34]",
		"1.36":                 "[1.36]",
		"1.31-1.31":            "[1.31]",
	} {
		got, err := parseKubeVersions(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("%q: %v, %v; want %s", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"1.30,1.31": "Kubernetes 1.30 is not answered",
		"1.37-1.31": `the range "1.37-1.31" goes down`,
		"1.31-1.38": "Kubernetes 1.38 is not answered",
		"1.31,":     `"" is not a Kubernetes version`,
		"latest":    `"latest" is not a Kubernetes version`,
	} {
		if _, err := parseKubeVersions(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// shortNameTest is a suite whose case the servers of 1.35 on refuse (the
// k8s-short-name format, written in 1.34), older ones allow: its expect
// says the refusal, its expectByVersion 1.31's create.
func shortNameTest(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	crd := strings.Replace(formatCRD, "host: {type: string, maxLength: 63}\n            x-kubernetes-validations:\n            - rule: \"!has(self.host) || !format.dns1123Label().validate(self.host).hasValue()\"\n",
		"host: {type: string, format: k8s-short-name}\n", 1)
	suite := `crds: crd.yaml
cases:
- name: an uppercase host
  object: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: ops}, spec: {host: Not-Short}}
  expect: refused
  expectByVersion:
    "1.31": allowed
`
	for name, text := range map[string]string{"crd.yaml": crd, "s.test.yaml": suite} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.test.yaml")
}

// test --kube-version: the suites per minor, a case's expectation per
// minor, every result naming its minor (text, JSON, JUnit); the run fails
// when a case fails on any minor; the minor of the linked code answers
// again afterwards.
func TestCRDTestKubeVersions(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	suite := shortNameTest(t)
	src := suite + ":3 an uppercase host"
	r := run(t, "", "test", "--kube-version", "1.31,1.34-1.35", suite)
	want := "PASS " + src + " on 1.31 (allowed)\nFAIL " + src + " on 1.34 (allowed)\n    expected refused, observed allowed\n" +
		"PASS " + src + " on 1.35 (refused)\non Kubernetes 1.31, 1.34, 1.35: 2 passed, 1 failed, 0 without expectation\n"
	if r.code != ExitFindings || r.stdout != want || strings.Count(r.stderr, "Note: the answers of kube-apiserver 1.3") != 3 {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1, stdout:\n%s", r.code, r.stdout, r.stderr, want)
	}
	if got := kubeversion.Current().Minor; got != kubeversion.Embedded {
		t.Errorf("afterwards %s answers", got)
	}
	for _, v := range []string{"1.31,1.37", "1.35-1.37"} {
		if r := run(t, "", "test", "--kube-version", v, suite); r.code != ExitOK {
			t.Errorf("%s: exit %d:\n%s", v, r.code, r.stdout)
		}
	}
	// One minor, or none: the text as before the flag.
	if r := run(t, "", "test", "--kube-version", "1.31", suite); r.code != ExitOK || r.stdout != "PASS "+src+" (allowed)\n1 passed, 0 failed, 0 without expectation\n" {
		t.Errorf("1.31 alone: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	if r := run(t, "", "test", suite); r.code != ExitOK || r.stdout != "PASS "+src+" (refused)\n1 passed, 0 failed, 0 without expectation\n" || r.stderr != "" {
		t.Errorf("no --kube-version: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	junit := run(t, "", "test", "--kube-version", "1.31,1.34", "-o", "junit", suite)
	if !strings.Contains(junit.stdout, `<testcase name="an uppercase host (1.31)"`) || !strings.Contains(junit.stdout, `<testcase name="an uppercase host (1.34)"`) || junit.code != ExitFindings {
		t.Errorf("-o junit: exit %d:\n%s", junit.code, junit.stdout)
	}
	sarif := run(t, "", "test", "--kube-version", "1.31,1.34", "-o", "sarif", suite)
	if !strings.Contains(sarif.stdout, `"name": "an uppercase host (1.34)"`) || !strings.Contains(sarif.stdout, `"text": "an uppercase host (1.34): expected refused, observed allowed`) {
		t.Errorf("-o sarif: exit %d:\n%s", sarif.code, sarif.stdout)
	}
	js := run(t, "", "test", "--kube-version", "1.31,1.37", "-o", "json", suite)
	var rep struct {
		Cases []struct{ KubeVersion string }
	}
	if err := json.Unmarshal([]byte(js.stdout), &rep); err != nil || len(rep.Cases) != 2 || rep.Cases[0].KubeVersion != "1.31" || rep.Cases[1].KubeVersion != "1.37" {
		t.Errorf("-o json: %v, %+v:\n%s", err, rep, js.stdout)
	}
}

// A minor not answered, a range upside down, --record of several minors:
// usage errors; a suite's CRD one minor refuses: an input error naming it.
func TestCRDTestKubeVersionsErrors(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	suite := shortNameTest(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kube-version", "1.30,1.31"}, "error: --kube-version: Kubernetes 1.30 is not answered: the versions answered are 1.31 to 1.37\n"},
		{[]string{"--kube-version", "1.37-1.31"}, "error: --kube-version: the range \"1.37-1.31\" goes down: write it oldest first, 1.31-1.37\n"},
		{[]string{"--kube-version", "1.31,1.37", "--record"}, "error: --record writes what one Kubernetes minor observed: give --kube-version one minor\n"},
	} {
		r := run(t, "", append(append([]string{"test"}, tc.args...), suite)...)
		if r.code != ExitInput || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	dir := filepath.Dir(suite)
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(formatCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "test", "--kube-version", "1.31,1.37", suite)
	if r.code != ExitInput || !strings.Contains(r.stderr, refusedFormat) || !strings.HasSuffix(r.stderr, " (on Kubernetes 1.31)\n") {
		t.Errorf("a CRD 1.31 refuses: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
