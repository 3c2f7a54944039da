package document_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

const jobList = `# backups of the jobs
apiVersion: v1
kind: List
items:
# the first
- apiVersion: operations.example.com/v1
  kind: MaintenanceNightlyJob
  metadata:
    name: a
  spec:
    shell: x   # kept
    bogus: 1
- apiVersion: operations.example.com/v1
  kind: MaintenanceNightlyJob
  metadata: {name: b}
  spec:
    command: c
`

// A List's items are checked one by one, with their own lines, and the List
// is printed back with every item's edits made in place.
func TestListItemsEditedInPlace(t *testing.T) {
	out, results, docs := pruneAll(t, jobList, jobRegistry(t), prune.Options{Defaults: true})
	if len(docs) != 1 || !docs[0].IsList() || len(docs[0].Objects()) != 2 {
		t.Fatalf("read %d documents; want one List of 2 items", len(docs))
	}
	// The items are the objects kubectl sends.
	read, err := document.Read(strings.NewReader(jobList), "jobs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, o := range read[0].Objects() {
		ours = append(ours, canonical(o.Object))
	}
	kube, refused := kubectlObjectsExpanded([]byte(jobList))
	if diff := cmp.Diff(kube, ours); refused || diff != "" {
		t.Errorf("items (-kubectl +ours), kubectl refused=%v:\n%s", refused, diff)
	}
	want := edit(t, jobList,
		drop("    bogus: 1"),
		insertAfter("    shell: x   # kept", `    schedule: 0 3 * * *`),
		insertAfter("    command: c", `    schedule: 0 3 * * *`))
	if out != want {
		t.Errorf("output (-want +got):\n%s", cmp.Diff(want, out))
	}
	var got []string
	for _, r := range results {
		for _, ch := range r.Changes {
			got = append(got, r.Object.Name+" "+ch.Path+" "+r.Source.File+":"+strconv.Itoa(ch.Line))
		}
	}
	wantChanges := []string{
		"a spec.bogus jobs.yaml:12",
		"a spec.schedule jobs.yaml:10",
		"b spec.schedule jobs.yaml:16",
	}
	if diff := cmp.Diff(wantChanges, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if results[0].Source.Line != 6 || results[1].Source.Line != 13 {
		t.Errorf("items at lines %d and %d, want 6 and 13", results[0].Source.Line, results[1].Source.Line)
	}
}

// Items with neither apiVersion nor kind get the List's, as kubectl gives
// them (k8s.io/apimachinery's unstructured list decoding); the text keeps
// none.
func TestListItemsInferKind(t *testing.T) {
	in := "apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJobList\nitems:\n- metadata: {name: a}\n  spec:\n    shell: x\n    bogus: 1\n"
	out, results, docs := pruneAll(t, in, jobRegistry(t), prune.Options{})
	// What kubectl makes of the same List.
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(`{"apiVersion":"operations.example.com/v1","kind":"MaintenanceNightlyJobList","items":[{"metadata":{"name":"a"}}]}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	item := obj.(*unstructured.UnstructuredList).Items[0]
	ref := results[0].Object
	if ref.APIVersion != item.GetAPIVersion() || ref.Kind != item.GetKind() || results[0].Status != prune.Checked {
		t.Errorf("item checked as %s %s (%s); kubectl sends it as %s %s", ref.APIVersion, ref.Kind, results[0].Status, item.GetAPIVersion(), item.GetKind())
	}
	if want := edit(t, in, drop("    bogus: 1")); out != want {
		t.Errorf("output (-want +got):\n%s", cmp.Diff(want, out))
	}
	obj2, err := docs[0].Objects()[0].Reparse()
	if err != nil || obj2["kind"] != "MaintenanceNightlyJob" {
		t.Errorf("item reads back as %v, %v", obj2, err)
	}
}

func TestListErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, msg string }{
		{"items not a list", "apiVersion: v1\nkind: List\nitems: x\n", "cannot read this one"},
		{"a list in a list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n", "list in a list"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := document.Read(strings.NewReader(tt.in), "l.yaml")
			var ie *document.InputError
			if !errors.As(err, &ie) || !strings.Contains(ie.Msg, tt.msg) || ie.Source.Line == 0 {
				t.Errorf("error %v; want an input error with a line saying %q", err, tt.msg)
			}
			// kubectl refuses these too.
			if _, refused := kubectlObjectsExpanded([]byte(tt.in)); !refused {
				t.Errorf("kubectl's reader accepts it")
			}
		})
	}
	// An empty List holds no objects.
	ds, err := document.Read(strings.NewReader("apiVersion: v1\nkind: List\nitems: []\n"), "l.yaml")
	if err != nil || len(ds) != 1 || len(ds[0].Objects()) != 0 {
		t.Errorf("empty List: %v, %v", ds, err)
	}
}

// kubectlObjectsExpanded reads as kubectl's reader and expands lists as its
// resource builder's FlattenListVisitor does, with the same calls.
func kubectlObjectsExpanded(in []byte) ([]string, bool) {
	docs, refused := kubectlObjects(in)
	if refused {
		return nil, true
	}
	var out []string
	for _, d := range docs {
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(d), nil, nil)
		if err != nil {
			return nil, true
		}
		todo := []runtime.Object{obj}
		for i := 0; i < len(todo); i++ {
			if !meta.IsListType(todo[i]) {
				out = append(out, canonical(todo[i].(*unstructured.Unstructured).Object))
				continue
			}
			items, err := meta.ExtractList(todo[i])
			if err != nil {
				return nil, true
			}
			todo = append(todo, items...)
		}
	}
	return out, false
}

func TestDuplicateKeys(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\ndata:\n  x: \"1\"\n  y: \"2\"\n  x: \"3\"\n"
	ds, err := document.Read(strings.NewReader(in), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range ds[0].Warnings {
		got = append(got, w.String())
	}
	want := []string{
		`d.yaml:5: duplicate key "metadata.name" (also at line 4): kubectl sends only the last value, of line 5`,
		`d.yaml:9: duplicate key "data.x" (also at line 7): kubectl sends only the last value, of line 9`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// The value of the last line is what kubectl sends.
	kube, _ := kubectlObjects([]byte(in))
	if diff := cmp.Diff(kube, []string{canonical(ds[0].Object)}); diff != "" {
		t.Errorf("object (-kubectl +ours):\n%s", diff)
	}
	if !strings.Contains(kube[0], `"name":"b"`) || !strings.Contains(kube[0], `"x":"3"`) {
		t.Errorf("kubectl's reader did not keep the last values: %s", kube[0])
	}
}

// An item whose edit cannot be made in the text (a flow mapping) is edited
// in the List's node tree; every item's edits are still made once.
func TestListItemsEditedInTree(t *testing.T) {
	in := "# jobs\napiVersion: v1\nkind: List\nitems:\n" +
		"- {apiVersion: operations.example.com/v1, kind: MaintenanceNightlyJob, metadata: {name: a}, spec: {shell: x, bogus: 1}}\n" +
		"- apiVersion: operations.example.com/v1\n  kind: MaintenanceNightlyJob\n  metadata: {name: b}\n  spec:\n    shell: y # kept\n    other: 2\n"
	out, results, _ := pruneAll(t, in, jobRegistry(t), prune.Options{Defaults: true})
	if len(results) != 2 || len(results[0].Changes) != 2 || len(results[1].Changes) != 2 {
		t.Fatalf("results: %+v", results)
	}
	for _, s := range []string{"bogus", "other"} {
		if strings.Contains(out, s) {
			t.Errorf("output keeps %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"# jobs", "# kept", "schedule: 0 3 * * *"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if strings.Count(out, "schedule") != 2 {
		t.Errorf("the defaults are not added once per item:\n%s", out)
	}
}

// A duplicate key in an item is the item's warning, with its path in the item.
func TestDuplicateKeysInListItems(t *testing.T) {
	in := "apiVersion: v1\nkind: List\nitems:\n- kind: A\n  spec:\n    x: 1\n    x: 2\n"
	ds, err := document.Read(strings.NewReader(in), "l.yaml")
	if err != nil {
		t.Fatal(err)
	}
	item := ds[0].Objects()[0]
	if len(ds[0].Warnings) != 0 || len(item.Warnings) != 1 ||
		item.Warnings[0].String() != `l.yaml:7: duplicate key "spec.x" (also at line 6): kubectl sends only the last value, of line 7` {
		t.Errorf("List warnings %v, item warnings %v", ds[0].Warnings, item.Warnings)
	}
}
