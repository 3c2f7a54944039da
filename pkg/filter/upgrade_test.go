package filter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The upgrade of test/e2e/testdata/crdupgrade, paths from the repository's root.
const (
	upgradeOld     = "test/e2e/testdata/crdupgrade/old.yaml"
	upgradeNew     = "test/e2e/testdata/crdupgrade/new.yaml"
	upgradeObjects = "test/e2e/testdata/crdupgrade/objects.yaml"
)

// The changes of the upgrade, as results on the CRD, and what each object
// of the items loses or would be refused, as results on it.
var (
	upgradeChanges = []string{
		`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.extra" no longer x-kubernetes-preserve-unknown-fields: the fields its schema does not name are pruned [1 object: Gizmo default/g1]`,
		`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.name" removed from the schema: pruned from every stored object [1 object: Gizmo default/g1]`,
		`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.list" x-kubernetes-list-type changed from "atomic" to "set" [1 object: Gizmo default/g3]`,
		`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.mode" no longer allows ["c"] [1 object: Gizmo default/g2]`,
		`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.size" now has maximum 5 [1 object: Gizmo default/g2]`,
		`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.size" now required [1 object: Gizmo default/g3]`,
	}
	upgradeDefault       = `CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.canary" new default "new": objects without it read as having it [4 objects: Gizmo default/g1, Gizmo default/g2, Gizmo default/g3, and 1 more]`
	upgradeObjectResults = []string{
		`Gizmo default/g1 spec.extra.drop: loses "spec.extra.drop" under the new CRD: pruned when read, for good on its next write (previous CustomResourceDefinition: test/e2e/testdata/crdupgrade/old.yaml:1)`,
		`Gizmo default/g1 spec.name: loses "spec.name" under the new CRD: pruned when read, for good on its next write (previous CustomResourceDefinition: test/e2e/testdata/crdupgrade/old.yaml:1)`,
		`Gizmo default/g2 spec.mode: a create of it again would be refused under the new CRD: spec.mode: Unsupported value: "c": supported values: "a", "b" (previous CustomResourceDefinition: test/e2e/testdata/crdupgrade/old.yaml:1)`,
		`Gizmo default/g2 spec.size: a create of it again would be refused under the new CRD: spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5 (previous CustomResourceDefinition: test/e2e/testdata/crdupgrade/old.yaml:1)`,
		`Gizmo default/g3 spec.list[1]: a create of it again would be refused under the new CRD: spec.list[1]: Duplicate value: "p" (previous CustomResourceDefinition: test/e2e/testdata/crdupgrade/old.yaml:1)`,
		`Gizmo default/g3 spec.size: a create of it again would be refused under the new CRD: spec.size: Required value (previous CustomResourceDefinition: test/e2e/testdata/crdupgrade/old.yaml:1)`,
	}
	// What the server's defaulting adds to the new CRD as it stores it.
	upgradeStored = `CustomResourceDefinition gizmos.upgrade.example.com spec.conversion: defaulted "spec.conversion" to {"strategy":"None"}`
	// What pruning g1 against the new CRD removes from the item.
	upgradePrune = []string{
		`Gizmo default/g1 spec.extra.drop: pruned unknown field "spec.extra.drop"`,
		`Gizmo default/g1 spec.name: pruned unknown field "spec.name"`,
	}
)

// unservedResult is the result on a gizmo of v1 when the new CRD no longer
// serves v1.
func unservedResult(name string) string {
	return "Gizmo default/" + name + " apiVersion: apiVersion upgrade.example.com/v1 is no longer served by the new CRD: its manifest is refused once the new CRD is applied (previous CustomResourceDefinition: test/e2e/testdata/crdupgrade/old.yaml:1)"
}

// withoutObjects are the changes' lines without the objects they hurt.
func withoutObjects(lines []string) []string {
	var out []string
	for _, l := range lines {
		if i := strings.LastIndex(l, " ["); i >= 0 {
			l = l[:i]
		}
		out = append(out, l)
	}
	return out
}

// withSeverity prefixes each line with a severity.
func withSeverity(sev framework.Severity, lines ...string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, "["+string(sev)+"] "+l)
	}
	return out
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// A ResourceList with CRDs whose previous versions are in previous: the
// upgrade's changes as results on each CRD, with the objects of the items
// they hurt, and per object what it loses or why the server would refuse
// it; items are not changed by the upgrade.
func TestUpgrade(t *testing.T) {
	t.Chdir("../..")
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	newCRD, objects := read(upgradeNew), read(upgradeObjects)
	// The new CRD with a version v2 the old one lacks; an object of it.
	withV2 := strings.Replace(newCRD, "  versions:\n", `  versions:
  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, 1)
	// The new CRD serving only v2, converted by a webhook: no object of v1
	// can be applied, nor read without the webhook.
	v2Only := strings.Replace(newCRD, "  versions:\n  - name: v1\n    served: true\n    storage: true\n", `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "https://example.com/convert"}
  versions:
  - name: v2
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1
    served: false
    storage: false
`, 1)
	gizmoV2 := "apiVersion: upgrade.example.com/v2\nkind: Gizmo\nmetadata: {name: g5, namespace: default}\nspec: {anything: 1}\n"
	badPrevious := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(badPrevious, []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gizmos.upgrade.example.com}\nspec: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		config string
		items  []string
		want   []string
		// fails: an error result fails the run.
		fails bool
		err   string
		tags  map[string]string // of the result whose line is the first of want
	}{{
		name:   "the default failOn",
		config: "previous: " + upgradeOld,
		items:  []string{newCRD, objects},
		want: concat(withSeverity(framework.Error, upgradeObjectResults...), withSeverity(framework.Error, upgradeChanges...),
			withSeverity(framework.Warning, upgradeStored), withSeverity(framework.Warning, upgradePrune...), withSeverity(framework.Warning, upgradeDefault)),
		fails: true,
		tags:  map[string]string{"finding": "DataLoss", "reason": "UnknownField"},
	}, {
		name:   "no failOn: warnings",
		config: "previous: [" + upgradeOld + "]\nfailOn: []",
		items:  []string{newCRD, objects},
		want:   withSeverity(framework.Warning, concat([]string{upgradeStored}, upgradePrune, upgradeObjectResults, upgradeChanges, []string{upgradeDefault})...),
	}, {
		name:   "failOn CRDChange",
		config: "previous: " + upgradeOld + "\nfailOn: [CRDChange]",
		items:  []string{newCRD, objects},
		want: concat(withSeverity(framework.Error, upgradeDefault),
			withSeverity(framework.Warning, concat([]string{upgradeStored}, upgradePrune, upgradeObjectResults, upgradeChanges)...)),
		fails: true,
		tags:  map[string]string{"finding": "CRDChange", "change": "DefaultAdded", "version": "v1", "path": "spec.canary", "objects": "4", "checked": "4"},
	}, {
		// No object among the items: the cluster may hold some, but
		// none here is hurt.
		name:   "no objects: warnings",
		config: "previous: " + upgradeOld,
		items:  []string{newCRD},
		want: withSeverity(framework.Warning, upgradeStored,
			`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.extra" no longer x-kubernetes-preserve-unknown-fields: the fields its schema does not name are pruned`,
			`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.name" removed from the schema: pruned from every stored object`,
			`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.list" x-kubernetes-list-type changed from "atomic" to "set"`,
			`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.mode" no longer allows ["c"]`,
			`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.size" now has maximum 5`,
			`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.size" now required`,
			`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.canary" new default "new": objects without it read as having it`),
		tags: map[string]string{"finding": "DataLoss", "change": "PreserveUnknownRemoved", "version": "v1", "path": "spec.extra", "objects": "0", "checked": "0"},
	}, {
		// The server refuses the CRD update: an error with or without
		// objects; the scope change it refuses concerns every object,
		// and there is none.
		name:   "an update the server refuses",
		config: "previous: " + upgradeOld,
		items:  []string{strings.Replace(newCRD, "scope: Namespaced", "scope: Cluster", 1)},
		want: concat(withSeverity(framework.Error,
			`CustomResourceDefinition gizmos.upgrade.example.com: the server would refuse the CRD update: spec.scope: Invalid value: "Cluster": field is immutable`),
			withSeverity(framework.Warning, upgradeStored,
				`CustomResourceDefinition gizmos.upgrade.example.com: scope changed from Namespaced to Cluster: every client's URLs change`,
				`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.extra" no longer x-kubernetes-preserve-unknown-fields: the fields its schema does not name are pruned`,
				`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.name" removed from the schema: pruned from every stored object`,
				`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.list" x-kubernetes-list-type changed from "atomic" to "set"`,
				`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.mode" no longer allows ["c"]`,
				`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.size" now has maximum 5`,
				`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.size" now required`,
				`CustomResourceDefinition gizmos.upgrade.example.com: v1: "spec.canary" new default "new": objects without it read as having it`)),
		fails: true,
		tags:  map[string]string{"finding": "Breaking", "change": "Refused", "path": "spec.scope", "objects": "0", "checked": "0"},
	}, {
		// An object of a version the old CRD lacks: a new object, noted
		// and not checked as an existing one; the others are.
		name:   "an object of a new version",
		config: "previous: " + upgradeOld,
		items:  []string{withV2, objects, gizmoV2},
		want: concat(withSeverity(framework.Error, upgradeObjectResults...), withSeverity(framework.Error, upgradeChanges...),
			withSeverity(framework.Warning, upgradeStored), withSeverity(framework.Warning, upgradePrune...),
			withSeverity(framework.Warning, `Gizmo default/g5 spec.anything: pruned "spec.anything" when stored: not in the schema of the storage version v1`, upgradeDefault),
			withSeverity(framework.Info,
				`Gizmo default/g5: the previous CustomResourceDefinition gizmos.upgrade.example.com has no version v2: a new object, not one the upgrade can hurt; not checked as one`,
				`CustomResourceDefinition gizmos.upgrade.example.com: version v2 added`)),
		fails: true,
	}, {
		// A CRD of crdPaths is a schema, not an upgrade: the objects are
		// checked as creates against it.
		name:   "a CRD of crdPaths",
		config: "previous: " + upgradeOld + "\ncrdPaths: " + upgradeNew,
		items:  []string{objects},
		want: concat(withSeverity(framework.Error,
			`Gizmo default/g2 spec.mode: the server would refuse it: spec.mode: Unsupported value: "c": supported values: "a", "b"`,
			`Gizmo default/g2 spec.size: the server would refuse it: spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5`,
			`Gizmo default/g3 spec.list[1]: the server would refuse it: spec.list[1]: Duplicate value: "p"`,
			`Gizmo default/g3 spec.size: the server would refuse it: spec.size: Required value`),
			withSeverity(framework.Warning, upgradePrune...)),
		fails: true,
	}, {
		// Without the old CRD, the new one is new: each object is a create.
		name:   "no previous CRD",
		config: "failOn: []",
		items:  []string{newCRD, objects},
		want: withSeverity(framework.Warning, upgradeStored,
			upgradePrune[0], upgradePrune[1],
			`Gizmo default/g2 spec.mode: the server would refuse it: spec.mode: Unsupported value: "c": supported values: "a", "b"`,
			`Gizmo default/g2 spec.size: the server would refuse it: spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5`,
			`Gizmo default/g3 spec.list[1]: the server would refuse it: spec.list[1]: Duplicate value: "p"`,
			`Gizmo default/g3 spec.size: the server would refuse it: spec.size: Required value`),
	}, {
		// No item can be applied: each is refused, Breaking at its
		// apiVersion, and counted by the change (issue 43; it was an
		// input error). With the webhook, the rest is not computed.
		name:   "an object of a version the new CRD does not serve",
		config: "previous: " + upgradeOld,
		items:  []string{v2Only, objects},
		want: concat(withSeverity(framework.Error,
			unservedResult("g1"), unservedResult("g2"), unservedResult("g3"), unservedResult("g4"),
			`CustomResourceDefinition gizmos.upgrade.example.com: version v1 no longer served: its clients break [4 objects: Gizmo default/g1, Gizmo default/g2, Gizmo default/g3, and 1 more]`),
			withSeverity(framework.Warning, concat(withoutObjects(upgradeChanges), []string{
				`CustomResourceDefinition gizmos.upgrade.example.com: conversion strategy changed from None to Webhook`,
				withoutObjects([]string{upgradeDefault})[0],
				`CustomResourceDefinition gizmos.upgrade.example.com: storage version moved from v1 to v2: existing objects stay stored in v1 until rewritten`,
			})...),
			withSeverity(framework.Info, `CustomResourceDefinition gizmos.upgrade.example.com: version v2 added`)),
		fails: true,
		tags:  map[string]string{"finding": "Breaking"},
	}, {
		name:   "a previous CRD the server cannot decode",
		config: "previous: " + badPrevious + "\nloadRestrictor: LoadRestrictionsNone",
		items:  []string{newCRD, objects},
		err:    "previous: " + badPrevious + ":1: ",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			input := strings.Join(tc.items, "\n---\n")
			items, err := (&kio.ByteReader{Reader: strings.NewReader(input)}).Read()
			if err != nil {
				t.Fatal(err)
			}
			before := make([]string, len(items))
			for i, it := range items {
				before[i] = it.MustString()
			}
			rl := &framework.ResourceList{Items: items}
			if rl.FunctionConfig, err = yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nmetadata: {name: check}\nprune: false\n" + tc.config); err != nil {
				t.Fatal(err)
			}
			perr := (Processor{}).Process(rl)
			if tc.err != "" {
				if perr == nil || !strings.Contains(perr.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", perr, tc.err)
				}
				return
			}
			var results framework.Results
			switch {
			case perr != nil && !errors.As(perr, &results):
				t.Fatal(perr)
			case tc.fails != (perr != nil):
				t.Errorf("the run failed: %v, want %v", perr != nil, tc.fails)
			}
			var got []string
			results = findingResults(t, rl.Results)
			for _, r := range results {
				got = append(got, resultLine(r))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("results (-want +got):\n%s", d)
			}
			// The tags of the first result of the finding tc.tags names.
			found := tc.tags == nil
			for i, r := range results {
				if found || r.Tags["finding"] != tc.tags["finding"] {
					continue
				}
				found = true
				if d := cmp.Diff(tc.tags, r.Tags); d != "" {
					t.Errorf("tags of %s (-want +got):\n%s", got[i], d)
				}
			}
			if !found {
				t.Errorf("no result of the finding %s", tc.tags["finding"])
			}
			// prune: false, and the upgrade changes nothing.
			for i, it := range rl.Items {
				if s := it.MustString(); s != before[i] {
					t.Errorf("item %d changed:\n%s\nwas:\n%s", i, s, before[i])
				}
			}
		})
	}
}

// resultLine is a result as "[severity] Kind namespace/name field: message".
func resultLine(r *framework.Result) string {
	where := r.ResourceRef.Kind + " "
	if r.ResourceRef.Namespace != "" {
		where += r.ResourceRef.Namespace + "/"
	}
	where += r.ResourceRef.Name
	if r.Field != nil {
		where += " " + r.Field.Path
	}
	return fmt.Sprintf("[%s] %s: %s", r.Severity, where, r.Message)
}
