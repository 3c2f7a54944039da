package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
)

const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: as.example.com\n"

// A document that is not a CRD is blanked line for line: the CRDs stay
// at their lines of the rendered file; a file without a CRD is dropped.
func TestOnlyCRDs(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\n" + crd + "--- # next\nkind: Service\n"
	got, ok := onlyCRDs([]byte(in))
	want := "\n\n\n\n---\n" + crd + "--- # next\n\n"
	if !ok || string(got) != want {
		t.Errorf("onlyCRDs = %v %q, want %q", ok, got, want)
	}
	if _, ok := onlyCRDs([]byte("kind: ConfigMap\n")); ok {
		t.Errorf("a file without a CRD is kept")
	}
}

// render writes crds/ and the templates holding CRDs, gated by a value;
// another build is refused.
func TestRender(t *testing.T) {
	chart := t.TempDir()
	for p, data := range map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"values.yaml":         "on: false\n",
		"crds/a.yaml":         crd,
		"templates/b.yaml":    "{{- if .Values.on }}\n" + strings.ReplaceAll(crd, "as.", "bs.") + "{{- end }}\n",
		"templates/none.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
	} {
		if err := os.MkdirAll(filepath.Join(chart, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chart, p), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	names := func(set ...string) []string {
		args := []string{"render", "--build", buildinfo.Version(), "--chart", chart, "--out", t.TempDir()}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("render: exit %d: %s", code, errb.String())
		}
		var res result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, f := range res.Files {
			n = append(n, f.Name)
		}
		return n
	}
	if got := strings.Join(names(), ","); got != "crds/a.yaml" {
		t.Errorf("defaults: %s", got)
	}
	if got := strings.Join(names("on=true"), ","); got != "crds/a.yaml,templates/b.yaml" {
		t.Errorf("on=true: %s", got)
	}
	var errb bytes.Buffer
	if code := run([]string{"render", "--build", "other", "--chart", chart, "--out", t.TempDir()}, &bytes.Buffer{}, &errb); code != exitInput || !strings.Contains(errb.String(), "install both from the same release") {
		t.Errorf("another build: exit %d: %s", code, errb.String())
	}
}
