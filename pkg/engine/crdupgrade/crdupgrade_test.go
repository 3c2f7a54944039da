package crdupgrade_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// crd is a CRD of foos.example.com: spec is the YAML under spec after group
// (names, scope, versions...), status is under status ("" for none).
func crd(t *testing.T, spec, status string) crdupgrade.CRD {
	t.Helper()
	doc := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.example.com\nspec:\n  group: example.com\n" +
		indent(strings.TrimPrefix(spec, "\n"), "  ")
	if status != "" {
		doc += "status:\n" + indent(strings.TrimPrefix(status, "\n"), "  ")
	}
	var raw map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(doc), &raw); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	c, ok, err := schema.DecodeObject(raw, nil)
	if err != nil || !ok {
		t.Fatalf("decode: %v %v\n%s", ok, err, doc)
	}
	return crdupgrade.CRD{CRD: c, Raw: raw}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

const names = "names: {plural: foos, singular: foo, kind: Foo, listKind: FooList, shortNames: [fo]}\nscope: Namespaced\n"

// one is a CRD with one version v1 whose spec has the properties given
// (YAML lines under spec.properties), with spec's extra keywords.
func one(props, specKeywords string) string {
	return names + "versions:\n" + version("v1", true, true, props, specKeywords)
}

func version(name string, served, storage bool, props, specKeywords string) string {
	return fmt.Sprintf("- name: %s\n  served: %v\n  storage: %v\n  schema:\n    openAPIV3Schema:\n      type: object\n      properties:\n        spec:\n          type: object\n", name, served, storage) +
		indent(specKeywords, "          ") +
		"          properties:\n" + indent(props, "            ")
}

const base = "size: {type: integer}\nname: {type: string}\n"

// The changes each kind of edit gives, by hand: severity, kind, version,
// path (and keyword); Refused are the server's own (its errors' fields),
// checked against the server's code in the strategy package's tests.
func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		// oldStatus is the old CRD's status, as a cluster has it; "cluster"
		// is an old CRD of a cluster, without its document.
		oldStatus string
		want      []string
	}{
		{"no change", one(base, ""), one(base, ""), "", nil},
		{"scope", one(base, ""), strings.Replace(one(base, ""), "scope: Namespaced", "scope: Cluster", 1), "",
			[]string{"Breaking Refused  spec.scope (Invalid value)", "Breaking ScopeChanged  spec.scope"}},
		{"group", one(base, ""), strings.Replace(one(base, ""), "scope:", "group: example.org\nscope:", 1), "",
			[]string{"Breaking GroupChanged  spec.group", "Breaking Refused  spec.group (Invalid value)"}},
		{"kind and plural", one(base, ""), strings.Replace(one(base, ""), "plural: foos, singular: foo, kind: Foo", "plural: bars, singular: bar, kind: Bar", 1), "",
			[]string{"Breaking NameChanged  spec.names.kind (kind)", "Breaking Refused  spec.names.kind (Invalid value)",
				"Breaking NameChanged  spec.names.plural (plural)", "Breaking Refused  spec.names.plural (Invalid value)",
				"Warning NameChanged  spec.names.singular (singular)"}},
		{"short name removed", one(base, ""), strings.Replace(one(base, ""), ", shortNames: [fo]", "", 1), "",
			[]string{"Warning NameRemoved  spec.names.shortNames (shortNames)"}},
		{"version added", one(base, ""), one(base, "") + version("v2", true, false, base, ""), "",
			[]string{"Info VersionAdded v2 spec.versions[v2]"}},
		{"served version removed", one(base, "") + version("v2", true, false, base, ""), one(base, ""), "",
			[]string{"Breaking VersionRemoved v2 spec.versions[v2]"}},
		{"stored version removed", names + "versions:\n" + version("v1", true, false, base, "") + version("v2", true, true, base, ""),
			names + "versions:\n" + version("v2", true, true, base, ""), "storedVersions: [v1, v2]\n",
			[]string{"Breaking Refused  status.storedVersions[0] (Invalid value)", "Breaking StoredVersionRemoved v1 spec.versions[v1]"}},
		{"version no longer served", one(base, "") + version("v2", true, false, base, ""), one(base, "") + version("v2", false, false, base, ""), "",
			[]string{"Breaking VersionUnserved v2 spec.versions[v2].served"}},
		{"storage moved", one(base, "") + version("v2", true, false, base, ""), names + "versions:\n" + version("v1", true, false, base, "") + version("v2", true, true, base, ""), "",
			[]string{"Warning StorageMoved v2 spec.versions[v2].storage"}},
		// Objects stored in v1 keep name until their next write stores them in v2.
		{"storage moved to a version without a field", one(base, "") + version("v2", true, false, "size: {type: integer}\n", ""),
			names + "versions:\n" + version("v1", true, false, base, "") + version("v2", true, true, "size: {type: integer}\n", ""), "",
			[]string{"DataLoss DroppedOnWrite v2 spec.name", "Warning StorageMoved v2 spec.versions[v2].storage"}},
		// A cluster's CRD whose objects may still be stored in v1 (not migrated).
		{"a stored version's field the storage version lacks", one(base, "") + version("v2", true, false, "size: {type: integer}\n", ""),
			names + "versions:\n" + version("v1", true, false, base, "") + version("v2", true, true, "size: {type: integer}\n", ""),
			"storedVersions: [v1, v2]\n",
			[]string{"DataLoss DroppedOnWrite v2 spec.name", "Warning StorageMoved v2 spec.versions[v2].storage"}},
		{"field removed from the storage version", one(base, ""), one("size: {type: integer}\n", ""), "",
			[]string{"DataLoss FieldRemoved v1 spec.name"}},
		{"field removed from a served version", one(base, "") + version("v2", true, false, base, ""), one(base, "") + version("v2", true, false, "size: {type: integer}\n", ""), "",
			[]string{"Breaking FieldRemoved v2 spec.name"}},
		{"field removed, kept as unknown", one(base, ""), one("size: {type: integer}\n", "x-kubernetes-preserve-unknown-fields: true\n"), "",
			[]string{"Info FieldRemoved v1 spec.name (x-kubernetes-preserve-unknown-fields)"}},
		{"type changed", one(base, ""), one("size: {type: string}\nname: {type: string}\n", ""), "",
			[]string{"Invalid TypeChanged v1 spec.size (type)"}},
		{"integer to number", one(base, ""), one("size: {type: number}\nname: {type: string}\n", ""), "",
			[]string{"Info TypeChanged v1 spec.size (type)"}},
		{"int-or-string to integer", one("size: {x-kubernetes-int-or-string: true}\n", ""), one("size: {type: integer}\n", ""), "",
			[]string{"Invalid TypeChanged v1 spec.size (x-kubernetes-int-or-string)"}},
		{"required added", one(base, ""), one(base, "required: [name]\n"), "",
			[]string{"Invalid RequiredAdded v1 spec.name (required)"}},
		{"required added with a default", one(base, ""), one("size: {type: integer}\nname: {type: string, default: x}\n", "required: [name]\n"), "",
			[]string{"Warning DefaultAdded v1 spec.name (default)", "Warning RequiredAdded v1 spec.name (required)"}},
		{"enum tightened", one("mode: {type: string, enum: [a, b, c]}\n", ""), one("mode: {type: string, enum: [a, b, d]}\n", ""), "",
			[]string{"Invalid EnumTightened v1 spec.mode (enum)", "Info EnumLoosened v1 spec.mode (enum)"}},
		{"enum added", one(base, ""), one("size: {type: integer}\nname: {type: string, enum: [a]}\n", ""), "",
			[]string{"Invalid EnumTightened v1 spec.name (enum)"}},
		{"pattern added", one(base, ""), one("size: {type: integer}\nname: {type: string, pattern: '^[a-z]+$'}\n", ""), "",
			[]string{"Invalid PatternChanged v1 spec.name (pattern)"}},
		{"pattern removed", one("name: {type: string, pattern: '^[a-z]+$'}\n", ""), one("name: {type: string}\n", ""), "",
			[]string{"Info PatternChanged v1 spec.name (pattern)"}},
		{"format changed", one("name: {type: string, format: hostname}\n", ""), one("name: {type: string, format: uuid}\n", ""), "",
			[]string{"Invalid FormatChanged v1 spec.name (format)"}},
		{"maximum lowered, minimum lowered", one("size: {type: integer, minimum: 1, maximum: 10}\n", ""), one("size: {type: integer, minimum: 0, maximum: 5}\n", ""), "",
			[]string{"Invalid BoundTightened v1 spec.size (maximum)", "Info BoundLoosened v1 spec.size (minimum)"}},
		{"exclusive maximum", one("size: {type: integer, maximum: 10}\n", ""), one("size: {type: integer, maximum: 10, exclusiveMaximum: true}\n", ""), "",
			[]string{"Invalid BoundTightened v1 spec.size (exclusiveMaximum)"}},
		{"maxLength added, maxItems lowered", one("name: {type: string}\nlist: {type: array, maxItems: 5, items: {type: string}}\n", ""),
			one("name: {type: string, maxLength: 3}\nlist: {type: array, maxItems: 4, items: {type: string}}\n", ""), "",
			[]string{"Invalid BoundTightened v1 spec.list (maxItems)", "Invalid BoundTightened v1 spec.name (maxLength)"}},
		{"minItems raised, in items", one("list: {type: array, items: {type: string, minLength: 1}}\n", ""), one("list: {type: array, items: {type: string, minLength: 2}}\n", ""), "",
			[]string{"Invalid BoundTightened v1 spec.list[*] (minLength)"}},
		{"preserve-unknown-fields removed", one(base, "x-kubernetes-preserve-unknown-fields: true\n"), one(base, ""), "",
			[]string{"DataLoss PreserveUnknownRemoved v1 spec (x-kubernetes-preserve-unknown-fields)"}},
		{"list type atomic to map", one("list: {type: array, items: {type: object, required: [k], properties: {k: {type: string}}}}\n", ""),
			one("list: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [k], items: {type: object, required: [k], properties: {k: {type: string}}}}\n", ""), "",
			[]string{"Invalid ListTypeChanged v1 spec.list (x-kubernetes-list-type)"}},
		{"map keys changed", one("list: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [k], items: {type: object, required: [k, j], properties: {k: {type: string}, j: {type: string}}}}\n", ""),
			one("list: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [k, j], items: {type: object, required: [k, j], properties: {k: {type: string}, j: {type: string}}}}\n", ""), "",
			[]string{"Invalid MapKeysChanged v1 spec.list (x-kubernetes-list-map-keys)"}},
		{"list type set to atomic", one("list: {type: array, x-kubernetes-list-type: set, items: {type: string}}\n", ""), one("list: {type: array, items: {type: string}}\n", ""), "",
			[]string{"Warning ListTypeChanged v1 spec.list (x-kubernetes-list-type)"}},
		{"map type", one("m: {type: object, additionalProperties: {type: string}}\n", ""), one("m: {type: object, x-kubernetes-map-type: atomic, additionalProperties: {type: string}}\n", ""), "",
			[]string{"Warning MapTypeChanged v1 spec.m (x-kubernetes-map-type)"}},
		{"structural to non-structural", one(base, ""), one("size: {type: integer}\nname: {}\n", ""), "",
			[]string{"Breaking Refused  spec.validation.openAPIV3Schema.properties[spec].properties[name].type (Required value)",
				"Breaking NonStructural v1 spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[name].type",
				"Invalid TypeChanged v1 spec.name (type)"}},
		{"rule added", one(base, ""), one(base, "x-kubernetes-validations: [{rule: 'self.size < 10'}]\n"), "",
			[]string{"Invalid RuleAdded v1 spec (x-kubernetes-validations)"}},
		{"transition rule added", one(base, ""), one(base, "x-kubernetes-validations: [{rule: 'self.name == oldSelf.name'}]\n"), "",
			[]string{"Warning ImmutableAdded v1 spec (x-kubernetes-validations)"}},
		{"rule removed", one(base, "x-kubernetes-validations: [{rule: 'self.size < 10'}]\n"), one(base, ""), "",
			[]string{"Info RuleRemoved v1 spec (x-kubernetes-validations)"}},
		{"mutability marker added", one(base, ""), one("size: {type: integer}\nname: {type: string, x-kubernetes-mutability: Immutable}\n", ""), "",
			[]string{"Warning ImmutableAdded v1 spec.name (x-kubernetes-mutability)"}},
		{"mutability marker, the old CRD of a cluster (no document)", one(base, ""), one("size: {type: integer}\nname: {type: string, x-kubernetes-mutability: Immutable}\n", ""), "cluster", nil},
		{"default added, changed, removed", one("a: {type: string}\nb: {type: string, default: x}\nc: {type: string, default: y}\n", ""),
			one("a: {type: string, default: z}\nb: {type: string, default: w}\nc: {type: string}\n", ""), "",
			[]string{"Warning DefaultAdded v1 spec.a (default)", "Warning DefaultChanged v1 spec.b (default)", "Info DefaultRemoved v1 spec.c (default)"}},
		{"new field with a default, and defaults below it", one(base, ""),
			one(base+"c: {type: object, default: {}, properties: {d: {type: string, default: x}, e: {type: object, properties: {f: {type: string, default: z}}}}}\n", ""), "",
			[]string{"Warning DefaultAdded v1 spec.c (default)", "Warning DefaultAdded v1 spec.c.d (default)"}},
		{"default of the same object, keys in another order", one("a: {type: object, properties: {x: {type: string}, y: {type: string}}, default: {x: a, y: b}}\n", ""),
			one("a: {type: object, properties: {x: {type: string}, y: {type: string}}, default: {y: b, x: a}}\n", ""), "", nil},
		{"status subresource added", one(base, ""), one(base, "") + "  subresources: {status: {}}\n", "",
			[]string{"Warning SubresourceAdded v1 spec.versions[v1].subresources.status (status)"}},
		{"nullable removed", one("name: {type: string, nullable: true}\n", ""), one("name: {type: string}\n", ""), "",
			[]string{"Warning NullableRemoved v1 spec.name (nullable)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := crd(t, tc.old, "")
			switch tc.oldStatus {
			case "cluster":
				old.Raw = nil
			case "":
			default:
				old = crd(t, tc.old, tc.oldStatus)
			}
			changes := crdupgrade.Compare(old, crd(t, tc.new, ""), strategy.Validators{})
			var got []string
			for _, ch := range changes {
				s := fmt.Sprintf("%s %s %s %s", ch.Severity, ch.Kind, ch.Version, ch.Path)
				if ch.Keyword != "" {
					s += " (" + ch.Keyword + ")"
				}
				got = append(got, s)
				// Every change is worded.
				if f := finding.FromCRDChange(ch); f.Message == "" || f.Check == "" {
					t.Errorf("%s: finding %+v", s, f)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s\n%+v", diff, changes)
			}
		})
	}
}
