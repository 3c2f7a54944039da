package plugin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// semverCRD uses the CEL semver library, which the server accepts from
// Kubernetes 1.34 on.
var semverCRD = strings.Replace(formatCRD, `"!has(self.host) || !format.dns1123Label().validate(self.host).hasValue()"`, `"!has(self.host) || isSemver(self.host)"`, 1)

// --min-kube-version: per CRD, the oldest minor whose server accepts it
// and each older minor's first reason, in text and JSON; the exit code
// and the run's own minor's verdict as without it; the run's minor
// answers again afterwards.
func TestMinKubeVersion(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	for _, tc := range []struct {
		crd, lowest, reason string
		refusedBy           []string
	}{
		{formatCRD, "1.32", refusedFormat, []string{"1.31"}},
		{semverCRD, "1.34", "undeclared reference to 'isSemver'", []string{"1.31", "1.32", "1.33"}},
	} {
		crd := writeFile(t, "crd.yaml", tc.crd)
		text := run(t, "", "explain-structural", "-f", crd, "--min-kube-version")
		lines := strings.Split(text.stdout, "\n")
		if text.code != ExitOK || len(lines) < 2+len(tc.refusedBy) || lines[1] != "  accepted from Kubernetes "+tc.lowest+" on" {
			t.Fatalf("%s: exit %d, stdout:\n%s\nstderr:\n%s", tc.lowest, text.code, text.stdout, text.stderr)
		}
		for i, v := range tc.refusedBy {
			if l := lines[2+i]; !strings.HasPrefix(l, "    "+v+": ") || !strings.Contains(l, tc.reason) {
				t.Errorf("%s: line %q, want %s's reason %q", tc.lowest, l, v, tc.reason)
			}
		}
		js := run(t, "", "explain-structural", "-f", crd, "--min-kube-version", "-o", "json")
		var rep struct {
			CRDs []struct {
				MinKubeVersion string
				RefusedBy      []minorRefusal
			}
		}
		if err := json.Unmarshal([]byte(js.stdout), &rep); err != nil || js.code != ExitOK || len(rep.CRDs) != 1 {
			t.Fatalf("%s: -o json: exit %d, %v:\n%s", tc.lowest, js.code, err, js.stdout)
		}
		got := rep.CRDs[0]
		if got.MinKubeVersion != tc.lowest || len(got.RefusedBy) != len(tc.refusedBy) {
			t.Errorf("%s: -o json: %+v, want minKubeVersion %s refused by %v", tc.lowest, got, tc.lowest, tc.refusedBy)
		}
		for i, r := range got.RefusedBy {
			if i < len(tc.refusedBy) && (r.Version != tc.refusedBy[i] || !strings.Contains(r.Reason, tc.reason)) {
				t.Errorf("%s: -o json: refused by %+v, want %s for %q", tc.lowest, r, tc.refusedBy[i], tc.reason)
			}
		}
		// For CI, a note: it fails nothing.
		gh := run(t, "", "explain-structural", "-f", crd, "--min-kube-version", "-o", "github")
		if gh.code != ExitOK || !strings.Contains(gh.stdout, "::notice ") || !strings.Contains(gh.stdout, "::accepted from Kubernetes "+tc.lowest+" on; "+tc.refusedBy[0]+": ") {
			t.Errorf("%s: -o github: exit %d:\n%s", tc.lowest, gh.code, gh.stdout)
		}
		// The run's own minor refuses it (exit 1, as without the flag), then
		// answers again: an older minor has no say in its verdict.
		old := run(t, "", "explain-structural", "-f", crd, "--min-kube-version", "--kube-version", "1.31")
		if old.code != ExitFindings || !strings.Contains(old.stdout, "the API server refuses it") || !strings.Contains(old.stdout, "accepted from Kubernetes "+tc.lowest+" on") {
			t.Errorf("%s on 1.31: exit %d, stdout:\n%s", tc.lowest, old.code, old.stdout)
		}
		if got := kubeversion.Current().Minor; got != 31 {
			t.Errorf("%s: after a run on 1.31, %s answers", tc.lowest, got)
		}
	}
	plain := run(t, "", "explain-structural", "-f", writeFile(t, "crd.yaml", formatCRD), "-o", "json")
	if strings.Contains(plain.stdout, "minKubeVersion") || strings.Contains(plain.stdout, "refusedBy") {
		t.Errorf("without --min-kube-version:\n%s", plain.stdout)
	}
}

// A CRD no supported minor accepts fails the run as the run's own minor's
// refusal does; one every minor accepts says so.
func TestMinKubeVersionNone(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	never := strings.Replace(formatCRD, "format.dns1123Label().validate(self.host).hasValue()", "self.host.noSuchFunction()", 1)
	r := run(t, "", "explain-structural", "-f", writeFile(t, "crd.yaml", never), "--min-kube-version")
	if r.code != ExitFindings || !strings.Contains(r.stdout, "\n  refused by every Kubernetes version answered (1.31 to 1.37)\n    1.31: ") ||
		strings.Count(r.stdout, "undeclared reference to 'noSuchFunction'") != 8 {
		t.Errorf("refused by all: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	always := strings.Replace(formatCRD, "!format.dns1123Label().validate(self.host).hasValue()", "self.host.size() > 0", 1)
	r = run(t, "", "explain-structural", "-f", writeFile(t, "crd.yaml", always), "--min-kube-version", "-o", "json")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"minKubeVersion": "1.31",`) || strings.Contains(r.stdout, "refusedBy") {
		t.Errorf("accepted by all: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// A CRD of the cluster is asked as a create of it anew, by every minor.
func TestMinKubeVersionLive(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(formatCRD), &crd); err != nil {
		t.Fatal(err)
	}
	crd.ResourceVersion, crd.UID = "42", "8f4b"
	crd.Status.AcceptedNames = crd.Spec.Names
	crd.Status.StoredVersions = []string{"v1"}
	list := apiextensionsv1.CustomResourceDefinitionList{Items: []apiextensionsv1.CustomResourceDefinition{crd}}
	list.APIVersion, list.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinitionList"
	answers := map[string]interface{}{
		"/version": &apimachineryversion.Info{Major: "1", Minor: "33", GitVersion: "v1.33.5"},
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions": &list,
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a, ok := answers[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(s.Close)
	r := run(t, "", "--kubeconfig", writeKubeconfig(t, s.URL), "explain-structural", "--all", "--min-kube-version")
	if r.code != ExitOK || !strings.Contains(r.stdout, ": structural\n  accepted from Kubernetes 1.32 on\n    1.31: ") || !strings.Contains(r.stdout, refusedFormat) {
		t.Errorf("live: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := kubeversion.Current().Minor; got != 33 {
		t.Errorf("after a run on a 1.33 cluster, %s answers", got)
	}
}
