package crdupgrade_test

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// object is a Foo in v1 with the spec given (a YAML flow mapping).
func object(name, spec string) string {
	return "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: " + name + ", namespace: default}\nspec: " + spec + "\n"
}

// The impact of each kind of change on objects: which objects each change
// hurts, by hand; what they lose and why they are refused comes from the
// server's code (prune, the custom resource strategy), and nothing the
// objects show may be left unexplained by the changes.
func TestImpact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		objects  []string
		// want: "Kind path: objects" for each change that hurts any.
		want []string
		// lost and refused are per object: "path reason" and "field type".
		lost, refused, updateRefused []string
	}{
		{"field removed", one(base, ""), one("size: {type: integer}\n", ""),
			[]string{object("a", "{size: 1, name: x}"), object("b", "{size: 2}")},
			[]string{"FieldRemoved spec.name: a"}, []string{"a spec.name UnknownField"}, nil, nil},
		{"preserve-unknown-fields removed", one(base, "x-kubernetes-preserve-unknown-fields: true\n"), one(base, ""),
			[]string{object("a", "{size: 1, extra: {x: 1}}"), object("b", "{size: 2}")},
			[]string{"PreserveUnknownRemoved spec: a"}, []string{"a spec.extra UnknownField"}, nil, nil},
		{"default added", one(base, ""), one("size: {type: integer, default: 3}\nname: {type: string}\n", ""),
			[]string{object("a", "{size: 1}"), object("b", "{name: x}")},
			[]string{"DefaultAdded spec.size: b"}, []string{"b spec.size Defaulted"}, nil, nil},
		// Ratcheting lets an unchanged object without the new required field through.
		{"required added", one(base, ""), one(base, "required: [name]\n"),
			[]string{object("a", "{size: 1, name: x}"), object("b", "{size: 2}")},
			[]string{"RequiredAdded spec.name: b"}, nil, []string{"b spec.name Required value"}, nil},
		{"type changed", one(base, ""), one("size: {type: string}\nname: {type: string}\n", ""),
			[]string{object("a", "{size: 1}"), object("b", "{name: x}")},
			[]string{"TypeChanged spec.size: a"}, nil, []string{"a spec.size Invalid value"}, nil},
		// v1 is no longer served: the objects read as the storage version v2,
		// whose schema lacks name; their manifests, of v1, are refused.
		{"version no longer served", one(base, "") + version("v2", true, false, base, ""),
			names + "versions:\n" + version("v1", false, false, base, "") + version("v2", true, true, "size: {type: integer}\n", ""),
			[]string{object("a", "{size: 1, name: x}"), object("b", "{size: 2}")},
			[]string{"VersionUnserved spec.versions[v1].served: a, b", "FieldRemoved spec.name: a"}, []string{"a spec.name UnknownField"}, nil, nil},
		// The storage moves to v2, whose schema lacks name: the objects of v1
		// read intact, and lose it when next written (stored as v2).
		{"storage moved to a version without a field", one(base, "") + version("v2", true, false, "size: {type: integer}\n", ""),
			names + "versions:\n" + version("v1", true, false, base, "") + version("v2", true, true, "size: {type: integer}\n", ""),
			[]string{object("a", "{size: 1, name: x}"), object("b", "{size: 2}")},
			[]string{"DroppedOnWrite spec.name: a"}, []string{"a spec.name StorageVersion, next write as v2"}, nil, nil},
		// The same move with a conversion webhook: what it keeps is not ours to say.
		{"storage moved, conversion webhook", one(base, "") + version("v2", true, false, "size: {type: integer}\n", ""),
			names + "conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {url: 'https://conv.example.com'}}}\nversions:\n" +
				version("v1", true, false, base, "") + version("v2", true, true, "size: {type: integer}\n", ""),
			[]string{object("a", "{size: 1, name: x}")}, nil, nil, nil, nil},
		{"maximum lowered (ratcheted)", one(base, ""), one("size: {type: integer, maximum: 5}\nname: {type: string}\n", ""),
			[]string{object("a", "{size: 1}"), object("b", "{size: 9}")},
			[]string{"BoundTightened spec.size: b"}, nil, []string{"b spec.size Invalid value"}, nil},
		{"enum tightened (ratcheted)", one("mode: {type: string, enum: [a, b, c]}\n", ""), one("mode: {type: string, enum: [a, b]}\n", ""),
			[]string{object("a", "{mode: a}"), object("c", "{mode: c}")},
			[]string{"EnumTightened spec.mode: c"}, nil, []string{"c spec.mode Unsupported value"}, nil},
		{"map values: maxLength added, a field of its objects removed", one("m: {type: object, additionalProperties: {type: object, properties: {a: {type: string}, b: {type: string}}}}\n", ""),
			one("m: {type: object, additionalProperties: {type: object, properties: {a: {type: string, maxLength: 2}}}}\n", ""),
			[]string{object("a", "{m: {k1: {a: abc}, k2: {a: ab, b: x}}}"), object("b", "{m: {k: {a: ab}}}")},
			[]string{"FieldRemoved spec.m[*].b: a", "BoundTightened spec.m[*].a: a"}, []string{"a spec.m.k2.b UnknownField"}, []string{"a spec.m.k1.a Too long"}, nil},
		{"rule added", one(base, ""), one(base, "x-kubernetes-validations: [{rule: 'self.size < 10'}]\n"),
			[]string{object("a", "{size: 1}"), object("b", "{size: 20}")},
			[]string{"RuleAdded spec: b"}, nil, []string{"b spec Invalid value"}, nil},
		// The server refuses both scope changes; each object's namespace
		// errors are the scope change's (one without a namespace was
		// created in the request's).
		{"scope Namespaced to Cluster", one(base, ""), strings.Replace(one(base, ""), "scope: Namespaced", "scope: Cluster", 1),
			[]string{object("a", "{size: 1}"), "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: b}\nspec: {size: 2}\n"},
			[]string{"ScopeChanged spec.scope: a, b"}, nil, nil, []string{"a metadata.namespace Forbidden", "b metadata.namespace Forbidden"}},
		{"scope Cluster to Namespaced", strings.Replace(one(base, ""), "scope: Namespaced", "scope: Cluster", 1), one(base, ""),
			[]string{"apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: a}\nspec: {size: 1}\n"},
			[]string{"ScopeChanged spec.scope: a"}, nil, nil, []string{"a metadata.namespace Required value"}},
		// The rule reads a field removed: it no longer compiles, the server
		// refuses the CRD update, and every object's validation fails on it.
		{"rule no longer compiles", one(base, "x-kubernetes-validations: [{rule: 'self.name != \"x\"'}]\n"),
			one("size: {type: integer}\n", "x-kubernetes-validations: [{rule: 'self.name != \"x\"'}]\n"),
			[]string{object("a", "{size: 1, name: y}")},
			[]string{"Refused spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: a", "FieldRemoved spec.name: a"},
			[]string{"a spec.name UnknownField"}, []string{"a spec Invalid value"}, []string{"a spec Invalid value"}},
		// An object of a file without a name (issue 38): the old CRD refuses
		// its create and its unchanged write as the new one does; that is
		// not the upgrade's doing, and nothing of it is left unexplained.
		{"an object without a name", one(base, ""), one("size: {type: integer, maximum: 5}\nname: {type: string}\n", ""),
			[]string{"apiVersion: example.com/v1\nkind: Foo\nmetadata: {namespace: default}\nspec: {size: 9}\n"},
			[]string{"BoundTightened spec.size: "}, nil, []string{" spec.size Invalid value"}, nil},
		{"list type atomic to set (duplicates)", one("list: {type: array, items: {type: string}}\n", ""),
			one("list: {type: array, x-kubernetes-list-type: set, items: {type: string}}\n", ""),
			[]string{object("a", "{list: [p, q]}"), object("b", "{list: [x, x]}")},
			[]string{"ListTypeChanged spec.list: b"}, nil, []string{"b spec.list[1] Duplicate value"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, new := crd(t, tc.old, ""), crd(t, tc.new, "")
			changes := crdupgrade.Compare(old, new, strategy.Validators{})
			v := strategy.Validators{}
			var impacts []*crdupgrade.ObjectImpact
			var lost, refused, updateRefused []string
			for i, obj := range tc.objects {
				docs, err := document.Read(strings.NewReader(obj), fmt.Sprintf("obj%d.yaml", i))
				if err != nil {
					t.Fatal(err)
				}
				imp, err := crdupgrade.Impact(docs[0], old.CRD, new.CRD, v, "default")
				if err != nil {
					t.Fatal(err)
				}
				impacts = append(impacts, imp)
				for _, c := range imp.Changes {
					lost = append(lost, fmt.Sprintf("%s %s %s", imp.Object.Name, c.Path, c.Reason))
				}
				for _, c := range imp.NextWrite {
					lost = append(lost, fmt.Sprintf("%s %s %s, next write as %s", imp.Object.Name, c.Path, c.Reason, imp.WrittenAs))
				}
				for _, e := range imp.Errors {
					refused = append(refused, fmt.Sprintf("%s %s %s", imp.Object.Name, e.Field, e.Type))
				}
				for _, e := range imp.UpdateErrors {
					updateRefused = append(updateRefused, fmt.Sprintf("%s %s %s", imp.Object.Name, e.Field, e.Type))
				}
			}
			tally := crdupgrade.NewTally(changes)
			var unexplained []crdupgrade.Unexplained
			for _, imp := range impacts {
				unexplained = append(unexplained, tally.Add(imp)...)
			}
			var got []string
			for _, a := range tally.Affected() {
				if len(a.Objects) == 0 {
					continue
				}
				var names []string
				for _, o := range a.Objects {
					names = append(names, o.Name)
				}
				got = append(got, fmt.Sprintf("%s %s: %s", a.Change.Kind, a.Change.Path, strings.Join(names, ", ")))
			}
			for _, d := range []struct {
				what      string
				want, got []string
			}{{"affected", tc.want, got}, {"lost", tc.lost, lost}, {"refused", tc.refused, refused}, {"refused on a no-op update", tc.updateRefused, updateRefused}} {
				if diff := cmp.Diff(d.want, d.got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", d.what, diff)
				}
			}
			if len(unexplained) > 0 {
				t.Errorf("unexplained: %+v", unexplained)
			}
		})
	}
}

// The versions an upgrade removes or stops serving, and who uses them: the
// manifest of an object of a file, at its apiVersion's line; the field
// managers of an object of a cluster (no file), from its listing in the
// first version the old CRD serves; none of a version the old CRD did
// not serve either, nor of another group. Each change counts the objects
// that use its version, and nothing is left unexplained.
func TestImpactVersionUses(t *testing.T) {
	// v1alpha1 removed, v1beta1 no longer served, v1 the storage version;
	// v0 was not served before either.
	old := crd(t, names+"versions:\n"+version("v0", false, false, base, "")+version("v1alpha1", true, false, base, "")+
		version("v1beta1", true, false, base, "")+version("v1", true, true, base, ""), "")
	new := crd(t, names+"versions:\n"+version("v0", false, false, base, "")+version("v1beta1", false, false, base, "")+
		version("v1", true, true, base, ""), "")
	changes := crdupgrade.Compare(old, new, strategy.Validators{})
	fromFile := func(name, apiVersion string) *document.Document {
		docs, err := document.Read(strings.NewReader("# "+name+"\napiVersion: "+apiVersion+"\nkind: Foo\nmetadata: {name: "+name+", namespace: default}\nspec: {size: 1}\n"), name+".yaml")
		if err != nil {
			t.Fatal(err)
		}
		return docs[0]
	}
	managed := []interface{}{
		map[string]interface{}{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "example.com/v1alpha1"},
		map[string]interface{}{"manager": "gadget-controller", "operation": "Update", "apiVersion": "example.com/v1beta1", "subresource": "status"},
		map[string]interface{}{"manager": "kubectl", "operation": "Apply", "apiVersion": "example.com/v1"},
		map[string]interface{}{"manager": "other", "operation": "Update", "apiVersion": "other.example.com/v1alpha1"},
		map[string]interface{}{"manager": "before", "operation": "Update", "apiVersion": "example.com/v0"},
		map[string]interface{}{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "example.com/v1alpha1"},
	}
	live := func(name, listedIn string) *document.Document {
		return &document.Document{Object: map[string]interface{}{
			"apiVersion": "example.com/" + listedIn, "kind": "Foo",
			"metadata": map[string]interface{}{"name": name, "namespace": "default", "managedFields": managed},
			"spec":     map[string]interface{}{"size": int64(1)},
		}}
	}
	tally := crdupgrade.NewTally(changes)
	var got, uses []string
	for _, d := range []*document.Document{
		fromFile("a", "example.com/v1alpha1"), fromFile("b", "example.com/v1beta1"), fromFile("c", "example.com/v1"),
		// One object of a cluster, listed in each version the old CRD serves.
		live("e", "v1alpha1"), live("e", "v1beta1"), live("e", "v1"),
	} {
		imp, err := crdupgrade.Impact(d, old.CRD, new.CRD, strategy.Validators{}, "default")
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range imp.Unserved {
			uses = append(uses, fmt.Sprintf("%s %s removed=%v manager=%s %s %s line=%d", imp.Object.Name, u.Version, u.Removed, u.Manager, u.Operation, u.Subresource, u.Line))
		}
		if x := tally.Add(imp); len(x) > 0 {
			t.Errorf("%s: unexplained: %+v", imp.Object.Name, x)
		}
	}
	for _, a := range tally.Affected() {
		var names []string
		for _, o := range a.Objects {
			names = append(names, o.Name)
		}
		got = append(got, fmt.Sprintf("%s %s counted=%v: %s", a.Change.Kind, a.Change.Version, a.Counted, strings.Join(names, ", ")))
	}
	wantUses := []string{
		"a v1alpha1 removed=true manager=   line=2",
		"b v1beta1 removed=false manager=   line=2",
		"e v1alpha1 removed=true manager=kubectl-client-side-apply Update  line=0",
		"e v1beta1 removed=false manager=gadget-controller Update status line=0",
	}
	if diff := cmp.Diff(wantUses, uses); diff != "" {
		t.Errorf("uses (-want +got):\n%s", diff)
	}
	want := []string{"VersionRemoved v1alpha1 counted=true: a, e", "VersionUnserved v1beta1 counted=true: b, e"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("affected (-want +got):\n%s", diff)
	}
}

// A stored version removed: the manifests of it are its uses, named, but
// the change concerns every object (any may be stored in it), uncounted.
func TestImpactStoredVersionUse(t *testing.T) {
	old := crd(t, names+"versions:\n"+version("v1alpha1", true, true, base, "")+version("v1", true, false, base, ""), "")
	new := crd(t, names+"versions:\n"+version("v1", true, true, base, ""), "")
	tally := crdupgrade.NewTally(crdupgrade.Compare(old, new, nil))
	for _, apiVersion := range []string{"example.com/v1alpha1", "example.com/v1"} {
		docs, err := document.Read(strings.NewReader("apiVersion: "+apiVersion+"\nkind: Foo\nmetadata: {name: "+path.Base(apiVersion)+", namespace: default}\n"), "o.yaml")
		if err != nil {
			t.Fatal(err)
		}
		imp, err := crdupgrade.Impact(docs[0], old.CRD, new.CRD, strategy.Validators{}, "default")
		if err != nil {
			t.Fatal(err)
		}
		if x := tally.Add(imp); len(x) > 0 {
			t.Errorf("unexplained: %+v", x)
		}
	}
	var got []string
	for _, a := range tally.Affected() {
		var names []string
		for _, o := range a.Objects {
			names = append(names, o.Name)
		}
		got = append(got, fmt.Sprintf("%s %s counted=%v: %s", a.Change.Kind, a.Change.Version, a.Counted, strings.Join(names, ", ")))
	}
	want := []string{"StoredVersionRemoved v1alpha1 counted=false: v1alpha1", "StorageMoved v1 counted=false: "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("affected (-want +got):\n%s", diff)
	}
}
