package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

const removedVersionDir = "examples/removed-version/"

// A manifest of a version the upgrade removes or stops serving fails
// check-update with its file and the line of its apiVersion: an existing
// object of --objects, and an object of -f beside the new CRD (status
// Unserved in -o json); a sensor of the version still served hurts nothing.
func TestRemovedVersionOffline(t *testing.T) {
	x := NewTest(t)
	old, new, sensors := removedVersionDir+"crd-v1.yaml", removedVersionDir+"crd-v2.yaml", removedVersionDir+"sensors/"
	r := x.Run("kubectl-crd", "check-update", "--offline", "--old", old, "--objects", sensors, "-f", new)
	wantLines(t, "--objects", r, 1, []string{
		"CustomResourceDefinition sensors.telemetry.example.com (examples/removed-version/crd-v2.yaml:3, replacing examples/removed-version/crd-v1.yaml:3): 2 changes; 3 objects checked, 2 hurt",
		"    version v1alpha1 removed: its clients break [1 object: Sensor default/boiler]",
		"    version v1beta1 no longer served: its clients break [1 object: Sensor default/cellar]",
		"    Sensor default/boiler: apiVersion telemetry.example.com/v1alpha1 is removed by the new CRD: its manifest is refused once the new CRD is applied (examples/removed-version/sensors/boiler.yaml:2)",
		"    Sensor default/cellar: apiVersion telemetry.example.com/v1beta1 is no longer served by the new CRD: its manifest is refused once the new CRD is applied (examples/removed-version/sensors/cellar.yaml:1)",
	}, "roof")

	r = x.Run("kubectl-crd", "check-update", "--offline", "--old", old, "-f", new, "-f", sensors)
	wantLines(t, "-f", r, 1, []string{
		"Sensor boiler: refused: apiVersion telemetry.example.com/v1alpha1 is removed by the new CRD: its manifest is refused once the new CRD is applied (examples/removed-version/sensors/boiler.yaml:2)",
		"Sensor cellar: refused: apiVersion telemetry.example.com/v1beta1 is no longer served by the new CRD: its manifest is refused once the new CRD is applied (examples/removed-version/sensors/cellar.yaml:1)",
		"Sensor roof: no old object: a create, not an update (examples/removed-version/sensors/roof.yaml:1)",
	}, "")

	r = x.Run("kubectl-crd", "check-update", "--offline", "--old", old, "-f", new, "-f", sensors, "-o", "json")
	var report struct {
		Items []struct {
			Object   struct{ Name string }
			Status   string
			Unserved *struct {
				Version string
				Removed bool
				Line    int
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil || r.Code != 1 {
		t.Fatalf("-o json: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	var got []string
	for _, it := range report.Items {
		s := it.Object.Name + " " + it.Status
		if u := it.Unserved; u != nil {
			s += " " + u.Version + " " + map[bool]string{true: "removed", false: "unserved"}[u.Removed] + " line " + strconv.Itoa(u.Line)
		}
		got = append(got, s)
	}
	if want := "boiler Unserved v1alpha1 removed line 2|cellar Unserved v1beta1 unserved line 1|roof Create"; strings.Join(got, "|") != want {
		t.Errorf("-o json items: %s, want %s", strings.Join(got, "|"), want)
	}
}

// On the test API server: the sensors applied, each in its version, the
// live check names the field managers that wrote in a version the new CRD
// removes or no longer serves (metadata.managedFields), and fails; then
// the new CRD applied, the server refuses exactly the manifests the check
// named, and takes the other.
func TestRemovedVersionLive(t *testing.T) {
	requireOwnCluster(t)
	x := NewTest(t)
	k := kubectls[0].Path
	const crd = "crd/sensors.telemetry.example.com"
	run := func(args ...string) Result {
		t.Helper()
		r := x.Run(k, args...)
		if r.Code != 0 {
			t.Fatalf("kubectl %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r
	}
	run("apply", "-f", removedVersionDir+"crd-v1.yaml")
	t.Cleanup(func() { x.Run(k, "delete", "--ignore-not-found", crd) })
	run("wait", "--for=condition=Established", "--timeout=60s", crd)
	run("apply", "-f", removedVersionDir+"sensors/")

	r := x.Run("kubectl-crd", "check-update", "-f", removedVersionDir+"crd-v2.yaml")
	wantLines(t, "live", r, 1, []string{
		"    version v1alpha1 removed: its clients break [1 object: Sensor default/boiler]",
		"    version v1beta1 no longer served: its clients break [1 object: Sensor default/cellar]",
		`    Sensor default/boiler: field manager "kubectl-client-side-apply" wrote it in apiVersion telemetry.example.com/v1alpha1 (Update), a version the new CRD removes: its next write in that version is refused (metadata.managedFields)`,
		`    Sensor default/cellar: field manager "kubectl-client-side-apply" wrote it in apiVersion telemetry.example.com/v1beta1 (Update), a version the new CRD no longer serves: its next write in that version is refused (metadata.managedFields)`,
	}, "roof")

	// The upgrade, really: once v1alpha1 is no longer served, the manifests
	// of the removed and the unserved version are refused, v1's is not.
	run("apply", "-f", removedVersionDir+"crd-v2.yaml")
	deadline := time.Now().Add(time.Minute)
	for x.Run(k, "get", "sensors.v1alpha1.telemetry.example.com").Code == 0 {
		if time.Now().After(deadline) {
			t.Fatal("v1alpha1 still served a minute after the new CRD was applied")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, tc := range []struct {
		file    string
		refused bool
	}{{"boiler.yaml", true}, {"cellar.yaml", true}, {"roof.yaml", false}} {
		r := x.Run(k, "apply", "--dry-run=server", "-f", removedVersionDir+"sensors/"+tc.file)
		if refused := r.Code != 0; refused != tc.refused {
			t.Errorf("kubectl apply %s under the new CRD: exit %d, want refused %v\n%s%s", tc.file, r.Code, tc.refused, r.Stdout, r.Stderr)
		}
	}
}

// wantLines checks a check-update run: its exit code, each line of want in
// its stdout, and no line naming absent (when set) among those of its
// objects hurt.
func wantLines(t *testing.T, what string, r Result, code int, want []string, absent string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(r.Stdout, "\n") {
		lines[l] = true
		if absent != "" && strings.Contains(l, "/"+absent+":") {
			t.Errorf("%s: a line names %s, which uses a version still served: %s", what, absent, l)
		}
	}
	if r.Code != code {
		t.Errorf("%s: exit %d, want %d", what, r.Code, code)
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("%s: stdout lacks the line\n%s\nstdout:\n%s\nstderr:\n%s", what, w, r.Stdout, r.Stderr)
		}
	}
}
