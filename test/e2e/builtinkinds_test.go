package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kubectl's refusal of a kind it cannot map (cli-runtime's "resource mapping
// not found ... no matches for kind").
var noMatchRE = regexp.MustCompile(`no matches for kind "([^"]*)" in version "([^"]*)"`)

// Objects of built-in groups: kubectl refuses a kind or version it cannot map
// ("no matches for kind"), and so do prune, check-update and the KRM function,
// with kubectl's kind and version. Live, the plugin must refuse exactly the
// files the harness' kubectl refuses against the same server (which serves
// apiextensions.k8s.io and no other built-in group: kubectl refuses apps/v1
// Deployment there too). Offline, the plugin refuses what Kubernetes 1.37 has
// no such type for, and each of those kubectl refuses too, in the same words.
func TestBuiltinKinds(t *testing.T) {
	requireOwnCluster(t)
	crd, err := os.ReadFile(filepath.Join(repoRoot(), exampleCRD))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		doc  string
		// in1_37: Kubernetes 1.37 has the type (the offline answer; a full 1.37 API server serves it).
		in1_37 bool
	}{
		{"crd", string(crd), true},
		{"crd-typo", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinitoin\nmetadata:\n  name: x\n", false},
		{"deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n", true},
		{"namespace", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n", true},
		{"kind-typo", "apiVersion: apps/v1\nkind: Deploymnet\nmetadata:\n  name: x\n", false},
		{"kind-case", "apiVersion: apps/v1\nkind: deployment\nmetadata:\n  name: x\n", false},
		{"no-such-version", "apiVersion: apps/v1beta7\nkind: Deployment\nmetadata:\n  name: x\n", false},
		{"removed-version", "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata:\n  name: x\n", false},
		{"wrong-group", "apiVersion: v1\nkind: Deployment\nmetadata:\n  name: x\n", false},
		{"group-without-version", "apiVersion: apps\nkind: Deployment\nmetadata:\n  name: x\n", false},
		{"meta-type", "apiVersion: apps/v1\nkind: ListOptions\nmetadata:\n  name: x\n", false},
		// The aggregator's kind, which every kube-apiserver serves without a CRD.
		{"apiservice", "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1.example.com\n", true},
		{"apiservice-typo", "apiVersion: apiregistration.k8s.io/v1\nkind: APIServce\nmetadata:\n  name: v1.example.com\n", false},
		{"apiservice-removed-version", "apiVersion: apiregistration.k8s.io/v1beta1\nkind: APIService\nmetadata:\n  name: v1.example.com\n", false},
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "check.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nmetadata:\n  name: check\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectl := kubectls[0].Path
	refusedOffline := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(file, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			x := NewTest(t)

			// What kubectl does with the file, against the test API server.
			var kubectlMatch []string
			for _, args := range [][]string{{"apply", "--dry-run=server", "-f", file}, {"create", "--dry-run=client", "-f", file}} {
				r := x.Run(kubectl, args...)
				m := noMatchRE.FindStringSubmatch(r.Stderr)
				if r.Code != 0 && m == nil {
					t.Fatalf("kubectl %s: exit %d for another reason than the kind:\n%s", strings.Join(args, " "), r.Code, r.Stderr)
				}
				if r.Code == 0 && m != nil {
					t.Fatalf("kubectl %s: exit 0, stderr:\n%s", strings.Join(args, " "), r.Stderr)
				}
				if args[0] == "apply" {
					kubectlMatch = m
				} else if (m == nil) != (kubectlMatch == nil) {
					t.Fatalf("kubectl create --dry-run=client and apply --dry-run=server disagree:\n%s", r.Stderr)
				}
			}
			refusedByKubectl := kubectlMatch != nil

			// ours must refuse with kubectl's kind and version, file and line first, one line per object;
			// the function names the item (standalone, kyaml does not annotate the file).
			check := func(what string, r Result, refused bool) {
				t.Helper()
				where := "error: " + file + ":1: "
				if what == "krm" {
					where = "items[0]:1: "
				}
				switch {
				case !refused && r.Code != 0:
					t.Errorf("%s: exit %d, want 0; stderr:\n%s", what, r.Code, r.Stderr)
				case refused && (r.Code != 2 || r.Stdout != ""):
					t.Errorf("%s: exit %d, stdout %q; want exit 2, nothing on stdout; stderr:\n%s", what, r.Code, r.Stdout, r.Stderr)
				case refused && !strings.HasPrefix(r.Stderr, where):
					t.Errorf("%s: the error does not start with the file and line:\n%s", what, r.Stderr)
				case refused && !strings.Contains(r.Stderr, kubectlMatch[0]):
					t.Errorf("%s: stderr lacks kubectl's %s:\n%s", what, kubectlMatch[0], r.Stderr)
				case refused && strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0:
					t.Errorf("%s: want one line on stderr:\n%s", what, r.Stderr)
				}
			}

			// Live: the cluster's discovery decides, as for kubectl.
			check("prune", x.Run("kubectl-crd", "prune", "-f", file), refusedByKubectl)
			check("check-update", x.Run("kubectl-crd", "check-update", "-f", file), refusedByKubectl)
			if refusedByKubectl {
				r := x.Run("kubectl-crd", "prune", "-f", file)
				if !strings.Contains(r.Stderr, ": not served by https://127.0.0.1:") {
					t.Errorf("live prune does not name the cluster:\n%s", r.Stderr)
				}
			}

			// Offline and in the KRM function: the built-in types of Kubernetes 1.37.
			if !tc.in1_37 {
				refusedOffline++
				if !refusedByKubectl {
					t.Fatalf("kubectl accepts what Kubernetes 1.37 has no type for")
				}
			}
			check("prune --offline", x.Run("kubectl-crd", "prune", "--offline", "-f", file), !tc.in1_37)
			check("check-update --offline", x.Run("kubectl-crd", "check-update", "--offline", "--old", file, "-f", file), !tc.in1_37)
			check("krm", x.Run("kubectl-crd", "krm", config, file), !tc.in1_37)
			if !tc.in1_37 {
				r := x.Run("kubectl-crd", "prune", "--offline", "-f", file)
				if !strings.Contains(r.Stderr, "Kubernetes 1.37") || !strings.Contains(r.Stderr, "checked offline") {
					t.Errorf("prune --offline does not say where it looked:\n%s", r.Stderr)
				}
			} else {
				// A built-in kind is no custom resource without its CRD.
				for what, r := range map[string]Result{
					"prune --offline": x.Run("kubectl-crd", "prune", "--offline", "-f", file),
					"krm":             x.Run("kubectl-crd", "krm", config, file),
				} {
					if strings.Contains(r.Stdout+r.Stderr, "no CustomResourceDefinition") {
						t.Errorf("%s: a built-in kind is reported as a custom resource without its CRD:\n%s%s", what, r.Stdout, r.Stderr)
					}
				}
			}
		})
	}
	if refusedOffline == 0 || refusedOffline == len(cases) {
		t.Errorf("%d of %d cases refused offline: the cases do not tell known from unknown", refusedOffline, len(cases))
	}
}
