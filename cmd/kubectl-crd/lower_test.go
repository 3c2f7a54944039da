package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/filter"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin"
)

// lower-mutability and the KRM function's lowerMutability give the same
// findings for the same CRDs, both from lower.Document: the server's
// warnings on a CRD, lowering's warnings and notes (a CRD written again
// without its comments), and a marker that cannot be lowered named by its
// file and line. The function used to drop the reformatting note, to name
// the item's first line rather than the marker's, and to word lowering's
// warnings itself.
func TestPluginAndFunctionLowerAlike(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string // some of the findings, so that an empty list cannot pass
	}{
		{file: "../../examples/lower/crd.yaml"},
		{file: "../../examples/lower/mapping.yaml"},
		{file: "../../examples/kep-immutable/crds.yaml", want: []string{
			`CustomResourceDefinition kep8s.kep.immutable.example.com: x-kubernetes-list-type: set for items of type "object" is not supported by server-side apply or CEL validation rules`}},
		{file: "../../examples/immutable/crd.yaml", want: []string{
			"error: ../../examples/immutable/crd.yaml:46: spec.users: the rule lowered from x-kubernetes-key-mutability: AddOnly is over the API server's CEL cost budget " +
				"(contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema): bound the sizes it reads with maxItems on spec.users"}},
		{file: "testdata/lower-nullable.yaml", want: []string{
			"CustomResourceDefinition volumes.storage.example.com: spec.zone: nullable: the server's CEL sees null as absent, so the rules let it go from null to absent and back"}},
		{file: "testdata/lower-aliased.yaml", want: []string{
			"CustomResourceDefinition volumes.storage.example.com: written again without comments: " +
				"spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.region.x-kubernetes-mutability: the field is reached through a YAML alias; edit the anchor instead"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fromPlugin := pluginLowerFindings(t, tc.file)
			fromFunction := functionLowerFindings(t, tc.file)
			if diff := cmp.Diff(fromPlugin, fromFunction); diff != "" {
				t.Errorf("findings (-plugin +function):\n%s", diff)
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(fromPlugin, "\n")+"\n", w+"\n") {
					t.Errorf("no finding %q in\n%s", w, strings.Join(fromPlugin, "\n"))
				}
			}
		})
	}
}

// pluginLowerFindings are the warnings and errors of kubectl crd
// lower-mutability -f file, sorted: "Kind name: message", "error: file:line: message".
func pluginLowerFindings(t *testing.T, file string) []string {
	var out, errOut bytes.Buffer
	code := plugin.Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"lower-mutability", "-f", file})
	if code > 2 {
		t.Fatalf("lower-mutability: exit %d\n%s", code, errOut.String())
	}
	warning := regexp.MustCompile(`^Warning: (.*) \([^()]*:\d+\)$`)
	var found []string
	for _, l := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
		if m := warning.FindStringSubmatch(l); m != nil {
			found = append(found, m[1])
		} else if strings.HasPrefix(l, "error: ") {
			found = append(found, l)
		}
	}
	sort.Strings(found)
	return found
}

// functionLowerFindings are the results and the error of the KRM function
// with lowerMutability on file's objects, read as kustomize reads a file,
// in pluginLowerFindings's words.
func functionLowerFindings(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(b), SetAnnotations: map[string]string{kioutil.PathAnnotation: file}}).Read()
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{Items: items}
	if rl.FunctionConfig, err = yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nlowerMutability: true\n"); err != nil {
		t.Fatal(err)
	}
	var found []string
	var results framework.Results
	if err := (filter.Processor{}).Process(rl); err != nil && !errors.As(err, &results) {
		found = append(found, "error: "+err.Error())
	}
	for _, r := range rl.Results {
		if r.ResourceRef == nil && r.Tags[kubeversion.Key+".version"] != "" {
			continue // which minor answered: of no object
		}
		if r.Tags["finding"] == "Prune" {
			continue // what the server stores of the CRD: the function prunes as it lowers, lower-mutability does not
		}
		name := r.ResourceRef.Kind + " " + r.ResourceRef.Name
		found = append(found, name+": "+strings.TrimPrefix(r.Message, name+": "))
	}
	sort.Strings(found)
	return found
}
