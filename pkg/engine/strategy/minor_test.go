package strategy

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// TestCRDCreateByMinor: a new CEL expression compiles in the environment
// of the minor before the server's (its compatibility version), so a
// library reaches CRDs one minor after it is written. What each minor's
// real server answered (issue 40's measurements on 1.31, 1.33 and 1.37;
// test/e2e's version parity holds every minor to it): the format library
// is refused by 1.31 and accepted by 1.33, two-variable comprehensions the
// same, semver and the extended lists library refused by 1.31 and 1.33 and
// accepted by 1.37.
func TestCRDCreateByMinor(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	for _, tc := range []struct {
		rule     string
		accepted map[kubeversion.Minor]bool
	}{
		{`!format.dns1123Label().validate(self.a).hasValue()`, map[kubeversion.Minor]bool{31: false, 33: true, 37: true}},
		{`self.l.all(i, v, v > i)`, map[kubeversion.Minor]bool{31: false, 33: true, 37: true}},
		{`isSemver(self.a)`, map[kubeversion.Minor]bool{31: false, 33: false, 37: true}},
		{`self.l.distinct().size() == self.l.size()`, map[kubeversion.Minor]bool{31: false, 33: false, 37: true}},
		{`self.a.size() <= 10`, map[kubeversion.Minor]bool{31: true, 33: true, 37: true}},
	} {
		for _, m := range []kubeversion.Minor{31, 33, 37} {
			if _, err := kubeversion.Use(m); err != nil {
				t.Fatal(err)
			}
			errs, _ := Validators{}.ValidateCRDCreate(minorCRD(t, tc.rule))
			if got := len(errs) == 0; got != tc.accepted[m] {
				t.Errorf("%s on %s: accepted %v, want %v (%v)", tc.rule, m, got, tc.accepted[m], errs.ToAggregate())
			} else if !got && !strings.Contains(errs.ToAggregate().Error(), "compilation failed") {
				t.Errorf("%s on %s: %v, want a compilation error", tc.rule, m, errs.ToAggregate())
			}
		}
	}
}

func minorCRD(t *testing.T, rule string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	err := yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
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
            required: [a, l]
            properties:
              a: {type: string, maxLength: 10}
              l: {type: array, maxItems: 10, items: {type: integer}}
            x-kubernetes-validations:
            - rule: '`+rule+`'
`), &crd)
	if err != nil {
		t.Fatal(err)
	}
	return &crd
}

// TestMetadataByMinor: kube-apiserver 1.37 validates the metadata of a
// CRD and of a custom resource declaratively, 1.31 to 1.36 with the
// handwritten validation; the two count invalid label values apart (one
// error per distinct value, one per label). The real servers' answers on
// twelve cert-manager CRDs of the corpus, whose labels hold Helm
// templates, are those of test/e2e's version parity: three errors at
// metadata.labels on 1.31, 1.32 and 1.33, two on 1.37.
func TestMetadataByMinor(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	const labels = `{a: '{{ x }}', b: '{{ x }}', c: '{{ y }}'}`
	crd := minorCRD(t, "self.a.size() <= 10")
	reg := createRegistry(t, "Namespaced")
	def, ok := reg.Lookup("example.com/v1", "Widget")
	if !ok {
		t.Fatal("no Widget in the registry")
	}
	// An update runs the handwritten validation of the generic registry
	// besides the strategy's (rest.ValidateUpdate): the difference is one.
	updateErrs := map[kubeversion.Minor]int{}
	for _, tc := range []struct {
		minor kubeversion.Minor
		want  int
	}{{37, 2}, {31, 3}, {33, 3}, {36, 3}} {
		if _, err := kubeversion.Use(tc.minor); err != nil {
			t.Fatal(err)
		}
		c := crd.DeepCopy()
		c.Labels = map[string]string{"a": "{{ x }}", "b": "{{ x }}", "c": "{{ y }}"}
		errs, _ := Validators{}.ValidateCRDCreate(c)
		if got := countField(errs, "metadata.labels"); got != tc.want || got != len(errs) {
			t.Errorf("CRD create on %s: %d errors at metadata.labels, want %d (%v)", tc.minor, got, tc.want, errs)
		}
		errs = Validators{}.ValidateCRDUpdate(crd, c)
		updateErrs[tc.minor] = countField(errs, "metadata.labels")
		if want := updateErrs[37] + tc.want - 2; updateErrs[tc.minor] != want || updateErrs[tc.minor] != len(errs) {
			t.Errorf("CRD update on %s: %d errors at metadata.labels, want %d (%v)", tc.minor, updateErrs[tc.minor], want, errs)
		}
		obj := mustYAML(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns, labels: "+labels+"}\nspec: {engine: postgres, size: large, region: eu-west-1}\n")
		spec := obj["spec"].(map[string]interface{})
		spec["replicas"], spec["minReplicas"] = int64(3), int64(1) // as the server decodes integers
		errs, err := Validators{}.ValidateCreate(def, "v1", obj, "ns")
		if err != nil {
			t.Fatal(err)
		}
		if got := countField(errs, "metadata.labels"); got != tc.want || got != len(errs) {
			t.Errorf("object create on %s: %d errors at metadata.labels, want %d (%v)", tc.minor, got, tc.want, errs)
		}
	}
}

func countField(errs field.ErrorList, path string) (n int) {
	for _, e := range errs {
		if e.Field == path {
			n++
		}
	}
	return n
}

// TestNumericRangeByMinor: from 1.36 on, the schema validation checks that
// a number fits its schema's type and format (kube-openapi's
// IsValueValidAgainstRange with them); before, it did not: 0.1 in an
// int-or-string is refused by all, with one error more from 1.36, as the
// real servers refuse the corpus's KServe samples.
func TestNumericRangeByMinor(t *testing.T) {
	t.Cleanup(func() { kubeversion.Use(kubeversion.Embedded) })
	obj := mustYAML(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: counters.example.com}
spec:
  group: example.com
  names: {kind: Counter, plural: counters}
  scope: Cluster
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
              q: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
`)
	for _, tc := range []struct {
		minor kubeversion.Minor
		want  int // errors
	}{{31, 3}, {35, 3}, {36, 4}, {37, 4}} {
		if _, err := kubeversion.Use(tc.minor); err != nil {
			t.Fatal(err)
		}
		crd, ok, err := schema.FromObject(obj, Validators{})
		if err != nil || !ok {
			t.Fatal(err)
		}
		o := map[string]interface{}{"apiVersion": "example.com/v1", "kind": "Counter",
			"metadata": map[string]interface{}{"name": "c"}, "spec": map[string]interface{}{"q": 0.1}}
		errs, err := Validators{}.ValidateCreate(crd, "v1", o, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) != tc.want {
			t.Errorf("%s: %d errors, want %d: %v", tc.minor, len(errs), tc.want, errs)
		}
	}
}
