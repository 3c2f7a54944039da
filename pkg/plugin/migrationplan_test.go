package plugin

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	storageMoveOld     = "../../examples/storage-move/crd-v1.yaml"
	storageMoveNew     = "../../examples/storage-move/crd-v2.yaml"
	storageMoveObjects = "../../examples/storage-move/queues/"
)

// --migration-plan adds the plan of the storage-version migration to the
// report of an upgrade that moves the storage version, in text and json,
// for the minor answering; the exit code is the report's. The reports of
// findings refuse it: the plan holds none.
func TestCheckUpdateMigrationPlan(t *testing.T) {
	args := []string{"check-update", "--offline", "--old", storageMoveOld, "--objects", storageMoveObjects, "-f", storageMoveNew, "--migration-plan"}
	r := run(t, "", args...)
	for _, want := range []string{
		"  Storage version migration (Kubernetes 1.37): objects stored in v1alpha1 are rewritten through v1beta1, stored as v1beta1\n" +
			"    3 objects checked: 1 rewritten intact, 2 losing data, 0 refused\n" +
			`    Queue default/emails: rewritten as v1beta1, loses "spec.retryLimit" (` + storageMoveObjects + "emails.yaml:7)\n",
		"       apiVersion: storagemigration.k8s.io/v1\n       kind: StorageVersionMigration\n",
		"  2. Trim status.storedVersions to [v1beta1] (safe): ",
		`kubectl patch customresourcedefinition queues.jobs.example.com --subresource=status --type=merge -p '{"status":{"storedVersions":["v1beta1"]}}'` + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != ExitFindings {
		t.Errorf("exit %d, want %d", r.code, ExitFindings)
	}
	if without := run(t, "", args[:len(args)-1]...); strings.Contains(without.stdout, "Storage version migration") || without.code != r.code {
		t.Errorf("without --migration-plan: exit %d\n%s", without.code, without.stdout)
	}

	r = run(t, "", append(args, "-o", "json", "--kube-version", "1.35")...)
	var report struct {
		Upgrades []struct {
			Migration struct {
				Kubernetes string
				Migrator   struct {
					Object struct{ APIVersion string }
					Enable string
				} `json:"storageVersionMigration"`
				ObjectsChecked, ObjectsIntact int
				Objects                       []struct {
					Object struct{ Name string }
					Loses  []struct{ Path string }
				}
				Trim struct {
					Safe  bool
					Patch string
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || len(report.Upgrades) != 1 {
		t.Fatalf("exit %d, %v:\n%s", r.code, err, r.stdout)
	}
	m := report.Upgrades[0].Migration
	if m.Kubernetes != "1.35" || m.Migrator.Object.APIVersion != "storagemigration.k8s.io/v1beta1" || m.Migrator.Enable == "" {
		t.Errorf("the migrator of 1.35: %+v", m)
	}
	if m.ObjectsChecked != 3 || m.ObjectsIntact != 1 || len(m.Objects) != 2 || m.Objects[0].Object.Name != "emails" || m.Objects[0].Loses[0].Path != "spec.retryLimit" {
		t.Errorf("the objects: %+v", m)
	}
	if !m.Trim.Safe || m.Trim.Patch != `{"status":{"storedVersions":["v1beta1"]}}` {
		t.Errorf("the trim: %+v", m.Trim)
	}

	r = run(t, "", append(args, "-o", "sarif")...)
	if r.code != ExitInput || !strings.Contains(r.stderr, "--migration-plan") {
		t.Errorf("-o sarif: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
