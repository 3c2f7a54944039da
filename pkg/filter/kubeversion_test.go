package filter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// The function answers as the config's kubeVersion, as the plugin's
// --kube-version: the same CRD refused on 1.31, accepted on 1.32 and by
// default; a minor outside the range is a config error.
func TestFunctionKubeVersion(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	// The shipped example: a CRD whose rule uses the CEL format library,
	// which a new expression may use from Kubernetes 1.32 on, and a Mirror.
	var items []string
	for _, f := range []string{"crd.yaml", "mirror.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "kube-versions", "format", f))
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, string(b))
	}
	for _, tc := range []struct {
		config string
		fails  bool
	}{
		{"kubeVersion: \"1.31\"\n", true},
		{"kubeVersion: \"1.32\"\n", false},
		{"", false},
	} {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(strings.Join(items, "---\n"))}).Read()
		if err != nil {
			t.Fatal(err)
		}
		rl := &framework.ResourceList{Items: nodes}
		if rl.FunctionConfig, err = yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nmetadata: {name: check}\n" + tc.config); err != nil {
			t.Fatal(err)
		}
		err = (Processor{}).Process(rl)
		if (err != nil) != tc.fails || tc.fails && !strings.Contains(err.Error(), "undeclared reference to 'format'") {
			t.Errorf("config %q: %v; want refused: %v", tc.config, err, tc.fails)
		}
	}
	node, err := yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nkubeVersion: \"1.30\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readConfig(node); err == nil || !strings.Contains(err.Error(), "kubeVersion: Kubernetes 1.30 is not answered: the versions answered are "+kubeversion.Range()) {
		t.Errorf("kubeVersion 1.30: %v", err)
	}
	// Unquoted, YAML reads 1.30 as the number 1.3: the error says so.
	node, err = yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nkubeVersion: 1.30\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readConfig(node); err == nil || !strings.Contains(err.Error(), "quote it: YAML reads kubeVersion: 1.30 as the number 1.3") {
		t.Errorf("kubeVersion 1.30 unquoted: %v", err)
	}
	if !strings.Contains(krmLong, "kubeVersion") || !strings.Contains(krmLong, kubeversion.Range()) {
		t.Errorf("the function's help does not name kubeVersion and %s", kubeversion.Range())
	}
}
