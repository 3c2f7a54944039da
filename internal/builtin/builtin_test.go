package builtin

import (
	"os/exec"
	"strings"
	"testing"
)

func TestIsBuiltin(t *testing.T) {
	for apiVersion, want := range map[string]bool{
		"v1":                                 true,
		"apps/v1":                            true,
		"apps/v1beta7":                       true, // the group decides
		"apiextensions.k8s.io/v1":            true,
		"example.com/v1":                     false,
		"cert-manager.io/v1":                 false,
		"a/b/c":                              false,
		"flowcontrol.apiserver.k8s.io/v1":    true,
		"apiregistration.k8s.io/v1":          true, // kube-aggregator's, not in client-go's scheme
		"apiregistration.k8s.io/v1beta1":     true,
		"snapshot.storage.k8s.io/v1":         false, // a CRD in a k8s.io group
		"gateway.networking.k8s.io/v1":       false,
		"internal.apiserver.k8s.io/v1alpha1": true,
		"lifecycle.k8s.io/v1alpha1":          true,
		"storagemigration.k8s.io/v1":         true,
		"admission.k8s.io/v1":                false, // webhook bodies, no resource of kube-apiserver
		"imagepolicy.k8s.io/v1alpha1":        false,
		"apidiscovery.k8s.io/v2":             false, // discovery documents, no resource
	} {
		if got := IsBuiltin(apiVersion); got != want {
			t.Errorf("IsBuiltin(%q) = %v, want %v", apiVersion, got, want)
		}
	}
}

func TestCheckKind(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		want             string // "" for known
	}{
		{"apps/v1", "Deployment", ""},
		{"v1", "ConfigMap", ""},
		{"v1", "Namespace", ""},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", ""},
		{"autoscaling/v2", "HorizontalPodAutoscaler", ""},
		{"batch/v1", "CronJob", ""},
		// The aggregator's, which every kube-apiserver serves.
		{"apiregistration.k8s.io/v1", "APIService", ""},
		// Lists are expanded by kubectl, not mapped; custom groups are not built in.
		{"v1", "List", ""},
		{"apps/v1", "DeploymentList", ""},
		{"apps/v1", "DeploymnetList", ""},
		{"example.com/v1", "Deploymnet", ""},
		{"", "Deployment", ""},
		{"apps/v1", "", ""},
		// Removed after 1.37, so still served by it; alpha and beta kinds a cluster may enable.
		{"resource.k8s.io/v1beta1", "DeviceClass", ""},
		{"rbac.authorization.k8s.io/v1alpha1", "Role", ""},

		{"apps/v1", "Deploymnet",
			`no matches for kind "Deploymnet" in version "apps/v1": not a built-in type of Kubernetes 1.37 (checked offline)`},
		{"apps/v1beta7", "Deployment",
			`no matches for kind "Deployment" in version "apps/v1beta7": not a built-in type of Kubernetes 1.37 (checked offline); Kubernetes 1.37 has Deployment in apps/v1`},
		{"v1", "Deployment",
			`no matches for kind "Deployment" in version "v1": not a built-in type of Kubernetes 1.37 (checked offline); Kubernetes 1.37 has Deployment in apps/v1`},
		{"apps/v1", "deployment",
			`no matches for kind "deployment" in version "apps/v1": not a built-in type of Kubernetes 1.37 (checked offline); Kubernetes 1.37 has Deployment in apps/v1`},
		// "apps" alone is the version "apps" of the core group, for kubectl as for us.
		{"apps", "Deployment",
			`no matches for kind "Deployment" in version "apps": not a built-in type of Kubernetes 1.37 (checked offline); Kubernetes 1.37 has Deployment in apps/v1`},
		{"autoscaling/v1", "horizontalpodautoscaler",
			`no matches for kind "horizontalpodautoscaler" in version "autoscaling/v1": not a built-in type of Kubernetes 1.37 (checked offline); Kubernetes 1.37 has HorizontalPodAutoscaler in autoscaling/v1, HorizontalPodAutoscaler in autoscaling/v2`},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinitoin",
			`no matches for kind "CustomResourceDefinitoin" in version "apiextensions.k8s.io/v1": not a built-in type of Kubernetes 1.37 (checked offline)`},
		{"apiregistration.k8s.io/v1", "APIServce",
			`no matches for kind "APIServce" in version "apiregistration.k8s.io/v1": not a built-in type of Kubernetes 1.37 (checked offline)`},
		{"apiregistration.k8s.io/v1", "ApiService",
			`no matches for kind "ApiService" in version "apiregistration.k8s.io/v1": not a built-in type of Kubernetes 1.37 (checked offline); Kubernetes 1.37 has APIService in apiregistration.k8s.io/v1`},
		// Types every group version registers for requests are no resource.
		{"apps/v1", "ListOptions",
			`no matches for kind "ListOptions" in version "apps/v1": not a built-in type of Kubernetes 1.37 (checked offline)`},
		{"v1", "Status",
			`no matches for kind "Status" in version "v1": not a built-in type of Kubernetes 1.37 (checked offline)`},
		// Removed: the type is still in client-go, the API server no longer serves it.
		{"extensions/v1beta1", "Deployment",
			`no matches for kind "Deployment" in version "extensions/v1beta1": extensions/v1beta1 Deployment is deprecated in v1.8+, unavailable in v1.16+; use apps/v1 Deployment (checked offline, against the built-in types of Kubernetes 1.37)`},
		{"batch/v1beta1", "CronJob",
			`no matches for kind "CronJob" in version "batch/v1beta1": batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob (checked offline, against the built-in types of Kubernetes 1.37)`},
		{"apiregistration.k8s.io/v1beta1", "APIService",
			`no matches for kind "APIService" in version "apiregistration.k8s.io/v1beta1": apiregistration.k8s.io/v1beta1 APIService is deprecated in v1.19+, unavailable in v1.22+; use apiregistration.k8s.io/v1 APIService (checked offline, against the built-in types of Kubernetes 1.37)`},
		// Removed in 1.37 itself: a 1.37 release no longer serves it.
		{"networking.k8s.io/v1beta1", "IPAddress",
			`no matches for kind "IPAddress" in version "networking.k8s.io/v1beta1": networking.k8s.io/v1beta1 IPAddress is deprecated in v1.34+, unavailable in v1.37+ (checked offline, against the built-in types of Kubernetes 1.37)`},
	} {
		err := CheckKind(tc.apiVersion, tc.kind)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckKind(%q, %q):\n got %s\nwant %s", tc.apiVersion, tc.kind, got, tc.want)
		}
	}
}

// KubernetesVersion names the release of the types we compile in: k8s.io/api
// v0.X.Y is Kubernetes 1.X.
func TestKubernetesVersion(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/api").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/api: %v", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v0.")
	minor, _, _ := strings.Cut(v, ".")
	if want := "1." + minor; KubernetesVersion != want {
		t.Errorf("KubernetesVersion = %s, but k8s.io/api is %s: Kubernetes %s", KubernetesVersion, strings.TrimSpace(string(out)), want)
	}
}

// The three servers of a kube-apiserver come from one release: the types of
// the CRD API and of APIService are those of the same Kubernetes as
// k8s.io/api's.
func TestServersOfOneRelease(t *testing.T) {
	modules := []string{"k8s.io/api", "k8s.io/apiextensions-apiserver", "k8s.io/kube-aggregator"}
	out, err := exec.Command("go", append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, modules...)...).Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines[1:] {
		if _, v, _ := strings.Cut(line, " "); !strings.HasSuffix(lines[0], " "+v) {
			t.Errorf("%s, but %s", line, lines[0])
		}
	}
}
