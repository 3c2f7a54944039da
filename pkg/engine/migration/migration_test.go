package migration_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/migration"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// crd is a CRD of foos.example.com with the versions given (version's).
func crd(t *testing.T, conversion string, versions ...string) *schema.CRD {
	t.Helper()
	doc := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: foos.example.com}\nspec:\n  group: example.com\n" +
		"  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}\n  scope: Namespaced\n" + conversion + "  versions:\n" + strings.Join(versions, "")
	var raw map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(doc), &raw); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	c, ok, err := schema.DecodeObject(raw, nil)
	if err != nil || !ok {
		t.Fatalf("decode: %v %v\n%s", ok, err, doc)
	}
	return c
}

// version is a version of the CRD whose spec has the properties given
// (a YAML flow mapping) and the spec's rules.
func version(name string, storage bool, props, rules string) string {
	s := fmt.Sprintf("  - name: %s\n    served: true\n    storage: %v\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties: %s\n", name, storage, props)
	if rules != "" {
		s += "            x-kubernetes-validations: " + rules + "\n"
	}
	return s
}

const (
	v1Props = "{size: {type: integer}, retryLimit: {type: integer}, extra: {type: object, properties: {keep: {type: string}, gone: {type: string}}}}"
	v2Props = "{size: {type: integer}, extra: {type: object, properties: {keep: {type: string}}}}"
	// frozen refuses every write of a Foo of size 3 or more: a transition
	// rule, which ratcheting does not let through unchanged.
	frozen = `[{rule: "oldSelf.size < 3", message: "frozen"}]`
)

func foo(name, spec string) string {
	return "apiVersion: example.com/v1alpha1\nkind: Foo\nmetadata: {name: " + name + ", namespace: default}\nspec: " + spec + "\n"
}

// plan runs the objects through the upgrade and plans its migration.
func plan(t *testing.T, old, new *schema.CRD, m kubeversion.Minor, known bool, objects ...string) *migration.Plan {
	t.Helper()
	p := migration.New(old, new, m)
	if p == nil {
		return nil
	}
	for i, o := range objects {
		docs, err := document.Read(strings.NewReader(o), fmt.Sprintf("o%d.yaml", i))
		if err != nil {
			t.Fatal(err)
		}
		imp, err := crdupgrade.Impact(docs[0], old, new, strategy.Validators{}, "default")
		if err != nil {
			t.Fatal(err)
		}
		p.Add(imp)
	}
	p.Finish(known)
	return p
}

// summary is what a plan says of the objects, one line each.
func summary(p *migration.Plan) []string {
	var out []string
	for _, o := range p.Objects {
		for _, c := range o.Loses {
			out = append(out, fmt.Sprintf("%s loses %s (line %d)", o.Object.Name, c.Path, c.Line))
		}
		for _, e := range o.Refused {
			out = append(out, fmt.Sprintf("%s refused: %s", o.Object.Name, e.Message))
		}
	}
	return out
}

func TestPlan(t *testing.T) {
	old := crd(t, "", version("v1alpha1", true, v1Props, ""))
	moved := crd(t, "", version("v1alpha1", false, v1Props, ""), version("v1beta1", true, v2Props, ""))
	movedFrozen := crd(t, "", version("v1alpha1", false, v1Props, ""), version("v1beta1", true, v2Props, frozen))
	webhook := crd(t, "  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {url: 'https://conv.example.com'}}}\n",
		version("v1alpha1", false, v1Props, ""), version("v1beta1", true, v2Props, ""))
	// v1 is preferred (served, GA) but v2beta1 stores: every rewrite goes
	// through v1, whose schema lacks extra.gone, which v2beta1 has.
	viaV1 := crd(t, "", version("v1alpha1", false, v1Props, ""),
		version("v1", false, "{size: {type: integer}, retryLimit: {type: integer}, extra: {type: object, properties: {keep: {type: string}}}}", ""),
		version("v2beta1", true, v1Props, ""))
	objects := []string{foo("a", "{size: 1}"), foo("b", "{size: 2, retryLimit: 5, extra: {keep: k, gone: g}}"), foo("c", "{size: 3, retryLimit: 1}")}

	for _, tc := range []struct {
		name     string
		new      *schema.CRD
		known    bool
		objects  []string
		want     []string
		intact   int
		safe     bool
		reason   string
		storedAs string
	}{
		{"storage moved", moved, true, objects,
			[]string{"b loses spec.extra.gone (line 4)", "b loses spec.retryLimit (line 4)", "c loses spec.retryLimit (line 4)"}, 1, true, "every object checked is rewritten as v1beta1", "v1beta1"},
		{"a rewrite refused", movedFrozen, true, objects,
			[]string{"b loses spec.extra.gone (line 4)", "b loses spec.retryLimit (line 4)", "c refused: spec: Invalid value: frozen"}, 1, false, "the server refuses the rewrite of 1 object, which stays stored in v1alpha1", "v1beta1"},
		{"objects not known", moved, false, nil, nil, 0, false, "no existing objects checked", "v1beta1"},
		{"a conversion webhook", webhook, true, objects, nil, 3, false, "a conversion webhook converts", "v1beta1"},
		{"rewritten through the preferred version", viaV1, true, objects, []string{"b loses spec.extra.gone (line 4)"}, 2, true, "every object checked", "v2beta1"},
		{"the same object twice", moved, true, []string{objects[1], objects[1]},
			[]string{"b loses spec.extra.gone (line 4)", "b loses spec.retryLimit (line 4)"}, 0, true, "every object checked", "v1beta1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, old, tc.new, kubeversion.Embedded, tc.known, tc.objects...)
			if p == nil {
				t.Fatal("no plan")
			}
			if diff := cmp.Diff(tc.want, summary(p)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if p.Intact != tc.intact || p.Checked != len(p.Objects)+p.Intact {
				t.Errorf("intact %d of %d checked, %d listed; want %d intact", p.Intact, p.Checked, len(p.Objects), tc.intact)
			}
			if p.Trim.Safe != tc.safe || !strings.HasPrefix(p.Trim.Reason, tc.reason) {
				t.Errorf("trim safe %v: %s; want %v: %s...", p.Trim.Safe, p.Trim.Reason, tc.safe, tc.reason)
			}
			if want := `{"status":{"storedVersions":["` + tc.storedAs + `"]}}`; p.StorageVersion != tc.storedAs || p.Trim.Patch != want {
				t.Errorf("storage version %s, patch %s; want %s", p.StorageVersion, p.Trim.Patch, want)
			}
			if diff := cmp.Diff([]string{"v1alpha1"}, p.From); diff != "" {
				t.Errorf("from (-want +got):\n%s", diff)
			}
		})
	}
	if p := plan(t, moved, moved, kubeversion.Embedded, true, objects...); p != nil {
		t.Errorf("a plan where no storage moves: %+v", p)
	}
}

// The StorageVersionMigration of each minor, and the way without it.
func TestMigrator(t *testing.T) {
	old := crd(t, "", version("v1alpha1", true, v1Props, ""))
	new := crd(t, "", version("v1alpha1", false, v1Props, ""), version("v1beta1", true, v2Props, ""))
	for _, tc := range []struct {
		minor  kubeversion.Minor
		yaml   string
		enable string
		trims  bool
	}{
		{31, "apiVersion: storagemigration.k8s.io/v1alpha1\nkind: StorageVersionMigration\nmetadata:\n  name: foos.example.com-v1beta1\nspec:\n  resource:\n    group: example.com\n    resource: foos\n    version: v1beta1\n",
			"the feature gate StorageVersionMigrator=true on kube-apiserver and kube-controller-manager, and --runtime-config=storagemigration.k8s.io/v1alpha1=true on kube-apiserver (off by default in 1.31)", false},
		{34, "apiVersion: storagemigration.k8s.io/v1alpha1\n", "", false},
		{35, "apiVersion: storagemigration.k8s.io/v1beta1\nkind: StorageVersionMigration\nmetadata:\n  name: foos.example.com-v1beta1\nspec:\n  resource:\n    group: example.com\n    resource: foos\n",
			"the feature gate StorageVersionMigrator=true on kube-apiserver and kube-controller-manager, and --runtime-config=storagemigration.k8s.io/v1beta1=true on kube-apiserver (off by default in 1.35)", false},
		{36, "apiVersion: storagemigration.k8s.io/v1beta1\n", "", true},
		{37, "apiVersion: storagemigration.k8s.io/v1\nkind: StorageVersionMigration\nmetadata:\n  name: foos.example.com-v1beta1\nspec:\n  resource:\n    group: example.com\n    resource: foos\n", "", true},
	} {
		p := migration.New(old, new, tc.minor)
		got := string(p.Migrator.YAML())
		if !strings.HasPrefix(got, tc.yaml) {
			t.Errorf("%s: the StorageVersionMigration:\n%s\nwant:\n%s", tc.minor, got, tc.yaml)
		}
		if (tc.enable != "" || tc.minor >= 37) && p.Migrator.Enable != tc.enable || tc.minor < 37 && p.Migrator.Enable == "" {
			t.Errorf("%s: enable %q, want %q", tc.minor, p.Migrator.Enable, tc.enable)
		}
		if p.Migrator.TrimsItself != tc.trims {
			t.Errorf("%s: the controller trims storedVersions: %v, want %v", tc.minor, p.Migrator.TrimsItself, tc.trims)
		}
		if want := `kubectl get foos.example.com --all-namespaces -o jsonpath='{range .items[*]}{@}{"\n"}{end}' | kubectl replace -f -`; p.Manual != want {
			t.Errorf("%s: without the migrator: %q, want %q", tc.minor, p.Manual, want)
		}
	}
}

// What a rewrite through the preferred version does that the write of an
// object's own version does not (refused by v1beta1's rule, a field the
// preferred v1 lacks) is a finding of the upgrade; what the findings say
// already (the next write's loss) is not said twice.
func TestFindingsOfTheRewrite(t *testing.T) {
	old := crd(t, "", version("v1alpha1", true, v1Props, ""))
	movedFrozen := crd(t, "", version("v1alpha1", false, v1Props, ""), version("v1beta1", true, v2Props, frozen))
	viaV1 := crd(t, "", version("v1alpha1", false, v1Props, ""),
		version("v1", false, "{size: {type: integer}, retryLimit: {type: integer}, extra: {type: object, properties: {keep: {type: string}}}}", ""),
		version("v2beta1", true, v1Props, ""))
	for _, tc := range []struct {
		name   string
		new    *schema.CRD
		object string
		want   []string
	}{
		{"refused through the preferred version", movedFrozen, foo("c", "{size: 3, retryLimit: 1}"), []string{
			`DataLoss: loses "spec.retryLimit" when next written, stored as v1beta1: reads intact until then, then the storage version's schema prunes it for good`,
			"Invalid: even an unchanged write of it through v1beta1, the version clients get by default (as a storage-version migration does), would be refused: spec: Invalid value: frozen",
		}},
		{"lost through the preferred version", viaV1, foo("b", "{size: 2, extra: {keep: k, gone: g}}"), []string{
			`DataLoss: loses "spec.extra.gone" when written back through v1, the version clients get by default (as a storage-version migration does), stored as v2beta1`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := document.Read(strings.NewReader(tc.object), "o.yaml")
			if err != nil {
				t.Fatal(err)
			}
			imp, err := crdupgrade.Impact(docs[0], old, tc.new, strategy.Validators{}, "default")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range finding.FromImpact(imp) {
				got = append(got, fmt.Sprintf("%s: %s", f.Check, f.Message))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
