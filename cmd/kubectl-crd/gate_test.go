package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/filter"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin"
)

// frontEndCase is one set of inputs for both front ends: the KRM
// function's items and previous, and the plugin's runs that check the
// same (prune of the items; check-update of their updates or of the
// upgrade of their CRD, the items standing for the existing objects).
type frontEndCase struct {
	name     string
	items    []string // files, relative to the repository
	previous []string
	plugin   [][]string // each a command and its inputs, relative to the repository
}

// frontEndCases are the examples, upgrades included, and the end-to-end
// test data of upgrades.
var frontEndCases = []frontEndCase{
	{name: "maintenance", items: []string{"examples/maintenance/crd.yaml", "examples/maintenance/job.yaml"},
		plugin: [][]string{{"prune", "-f", "examples/maintenance/crd.yaml", "-f", "examples/maintenance/job.yaml"}}},
	{name: "versions", items: []string{"examples/versions/crd.yaml", "examples/versions/widget.yaml", "examples/krm/widget.yaml"},
		plugin: [][]string{{"prune", "-f", "examples/versions/crd.yaml", "-f", "examples/versions/widget.yaml", "-f", "examples/krm/widget.yaml"}}},
	{name: "reasons", items: []string{"examples/reasons/crd.yaml", "examples/reasons/gadget.yaml"},
		plugin: [][]string{{"prune", "-f", "examples/reasons/crd.yaml", "-f", "examples/reasons/gadget.yaml"}}},
	{name: "refused", items: []string{"examples/refused/crd.yaml", "examples/refused/backups.yaml"},
		plugin: [][]string{{"prune", "-f", "examples/refused/crd.yaml", "-f", "examples/refused/backups.yaml"}}},
	{name: "lower", items: []string{"examples/lower/crd.yaml", "examples/lower/mapping.yaml", "examples/lower/volume.yaml"},
		plugin: [][]string{{"prune", "-f", "examples/lower"}}},
	{name: "deprecated", items: []string{"examples/deprecated/crd.yaml", "examples/deprecated/gadgets.yaml"}, previous: []string{"examples/deprecated/gadgets.yaml"},
		plugin: [][]string{
			{"prune", "-f", "examples/deprecated/crd.yaml", "-f", "examples/deprecated/gadgets.yaml"},
			{"check-update", "--crd-file", "examples/deprecated/crd.yaml", "--old", "examples/deprecated/gadgets.yaml", "-f", "examples/deprecated/gadgets.yaml"},
		}},
	{name: "krm", items: []string{"examples/krm/crd.yaml", "examples/krm/widget.yaml"},
		plugin: [][]string{{"prune", "-f", "examples/krm/crd.yaml", "-f", "examples/krm/widget.yaml"}}},
	{name: "testdata createvalidation", items: []string{"test/e2e/testdata/createvalidation/crds.yaml", "test/e2e/testdata/createvalidation/objects.yaml"},
		plugin: [][]string{{"prune", "-f", "test/e2e/testdata/createvalidation"}}},
	{name: "immutable", items: []string{"examples/immutable/crd.yaml", "examples/immutable/database-v2.yaml"}, previous: []string{"examples/immutable/database.yaml"},
		plugin: [][]string{
			{"prune", "-f", "examples/immutable/crd.yaml", "-f", "examples/immutable/database-v2.yaml"},
			{"check-update", "--crd-file", "examples/immutable/crd.yaml", "--old", "examples/immutable/database.yaml", "-f", "examples/immutable/database-v2.yaml"},
		}},
	{name: "krm-update", items: []string{"examples/krm-update/crd.yaml", "examples/krm-update/buckets.yaml"}, previous: []string{"examples/krm-update/previous"},
		plugin: [][]string{
			{"prune", "-f", "examples/krm-update/crd.yaml", "-f", "examples/krm-update/buckets.yaml"},
			{"check-update", "--crd-file", "examples/krm-update/crd.yaml", "--old", "examples/krm-update/previous", "-f", "examples/krm-update/buckets.yaml"},
		}},
	{name: "krm-upgrade", items: []string{"examples/krm-upgrade/crd.yaml", "examples/krm-upgrade/gizmos.yaml"}, previous: []string{"examples/krm-upgrade/previous"},
		plugin: [][]string{
			{"prune", "-f", "examples/krm-upgrade/crd.yaml", "-f", "examples/krm-upgrade/gizmos.yaml"},
			{"check-update", "--old", "examples/krm-upgrade/previous/crd.yaml", "--objects", "examples/krm-upgrade/gizmos.yaml", "-f", "examples/krm-upgrade/crd.yaml"},
		}},
	{name: "upgrade", previous: []string{"examples/upgrade/crd-v1.yaml"},
		items: []string{"examples/upgrade/crd-v2.yaml", "examples/upgrade/backups/audit-log.yaml", "examples/upgrade/backups/legacy-crm.yaml", "examples/upgrade/backups/orders-db.yaml"},
		plugin: [][]string{
			{"prune", "-f", "examples/upgrade/crd-v2.yaml", "-f", "examples/upgrade/backups"},
			{"check-update", "--old", "examples/upgrade/crd-v1.yaml", "--objects", "examples/upgrade/backups", "-f", "examples/upgrade/crd-v2.yaml"},
		}},
	{name: "storage-move", previous: []string{"examples/storage-move/crd-v1.yaml"},
		items: []string{"examples/storage-move/crd-v2.yaml", "examples/storage-move/queues/emails.yaml", "examples/storage-move/queues/reports.yaml", "examples/storage-move/queues/thumbnails.yaml"},
		plugin: [][]string{
			{"prune", "-f", "examples/storage-move/crd-v2.yaml", "-f", "examples/storage-move/queues"},
			{"check-update", "--old", "examples/storage-move/crd-v1.yaml", "--objects", "examples/storage-move/queues", "-f", "examples/storage-move/crd-v2.yaml"},
		}},
	{name: "testdata crdupgrade", items: []string{"test/e2e/testdata/crdupgrade/new.yaml", "test/e2e/testdata/crdupgrade/objects.yaml"},
		previous: []string{"test/e2e/testdata/crdupgrade/old.yaml"},
		plugin: [][]string{
			{"prune", "-f", "test/e2e/testdata/crdupgrade/new.yaml", "-f", "test/e2e/testdata/crdupgrade/objects.yaml"},
			{"check-update", "--old", "test/e2e/testdata/crdupgrade/old.yaml", "--objects", "test/e2e/testdata/crdupgrade/objects.yaml", "-f", "test/e2e/testdata/crdupgrade/new.yaml"},
		}},
	{name: "testdata storagemove", items: []string{"test/e2e/testdata/storagemove/new.yaml", "test/e2e/testdata/storagemove/objects.yaml"},
		previous: []string{"test/e2e/testdata/storagemove/old.yaml"},
		plugin: [][]string{
			{"prune", "-f", "test/e2e/testdata/storagemove/new.yaml", "-f", "test/e2e/testdata/storagemove/objects.yaml"},
			{"check-update", "--old", "test/e2e/testdata/storagemove/old.yaml", "--objects", "test/e2e/testdata/storagemove/objects.yaml", "-f", "test/e2e/testdata/storagemove/new.yaml"},
		}},
	// A CRD's own findings: a legacy v1beta1 CRD's structural violations
	// (NonStructural) and the server's warning on it (CRDWarning); misplaced
	// mutability markers (Update). The plugin printed the first and the
	// last as notes that never failed the run, where the function failed.
	{name: "testdata legacy CRD", items: []string{"test/e2e/testdata/legacy-crd.yaml"},
		plugin: [][]string{{"prune", "-f", "test/e2e/testdata/legacy-crd.yaml"}}},
	{name: "misplaced markers", items: []string{"pkg/plugin/testdata/mutability/crd.yaml"},
		plugin: [][]string{{"prune", "-f", "pkg/plugin/testdata/mutability/crd.yaml"}}},
}

// TestFrontEndsAgreeOnFailOn is the gate's one rule seen from outside:
// for every finding name as the only one that fails the run (--fail-on,
// failOn), the same inputs fail or pass alike through the plugin (prune,
// check-update: the run fails when one of them exits 1) and through the
// KRM function (kubectl crd krm, standalone), both in this process as the
// binary runs them.
func TestFrontEndsAgreeOnFailOn(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range frontEndCases {
		t.Run(tc.name, func(t *testing.T) {
			resources := filepath.Join(t.TempDir(), "resources.yaml")
			var all []string
			for _, f := range tc.items {
				b, err := os.ReadFile(filepath.Join(root, f))
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, string(b))
			}
			writeTestFile(t, resources, strings.Join(all, "\n---\n"))
			for _, c := range finding.Checks {
				plugin, function, problem := tc.run(t, root, resources, string(c))
				switch {
				case problem != "":
					t.Errorf("failOn %s: %s", c, problem)
				case plugin != function:
					t.Errorf("failOn %s: the plugin fails: %v, the function fails: %v", c, plugin, function)
				}
			}
		})
	}
}

// run runs the case's plugin commands and the function with check alone
// failing the run: whether each fails, or what went wrong (an exit other
// than 0 or 1).
func (tc frontEndCase) run(t *testing.T, root, resources, check string) (plugin, function bool, problem string) {
	for _, args := range tc.plugin {
		a := []string{args[0], "--offline", "--fail-on=" + check}
		for _, arg := range args[1:] {
			if !strings.HasPrefix(arg, "-") {
				arg = filepath.Join(root, arg)
			}
			a = append(a, arg)
		}
		code, stderr := runBinary(a)
		if code > 1 {
			return false, false, "plugin " + strings.Join(args, " ") + ": exit " + strconv.Itoa(code) + "\n" + stderr
		}
		plugin = plugin || code == 1
	}
	config := "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nloadRestrictor: LoadRestrictionsNone\nfailOn: [" + check + "]\n"
	if len(tc.previous) > 0 {
		config += "previous:\n"
		for _, p := range tc.previous {
			config += "- " + filepath.Join(root, p) + "\n"
		}
	}
	file := filepath.Join(filepath.Dir(resources), "config-"+check+".yaml")
	writeTestFile(t, file, config)
	code, stderr := runBinary([]string{"krm", file, resources})
	if code > 1 {
		return false, false, "function: exit " + strconv.Itoa(code) + "\n" + stderr
	}
	return plugin, code == 1, ""
}

// runBinary runs args as the binary does, in this process: its exit code
// and stderr.
func runBinary(args []string) (int, string) {
	var out, errOut bytes.Buffer
	code := plugin.Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args, filter.NewCommand())
	return code, errOut.String()
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
