package plugin

import (
	"strings"
	"testing"

	apimachineryversion "k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// formatCRD uses the CEL format library: a new expression may use it from
// Kubernetes 1.32 on (written in 1.31, compiled in the minor before the
// server's).
const formatCRD = `apiVersion: apiextensions.k8s.io/v1
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
              host: {type: string, maxLength: 63}
            x-kubernetes-validations:
            - rule: "!has(self.host) || !format.dns1123Label().validate(self.host).hasValue()"
`

const formatWidget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ops}\nspec: {host: web}\n"

const refusedFormat = "undeclared reference to 'format'"

// --kube-version: every command answers as that minor, says so, and
// refuses one outside the range (exit 2).
func TestKubeVersionFlag(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	crd := writeFile(t, "crd.yaml", formatCRD)
	note := "Note: the answers of kube-apiserver 1.31, emulated by kube-apiserver "
	for _, args := range [][]string{
		{"explain-structural", "-f", crd},
		{"prune", "--offline", "--crd-file", crd, "-f", "-"},
		{"check-update", "--offline", "--crd-file", crd, "--old", crd, "-f", "-"},
		{"lower-mutability", "-f", crd},
	} {
		old := run(t, formatWidget, append(args, "--kube-version", "1.31")...)
		if old.code == 0 || !strings.Contains(old.stdout+old.stderr, refusedFormat) || !strings.HasPrefix(old.stderr, note) {
			t.Errorf("%s on 1.31: exit %d, stdout %q, stderr:\n%s\nwant the CRD refused, after %q", args[0], old.code, old.stdout, old.stderr, note)
		}
		for _, v := range []string{"1.32", ""} {
			a := args
			if v != "" {
				a = append(a, "--kube-version", v)
			}
			r := run(t, formatWidget, a...)
			if r.code != 0 || strings.Contains(r.stdout+r.stderr, refusedFormat) || strings.Contains(r.stderr, "kube-apiserver 1.31") {
				t.Errorf("%s on %q: exit %d, stdout %q, stderr:\n%s", args[0], v, r.code, r.stdout, r.stderr)
			}
		}
		bad := run(t, formatWidget, append(args, "--kube-version", "1.30")...)
		if want := "error: --kube-version: Kubernetes 1.30 is not answered: the versions answered are 1.31 to 1.37\n"; bad.code != ExitInput || bad.stderr != want {
			t.Errorf("%s on 1.30: exit %d, stderr %q, want exit 2, %q", args[0], bad.code, bad.stderr, want)
		}
	}
}

// Live, the cluster's own version answers unless --kube-version says
// otherwise; one outside the range, the nearest, with a warning.
func TestKubeVersionLive(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	crd := writeFile(t, "crd.yaml", formatCRD)
	for _, tc := range []struct {
		server  apimachineryversion.Info
		flag    string
		refused bool
		warning string
	}{
		{server: apimachineryversion.Info{Major: "1", Minor: "31+", GitVersion: "v1.31.14-eks-1234"}, refused: true},
		{server: apimachineryversion.Info{Major: "1", Minor: "31", GitVersion: "v1.31.14"}, flag: "1.33"},
		{server: apimachineryversion.Info{Major: "1", Minor: "33", GitVersion: "v1.33.5"}},
		{server: apimachineryversion.Info{Major: "1", Minor: "29", GitVersion: "v1.29.3"}, refused: true,
			warning: "Warning: the cluster is Kubernetes 1.29, older than the versions answered (1.31 to 1.37): answered as 1.31\n"},
		{server: apimachineryversion.Info{Major: "1", Minor: "40", GitVersion: "v1.40.0"},
			warning: "Warning: the cluster is Kubernetes 1.40, newer than the versions answered (1.31 to 1.37): answered as 1.37\n"},
	} {
		kc := writeKubeconfig(t, discoveryServerAt(t, &tc.server).URL)
		args := []string{"--kubeconfig", kc, "--cache-dir", t.TempDir(), "prune", "--crd-file", crd, "-f", "-"}
		if tc.flag != "" {
			args = append(args, "--kube-version", tc.flag)
		}
		r := run(t, formatWidget, args...)
		if refused := strings.Contains(r.stderr, refusedFormat); refused != tc.refused || tc.warning != "" && !strings.HasPrefix(r.stderr, tc.warning) {
			t.Errorf("server %s, flag %q: exit %d, stderr:\n%s\nwant refused %v, warning %q", tc.server.GitVersion, tc.flag, r.code, r.stderr, tc.refused, tc.warning)
		}
	}
}
