package plugin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

const (
	goodDeployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: good}\n"
	typoKind       = "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: typo}\n"
	noSuchVersion  = "apiVersion: apps/v1beta7\nkind: Deployment\nmetadata: {name: no-such-version}\n"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Offline, a kind of a built-in group that Kubernetes does not have is an
// input error, as kubectl refuses it; prune and check-update alike.
func TestBuiltinKindsOffline(t *testing.T) {
	bad := writeFile(t, "bad.yaml", goodDeployment+"---\n"+typoKind+"---\n"+noSuchVersion)
	want := "error: " + bad + `:5: Deploymnet typo: no matches for kind "Deploymnet" in version "apps/v1": not a built-in type of Kubernetes 1.37 (checked offline)
error: ` + bad + `:9: Deployment no-such-version: no matches for kind "Deployment" in version "apps/v1beta7": not a built-in type of Kubernetes 1.37 (checked offline); Kubernetes 1.37 has Deployment in apps/v1
`
	for _, args := range [][]string{
		{"prune", "--offline", "-f", bad},
		{"check-update", "--offline", "--old", bad, "-f", bad},
	} {
		r := run(t, "", args...)
		if r.code != ExitInput || r.stdout != "" || r.stderr != want {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 2, stderr:\n%s", args[0], r.code, r.stdout, r.stderr, want)
		}
	}

	// Known built-in kinds, Lists and the CRD kind pass as before.
	good := writeFile(t, "good.yaml", goodDeployment+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: List\nitems: []\n")
	r := run(t, "", "prune", "--offline", "-f", good)
	if r.code != ExitOK || strings.Contains(r.stderr, "no matches") {
		t.Errorf("prune: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = run(t, "", "check-update", "--offline", "--old", good, "-f", good)
	if r.code != ExitOK || r.stderr != "" {
		t.Errorf("check-update: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// The CRD: only what the server stores of it, warnings.
	r = run(t, "", "prune", "--offline", "-f", exampleCRD)
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if !strings.HasPrefix(l, "Warning: CustomResourceDefinition ") {
			t.Errorf("the CRD: %q", l)
		}
	}
	if r.code != ExitOK {
		t.Errorf("the CRD: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// discoveryServer answers discovery as a Kubernetes 1.37 cluster serving v1
// ConfigMap and apps/v1 Deployment, and nothing else.
func discoveryServer(t *testing.T) *httptest.Server {
	return discoveryServerAt(t, &apimachineryversion.Info{Major: "1", Minor: "37", GitVersion: "v1.37.2"})
}

// discoveryServerAt is discoveryServer, of the version v.
func discoveryServerAt(t *testing.T, v *apimachineryversion.Info) *httptest.Server {
	t.Helper()
	answers := map[string]interface{}{
		"/version": v,
		"/api":     &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
		"/apis": &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{{
			Name:             "apps",
			Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}},
			PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"},
		}}},
		"/api/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get", "create"}},
		}},
		"/apis/apps/v1": &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Namespaced: true, Kind: "Deployment", Verbs: metav1.Verbs{"get", "create"}},
			{Name: "deployments/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: metav1.Verbs{"get"}},
		}},
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
	return s
}

// Live, the cluster's discovery decides, as it does for kubectl: what it
// serves passes, other kinds and versions are input errors.
func TestBuiltinKindsLive(t *testing.T) {
	s := discoveryServer(t)
	kc := writeKubeconfig(t, s.URL)
	cache := t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	r := run(t, goodDeployment+"---\n"+cm, "--kubeconfig", kc, "--cache-dir", cache, "prune", "-f", "-")
	if r.code != ExitOK || r.stderr != "" || r.stdout != goodDeployment+"---\n"+cm {
		t.Errorf("served: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// A kind the built-in types have, but the cluster does not serve, is refused too.
	namespace := "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n"
	scale := "apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: s}\n"
	in := typoKind + "---\n" + noSuchVersion + "---\n" + namespace + "---\n" + scale
	where := s.URL + ` (context "ctx")`
	want := `error: -:1: Deploymnet typo: no matches for kind "Deploymnet" in version "apps/v1": not served by ` + where + `
error: -:5: Deployment no-such-version: no matches for kind "Deployment" in version "apps/v1beta7": not served by ` + where + `
error: -:9: Namespace ns: no matches for kind "Namespace" in version "v1": not served by ` + where + `
error: -:13: Scale s: no matches for kind "Scale" in version "autoscaling/v1": not served by ` + where + `
`
	for _, cmd := range []string{"prune", "check-update"} {
		r = run(t, in, "--kubeconfig", kc, "--cache-dir", cache, cmd, "-f", "-")
		if r.code != ExitInput || r.stdout != "" || r.stderr != want {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", cmd, r.code, r.stdout, r.stderr, want)
		}
	}

	// Discovery that fails is a cluster error.
	unreachable := writeKubeconfig(t, "https://127.0.0.1:1")
	r = run(t, cm, "--kubeconfig", unreachable, "--cache-dir", cache, "prune", "-f", "-")
	if r.code != ExitInternal || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: discovering the API groups: cannot reach the API server at https://127.0.0.1:1") {
		t.Errorf("unreachable: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
