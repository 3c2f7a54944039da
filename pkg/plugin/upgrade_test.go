package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	upgradeOld     = "../../test/e2e/testdata/crdupgrade/old.yaml"
	upgradeNew     = "../../test/e2e/testdata/crdupgrade/new.yaml"
	upgradeObjects = "../../test/e2e/testdata/crdupgrade/objects.yaml"
)

// check-update with a CRD in -f checks its upgrade: the changes by
// severity, the objects each hurts, and what each object loses or why it
// is refused; the exit code says whether a harmful change hurts an object.
func TestCheckUpdateCRDUpgrade(t *testing.T) {
	args := []string{"check-update", "--offline", "--old", upgradeOld, "--objects", upgradeObjects, "-f", upgradeNew}
	r := run(t, "", args...)
	for _, want := range []string{
		"CustomResourceDefinition gizmos.upgrade.example.com (" + upgradeNew + ":1, replacing " + upgradeOld + ":1): 7 changes; 4 objects checked, 3 hurt\n  DataLoss:\n",
		"\n  Invalid:\n",
		`    v1: "spec.name" removed from the schema: pruned from every stored object [1 object: Gizmo default/g1]` + "\n",
		`    v1: "spec.canary" new default "new": objects without it read as having it [4 objects: Gizmo default/g1, Gizmo default/g2, Gizmo default/g3, and 1 more]` + "\n",
		"  Objects hurt:\n",
		`    Gizmo default/g3: a create of it again would be refused under the new CRD: spec.size: Required value (` + upgradeObjects + ":17)\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != ExitFindings || r.stderr != "" {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}

	r = run(t, "", append(args, "-o", "json")...)
	var report struct {
		Items    []json.RawMessage
		Upgrades []struct {
			CRD            string
			OldSource      *struct{ File string }
			ObjectsChecked int
			ObjectsHurt    int
			Changes        []struct {
				Kind, Severity, Path string
				Objects              []struct{ Name string }
			}
			Objects []struct {
				Object  struct{ Name string }
				Changes []struct{ Reason, Path string }
				Errors  []struct{ Field string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != ExitFindings || len(report.Upgrades) != 1 {
		t.Fatalf("exit %d, %v:\n%s", r.code, err, r.stdout)
	}
	up := report.Upgrades[0]
	if up.CRD != "gizmos.upgrade.example.com" || up.OldSource == nil || up.OldSource.File != upgradeOld || up.ObjectsChecked != 4 || up.ObjectsHurt != 3 || len(up.Changes) != 7 || len(up.Objects) != 4 || len(report.Items) != 0 {
		t.Fatalf("%+v", up)
	}
	if c := up.Changes[1]; c.Kind != "FieldRemoved" || c.Severity != "DataLoss" || c.Path != "spec.name" || len(c.Objects) != 1 || c.Objects[0].Name != "g1" {
		t.Errorf("%+v", c)
	}
	if o := up.Objects[2]; o.Object.Name != "g3" || len(o.Errors) != 2 || o.Errors[1].Field != "spec.size" {
		t.Errorf("%+v", o)
	}
}

func TestCheckUpdateCRDUpgradeExitAndNotes(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: upgrade.example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: default}\nspec: {size: 2}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stranger := filepath.Join(dir, "v9.yaml")
	if err := os.WriteFile(stranger, []byte("apiVersion: upgrade.example.com/v9\nkind: Gizmo\nmetadata: {name: g}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"check-update", "--offline", "--old", upgradeOld, "-f", upgradeNew}
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // a line of it
		stderr string // all of it, or a part for exit 2
	}{
		{"no objects: the changes alone, none hurts an object", base, "", ExitOK,
			"7 changes; 0 objects checked, 0 hurt", "Warning: no existing objects checked: give them with --objects FILE|DIR\n"},
		{"--strict: a harmful change fails the run by itself", append(base, "--strict"), "", ExitFindings,
			"7 changes; 0 objects checked, 0 hurt", "Warning: no existing objects checked: give them with --objects FILE|DIR\n"},
		{"offline, the objects of --old are the existing ones", []string{"check-update", "--offline", "--old", upgradeOld, "--old", upgradeObjects, "-f", upgradeNew}, "", ExitFindings,
			"7 changes; 4 objects checked, 3 hurt", ""},
		{"objects of other kinds are said to be skipped", append(base, "--objects", other), "", ExitOK,
			"1 object checked, 0 hurt", "Warning: 1 object of --objects: of no upgraded CRD's kind and version, not checked\n"},
		{"the CRD against itself: no change", []string{"check-update", "--offline", "--old", upgradeOld, "-f", upgradeOld, "--objects", upgradeObjects}, "", ExitOK,
			"0 changes; 4 objects checked, 0 hurt", ""},
		{"no previous version: a new CRD", []string{"check-update", "--offline", "--old", other, "-f", upgradeNew}, "", ExitOK,
			"", "Warning: CustomResourceDefinition gizmos.upgrade.example.com: no previous version in --old: a new CRD, no upgrade to check\n"},
		{"an object the old CRD cannot have stored", append(base, "--objects", stranger), "", ExitInput,
			"", stranger + ":1: "},
		{"--objects without a CRD in -f", []string{"check-update", "--offline", "--old", upgradeObjects, "-f", upgradeObjects, "--objects", upgradeObjects}, "", ExitInput,
			"", "--objects: the existing objects of a CRD upgrade, and -f holds no CustomResourceDefinition"},
		{"standard input twice", []string{"check-update", "--offline", "--old", upgradeOld, "-f", "-", "--objects", "-"}, "", ExitInput,
			"", "standard input (-) is named by both --objects and another input"},
		{"--objects from standard input", append(base, "--objects", "-"), "apiVersion: upgrade.example.com/v1\nkind: Gizmo\nmetadata: {name: s, namespace: default}\nspec: {name: n, size: 1}\n", ExitFindings,
			`    Gizmo default/s: loses "spec.name" under the new CRD: pruned when read, for good on its next write (-:4)`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.stdin, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) {
				t.Errorf("exit %d (want %d), stdout lacks %q:\n%s\nstderr:\n%s", r.code, tc.code, tc.stdout, r.stdout, r.stderr)
			}
			if tc.code == ExitInput && !strings.Contains(r.stderr, tc.stderr) || tc.code != ExitInput && r.stderr != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, tc.stderr)
			}
		})
	}
}
