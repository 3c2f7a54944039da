package crdupgrade_test

import (
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
)

// The version every migration writes through is discovery's preferred
// one, in Kubernetes' version order, served only; objects must be
// rewritten when a version they may be stored in is not the storage one.
func TestPreferredVersionAndMigrates(t *testing.T) {
	for _, tc := range []struct {
		name, spec, status string
		preferred          string
		migrates           bool
	}{
		{"one version", one(base, ""), "", "v1", false},
		{"GA before beta, whatever the storage", names + "versions:\n" + version("v2beta1", true, true, base, "") + version("v1", true, false, base, "") + version("v1alpha1", true, false, base, ""),
			"storedVersions: [v2beta1]\n", "v1", false},
		{"an unserved version is never preferred", names + "versions:\n" + version("v1", false, false, base, "") + version("v1beta2", true, true, base, "") + version("v1beta1", true, false, base, ""),
			"storedVersions: [v1, v1beta2]\n", "v1beta2", true},
		{"stored in another version", names + "versions:\n" + version("v1alpha1", true, false, base, "") + version("v1beta1", true, true, base, ""),
			"storedVersions: [v1alpha1]\n", "v1beta1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crd(t, tc.spec, tc.status).CRD
			if got := crdupgrade.PreferredVersion(c); got != tc.preferred {
				t.Errorf("preferred %q, want %q", got, tc.preferred)
			}
			if got := crdupgrade.Migrates(c, c); got != tc.migrates {
				t.Errorf("migrates %v, want %v", got, tc.migrates)
			}
		})
	}
}
