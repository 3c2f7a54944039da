package crdtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// writeSuite writes a suite of the given cases against crd (a path
// relative to this package) and returns its file.
func writeSuite(t *testing.T, crd, cases string) string {
	t.Helper()
	abs, err := filepath.Abs(crd)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "s.test.yaml")
	if err := os.WriteFile(name, []byte("crds: "+abs+"\ncases:\n"+cases), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestStatusBadCases: subresource is read as the server takes it: status
// only of an update (no create of /status), scale refused as not
// supported yet, anything else unknown; each an input error at the
// subresource's line.
func TestStatusBadCases(t *testing.T) {
	const rollout = "{apiVersion: apps.example.com/v1, kind: Rollout, metadata: {name: web}, spec: {image: a, replicas: 1}}"
	crd, _ := filepath.Abs("../../../examples/status/crd.yaml")
	for _, tc := range []struct{ name, cases, want string }{
		{"create", "- name: a\n  subresource: status\n  object: " + rollout + "\n",
			"s.test.yaml:4: cases[0].subresource: a write of /status updates an object: expected an oldObject (the server has no create of /status)"},
		{"scale", "- name: a\n  subresource: scale\n  oldObject: " + rollout + "\n  object: " + rollout + "\n",
			"s.test.yaml:4: cases[0].subresource: scale is not supported yet"},
		{"unknown", "- name: a\n  subresource: spec\n  oldObject: " + rollout + "\n  object: " + rollout + "\n",
			`s.test.yaml:4: cases[0].subresource: expected status, not "spec"`},
		{"not a string", "- name: a\n  subresource: [status]\n  oldObject: " + rollout + "\n  object: " + rollout + "\n",
			"s.test.yaml:4: cases[0].subresource: expected a string"},
		{"upgrade", "- name: a\n  subresource: status\n  oldCRD: " + crd + "\n  object: " + rollout + "\n",
			"cases[0].subresource: a write of /status updates an object"},
	} {
		_, err := ReadFile(writeSuite(t, "../../../examples/status/crd.yaml", tc.cases))
		var ie *document.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an input error with %q", tc.name, err, tc.want)
		}
	}
}

// TestStatusWithoutSubresource: a write of /status of a CRD version
// without the status subresource is an input error at the case's
// subresource line: the server answers 404.
func TestStatusWithoutSubresource(t *testing.T) {
	const volume = "{apiVersion: storage.example.com/v1, kind: Volume, metadata: {name: data}, spec: {zone: z, size: 10}}"
	name := writeSuite(t, "../../../examples/lower/crd.yaml", "- name: a\n  oldObject: "+volume+"\n  object: "+volume+"\n  subresource: status\n")
	suites, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, lower := range []bool{false, true} {
		_, err = NewRunner(Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}, Lower: lower}).Run(context.Background(), suites[0])
		var ie *document.InputError
		want := name + `:6: case "a": subresource: version v1 of CustomResourceDefinition volumes.storage.example.com has no status subresource: the server answers 404 Not Found to a write of /status`
		if !errors.As(err, &ie) || err.Error() != want {
			t.Errorf("lower %v: got %v, want %s", lower, err, want)
		}
	}
}

// TestStatusCases: a write of /status takes only status: a change of spec
// is neither refused by spec's rule nor by spec's marker, in both modes;
// the request's status is decoded (pruned) and kept, where a write of the
// object drops it.
func TestStatusCases(t *testing.T) {
	const old = "{apiVersion: apps.example.com/v1, kind: Rollout, metadata: {name: web}, spec: {image: a, replicas: 1, zone: z}, status: {phase: Progressing, startedAt: t}}"
	cases := `- name: spec to status
  subresource: status
  oldObject: ` + old + `
  object: {apiVersion: apps.example.com/v1, kind: Rollout, metadata: {name: web}, spec: {image: b, replicas: 1, zone: w}, status: {phase: Complete, startedAt: t, extra: 1}}
- name: spec to the object
  oldObject: ` + old + `
  object: {apiVersion: apps.example.com/v1, kind: Rollout, metadata: {name: web}, spec: {image: b, replicas: 1, zone: w}, status: {phase: Complete, startedAt: t, extra: 1}}
- name: status marker
  subresource: status
  oldObject: ` + old + `
  object: {apiVersion: apps.example.com/v1, kind: Rollout, metadata: {name: web}, spec: {image: a, replicas: 1, zone: z}, status: {phase: Progressing, startedAt: u}}
- name: status schema and rule
  subresource: status
  oldObject: {apiVersion: apps.example.com/v1, kind: Rollout, metadata: {name: web}, spec: {image: a, replicas: 1, zone: z}, status: {phase: Complete}}
  object: {apiVersion: apps.example.com/v1, kind: Rollout, metadata: {name: web}, spec: {image: a, replicas: 1, zone: z}, status: {phase: Progressing, readyReplicas: -1}}
`
	name := writeSuite(t, "testdata/status/crd.yaml", cases)
	// The result, what is pruned, each error's field, type and the rule
	// or marker that refuses (the server's texts: test/e2e's
	// TestTestSuitesAgainstServer on examples/status).
	want := map[string][]string{
		"spec to status": {"allowed", "pruned status.extra"},
		"spec to the object": {"refused", "pruned status.extra", "pruned status",
			"spec.image|Invalid value|self == oldSelf",
			"spec.zone|Invalid value|x-kubernetes-mutability: Immutable"},
		"status marker": {"refused", "status.startedAt|Invalid value|x-kubernetes-mutability: AddOnly"},
		"status schema and rule": {"refused",
			"status|Invalid value|!has(oldSelf.phase) || oldSelf.phase != 'Complete' || self.phase == 'Complete'",
			"status.readyReplicas|Invalid value|"},
	}
	emulated, lowered := runFile(t, name, false)[0], runFile(t, name, true)[0]
	for i, c := range emulated.Cases {
		for _, mode := range []struct {
			name string
			c    CaseResult
		}{{"emulated", c}, {"lowered", lowered.Cases[i]}} {
			got := []string{string(mode.c.Observed.Result)}
			for _, p := range mode.c.Observed.Pruned {
				got = append(got, "pruned "+p)
			}
			for _, e := range mode.c.Observed.Errors {
				got = append(got, e.Field+"|"+e.Type+"|"+e.Rule)
			}
			if diff := cmp.Diff(want[c.Case.Name], got); diff != "" {
				t.Errorf("%s, %s (-want +got):\n%s", mode.name, c.Case.Name, diff)
			}
		}
		if diff := cmp.Diff(verdict(c.Observed), verdict(lowered.Cases[i].Observed)); diff != "" {
			t.Errorf("%s: emulated and lowered differ (-emulated +lowered):\n%s", c.Case.Name, diff)
		}
	}
}
