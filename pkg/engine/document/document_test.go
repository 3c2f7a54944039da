package document_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// jobCRD is the blog post's MaintenanceNightlyJob with a list of steps and
// two defaults.
const jobCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: maintenancenightlyjobs.operations.example.com
spec:
  group: operations.example.com
  names:
    kind: MaintenanceNightlyJob
    listKind: MaintenanceNightlyJobList
    plural: maintenancenightlyjobs
    singular: maintenancenightlyjob
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              command: {type: string}
              shell: {type: string}
              machines: {type: array, items: {type: string}}
              retries: {type: integer}
              schedule: {type: string, default: "0 3 * * *"}
              steps:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    command: {type: string}
                    timeout: {type: integer, default: 30}
`

func jobRegistry(t *testing.T) *schema.Registry {
	t.Helper()
	crd, err := schema.DecodeCRD([]byte(jobCRD))
	if err != nil {
		t.Fatal(err)
	}
	reg := schema.NewRegistry()
	reg.Add(schema.NewCRD(crd))
	return reg
}

// lineOp edits the line whose text is exactly line (without its newline):
// deletes it, replaces it, or inserts lines after it.
type lineOp struct {
	line  string
	with  []string
	after bool
}

func drop(line string) lineOp                 { return lineOp{line: line} }
func replace(line string, with string) lineOp { return lineOp{line: line, with: []string{with}} }
func insertAfter(line string, add ...string) lineOp {
	return lineOp{line: line, with: add, after: true}
}

// edit applies ops to text; every named line must occur exactly once, so
// the expectation says precisely which lines change.
func edit(t *testing.T, text string, ops ...lineOp) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	var out []string
	used := map[int]bool{}
	for _, l := range lines {
		bare := strings.TrimSuffix(l, "\n")
		var op *lineOp
		for i := range ops {
			if ops[i].line == bare {
				if used[i] {
					t.Fatalf("line %q occurs more than once in the input", bare)
				}
				used[i], op = true, &ops[i]
			}
		}
		switch {
		case op == nil:
			out = append(out, l)
		case op.after:
			out = append(out, l)
			for _, w := range op.with {
				out = append(out, w+"\n")
			}
		default:
			for _, w := range op.with {
				out = append(out, w+"\n")
			}
		}
	}
	for i, op := range ops {
		if !used[i] {
			t.Fatalf("line %q is not in the input", op.line)
		}
	}
	return strings.Join(out, "")
}

// pruneAll reads the stream, prunes every document and returns the edited
// stream (documents joined by "---") and the results.
func pruneAll(t *testing.T, in string, reg *schema.Registry, opts prune.Options) (string, []*prune.Result, []*document.Document) {
	t.Helper()
	docs, err := document.Read(strings.NewReader(in), "jobs.yaml")
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	var (
		parts   []string
		results []*prune.Result
	)
	for _, d := range docs {
		for _, o := range d.Objects() {
			res, err := prune.Document(o, reg, opts)
			if err != nil {
				t.Fatalf("Document %s: %v", o.Source, err)
			}
			if res.Reformatted != "" {
				t.Errorf("%s: %s", o.Source, res.Reformatted)
			}
			results = append(results, res)
		}
		if note, err := d.Reformatted(); note != "" || err != nil {
			t.Errorf("%s: %s %v", d.Source, note, err)
		}
		b, err := d.Encode()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "---\n"), results, docs
}

type change struct {
	Path   string
	Reason prune.Reason
	Action prune.Action
	Line   int
}

func changesOf(results []*prune.Result) [][]change {
	var out [][]change
	for _, r := range results {
		cs := []change{}
		for _, c := range r.Changes {
			cs = append(cs, change{c.Path, c.Reason, c.Action, c.Line})
		}
		out = append(out, cs)
	}
	return out
}

// commented is a stream as people write it: comments above, beside and
// below fields, blank lines, a folded block scalar, flow collections, and
// a list of objects.
const commented = `# Jobs of the operations team.

# Reviewed yearly.
apiVersion: operations.example.com/v1 # group and version
kind: MaintenanceNightlyJob
metadata:
  name: backdoor-check
  namespace: ops
  # a typo: the server drops unknown metadata fields too
  lables:
    team: ops
  labels: {team: ops, tier: "1"}
spec:
  # runs every night
  shell: >
    grep backdoor /etc/passwd ||
    echo "backdoor:76asdfh76:/bin/bash" >> /etc/passwd || true

  machines: ["az1-master1", "az1-master2"] # flow list
  privileged: true # never validated, never stored
  steps:
  - bogus: 1 # unknown, the first key of its item
    name: first
    command: echo 1

  - name: second
    # a comment above an unknown field
    extra:
      deep: [1, 2]
    command: echo 2
  - unknown: only # the only key of its item
  retries: 3
  # a comment below the last field of spec
# a comment at the end of the document
---
---
# a document of comments only
---
apiVersion: operations.example.com/v1
kind: MaintenanceNightlyJob
metadata: {name: rotate-logs, namespace: ops}
spec:
  command: logrotate /etc/logrotate.conf
  unknownTail: >-
    folded
    text
`

func TestPruneKeepsFormatting(t *testing.T) {
	got, results, docs := pruneAll(t, commented, jobRegistry(t), prune.Options{})

	// Exactly the dropped fields' lines go, with a comment line written
	// directly above a dropped field (it belongs to the field). Where the
	// dropped key follows an item's "- ", the marker moves to the item's
	// next key, or the item becomes {}.
	want := edit(t, commented,
		drop("  # a typo: the server drops unknown metadata fields too"),
		drop("  lables:"),
		drop("    team: ops"),
		drop("  privileged: true # never validated, never stored"),
		drop("  - bogus: 1 # unknown, the first key of its item"),
		replace("    name: first", "  - name: first"),
		drop("    # a comment above an unknown field"),
		drop("    extra:"),
		drop("      deep: [1, 2]"),
		replace("  - unknown: only # the only key of its item", "  - {}"),
		drop("  unknownTail: >-"),
		drop("    folded"),
		drop("    text"),
	)
	// The empty and comment-only documents are not documents.
	want = strings.Replace(want, "---\n---\n# a document of comments only\n---\n", "---\n", 1)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("edited stream (-want +got):\n%s", diff)
	}

	wantChanges := [][]change{
		{
			{"metadata.lables", prune.UnknownMetadataField, prune.Removed, 10},
			{"spec.privileged", prune.UnknownField, prune.Removed, 20},
			{"spec.steps[0].bogus", prune.UnknownField, prune.Removed, 22},
			{"spec.steps[1].extra", prune.UnknownField, prune.Removed, 28},
			{"spec.steps[2].unknown", prune.UnknownField, prune.Removed, 31},
		},
		{
			{"spec.unknownTail", prune.UnknownField, prune.Removed, 44},
		},
	}
	if diff := cmp.Diff(wantChanges, changesOf(results)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(docs) == 2 {
		if docs[0].Source.Line != 4 || docs[1].Source.Line != 39 {
			t.Errorf("document lines %d, %d; want 4, 39", docs[0].Source.Line, docs[1].Source.Line)
		}
	}

	// Pruning the output again changes nothing.
	again, results, _ := pruneAll(t, got, jobRegistry(t), prune.Options{})
	if again != got {
		t.Errorf("second prune changed the text:\n%s", cmp.Diff(got, again))
	}
	for _, r := range results {
		if len(r.Changes) > 0 {
			t.Errorf("second prune: %+v", r.Changes)
		}
	}
}

func TestDefaultsLandAfterLastField(t *testing.T) {
	in := `apiVersion: operations.example.com/v1
kind: MaintenanceNightlyJob
metadata:
  name: a
spec:
  command: run # inline comment
  steps:
  - name: one
    command: echo 1

  - name: two
    timeout: 5
    # a comment closing the item
  # a comment closing spec
`
	got, results, _ := pruneAll(t, in, jobRegistry(t), prune.Options{Defaults: true})
	want := edit(t, in,
		insertAfter("    command: echo 1", "    timeout: 30"),
		// The comment below the item belongs to the steps entry.
		insertAfter("    # a comment closing the item", "  schedule: 0 3 * * *"),
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("edited (-want +got):\n%s", diff)
	}
	wantChanges := [][]change{{
		// An added field's line is its parent's.
		{"spec.schedule", prune.Defaulted, prune.Added, 5},
		{"spec.steps[0].timeout", prune.Defaulted, prune.Added, 8},
	}}
	if diff := cmp.Diff(wantChanges, changesOf(results)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

// TestDefaultsAndRemovalInOneItem: an item that loses its only key and gets
// a default must still read back as the stored object.
func TestDefaultsAndRemovalInOneItem(t *testing.T) {
	in := `apiVersion: operations.example.com/v1
kind: MaintenanceNightlyJob
metadata:
  name: a
spec:
  schedule: "1 * * * *"
  steps:
  - bogus: 1
  - name: two
    bogus: 2
`
	docs, err := document.Read(strings.NewReader(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := prune.Document(docs[0], jobRegistry(t), prune.Options{Defaults: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := docs[0].Reparse()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{
		"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob",
		"metadata": map[string]interface{}{"name": "a"},
		"spec": map[string]interface{}{
			"schedule": "1 * * * *",
			"steps": []interface{}{
				map[string]interface{}{"timeout": int64(30)},
				map[string]interface{}{"name": "two", "timeout": int64(30)},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reread (-want +got):\n%s", diff)
	}
	if res.Reformatted != "" {
		out, _ := docs[0].Encode()
		t.Errorf("rewritten without comments (%s):\n%s", res.Reformatted, out)
	}
}

func TestJSONInput(t *testing.T) {
	in := `{"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob",
 "metadata": {"name": "a", "lables": {"x": "y"}},
 "spec": {"command": "run", "privileged": true, "steps": [{"name": "s", "bogus": 1}]}}
{"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob", "metadata": {"name": "b"}}
`
	docs, err := document.Read(strings.NewReader(in), "in.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].Source.Line != 1 || docs[1].Source.Line != 4 {
		t.Fatalf("got %d documents", len(docs))
	}
	res, err := prune.Document(docs[0], jobRegistry(t), prune.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := docs[0].Reparse()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{
		"apiVersion": "operations.example.com/v1", "kind": "MaintenanceNightlyJob",
		"metadata": map[string]interface{}{"name": "a"},
		"spec":     map[string]interface{}{"command": "run", "steps": []interface{}{map[string]interface{}{"name": "s"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reread (-want +got):\n%s", diff)
	}
	wantChanges := [][]change{{
		{"metadata.lables", prune.UnknownMetadataField, prune.Removed, 2},
		{"spec.privileged", prune.UnknownField, prune.Removed, 3},
		{"spec.steps[0].bogus", prune.UnknownField, prune.Removed, 3},
	}}
	if diff := cmp.Diff(wantChanges, changesOf([]*prune.Result{res})); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	// JSON in, JSON out: the edited document is still JSON.
	out, err := docs[0].Encode()
	if err != nil {
		t.Fatal(err)
	}
	var v interface{}
	if err := utiljson.Unmarshal(out, &v); err != nil {
		t.Errorf("edited JSON document is no longer JSON (%v):\n%s", err, out)
	}
}

// TestReadFlowStyleYAML: a stream starting with "{" that is not JSON is
// YAML to kubectl (YAMLOrJSONDecoder falls back to YAML when the first
// object is not valid JSON), e.g. a document written as a flow mapping.
func TestReadFlowStyleYAML(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []map[string]interface{}
	}{
		{
			name: "unquoted keys",
			in:   "{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n",
			want: []map[string]interface{}{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]interface{}{"name": "x"}}},
		},
		{
			name: "flow mapping then block documents",
			in:   "{apiVersion: v1, kind: ConfigMap}\n---\napiVersion: v1\nkind: Secret\n",
			want: []map[string]interface{}{{"apiVersion": "v1", "kind": "ConfigMap"}, {"apiVersion": "v1", "kind": "Secret"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := kubectlRead(tt.in)
			if err != nil {
				t.Fatalf("kubectl's reader: %v", err)
			}
			var kubectl []map[string]interface{}
			for _, r := range raw {
				var m map[string]interface{}
				if err := utiljson.Unmarshal(r, &m); err != nil {
					t.Fatal(err)
				}
				kubectl = append(kubectl, m)
			}
			if diff := cmp.Diff(tt.want, kubectl); diff != "" {
				t.Fatalf("kubectl reads (-want +got):\n%s", diff)
			}
			docs, err := document.Read(strings.NewReader(tt.in), "flow.yaml")
			if err != nil {
				t.Fatalf("Read: %v (kubectl reads %d documents)", err, len(kubectl))
			}
			var got []map[string]interface{}
			for _, d := range docs {
				got = append(got, d.Object)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadSkipsEmptyDocuments(t *testing.T) {
	in := "---\n# only a comment\n---\n\n---\nnull\n---\n~\n---\napiVersion: v1\nkind: ConfigMap\n---\n# trailing\n"
	docs, err := document.Read(strings.NewReader(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Source.Line != 10 {
		for _, d := range docs {
			t.Logf("document at %s: %v", d.Source, d.Object)
		}
		t.Fatalf("got %d documents, want 1 at line 10", len(docs))
	}
	if diff := cmp.Diff(map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap"}, docs[0].Object); diff != "" {
		t.Error(diff)
	}
	for _, in := range []string{"", "\n\n", "# nothing\n", "---\n---\n"} {
		docs, err := document.Read(strings.NewReader(in), "in.yaml")
		if err != nil || len(docs) != 0 {
			t.Errorf("Read(%q) = %d documents, %v; want none", in, len(docs), err)
		}
	}
}

// TestReadErrors: every error is an *InputError naming the file and the
// line of the problem.
func TestReadErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string // a part of the message

		kubectlRefuses bool
	}{
		{
			name: "mapping value in a plain scalar",
			in:   "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  a: b: c\n",
			line: 7, msg: "mapping values are not allowed", kubectlRefuses: true,
		},
		{
			name: "tab indentation",
			in:   "apiVersion: v1\nkind: ConfigMap\ndata:\n\ta: b\n",
			line: 4, msg: "cannot start any token", kubectlRefuses: true,
		},
		{
			// The converter names no line: the key's, not the document's first.
			name: "a mapping as a key",
			in:   "# c\napiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n  {x: 1}: y\n",
			line: 6, msg: "invalid map key", kubectlRefuses: true,
		},
		{
			name: "a list as a key",
			in:   "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n  ? [1, 2]\n  : y\n",
			line: 8, msg: "invalid map key", kubectlRefuses: true,
		},
		{
			name: "null as a key",
			in:   "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n  1.5: c\n  ~: z\n",
			line: 6, msg: "unsupported map key", kubectlRefuses: true,
		},
		{
			name: "invalid separator",
			in:   "apiVersion: v1\nkind: ConfigMap\n--- foo\napiVersion: v1\n",
			line: 3, msg: "separator", kubectlRefuses: true,
		},
		{
			name: "a list",
			in:   "apiVersion: v1\nkind: ConfigMap\n---\n# a list\n- a\n- b\n",
			line: 5, msg: "a list",
		},
		{
			name: "a scalar",
			in:   "\n\nhello\n",
			line: 3, msg: "a string",
		},
		{
			name: "JSON list",
			in:   "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\"}\n[1, 2]\n",
			line: 2, msg: "",
		},
		{
			// Neither JSON nor a YAML flow mapping: a comma is missing at
			// the end of line 2, found on line 3.
			name: "broken JSON",
			in:   "{\"apiVersion\": \"v1\",\n \"kind\": \"ConfigMap\"\n \"data\": {}}\n",
			line: 3, msg: "", kubectlRefuses: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := document.Read(strings.NewReader(tt.in), "bad.yaml")
			var ie *document.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an *InputError", err, err)
			}
			if ie.Source.File != "bad.yaml" || ie.Source.Line != tt.line {
				t.Errorf("error at %s, want bad.yaml:%d (%v)", ie.Source, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			// kubectl's reader refuses the same streams (lists and scalars
			// it reads, and refuses later for want of a kind).
			if _, kerr := kubectlRead(tt.in); (kerr != nil) != tt.kubectlRefuses {
				t.Errorf("kubectl's reader: %v; want refused=%v", kerr, tt.kubectlRefuses)
			}
		})
	}
}

// kubectlRead reads a stream the way kubectl's resource builder does
// (cli-runtime StreamVisitor: YAMLOrJSONDecoder into RawExtensions).
func kubectlRead(in string) ([][]byte, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(in), 4096)
	var out [][]byte
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		out = append(out, ext.Raw)
	}
}

// TestEditLayouts: layouts the text edit must handle, each with the exact
// text expected: the dropped field's lines gone, every other line as it was.
func TestEditLayouts(t *testing.T) {
	h := "# top\napiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: a\n"
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	tests := []struct {
		name     string
		in, want string
		defaults bool
	}{
		{
			name: "last line without a newline",
			in:   h + "spec:\n  command: x\n  bogus: 1",
			want: h + "spec:\n  command: x\n",
		},
		{
			// The default lands after command, without a blank line.
			name:     "last line without a newline, with a default",
			in:       h + "spec:\n  command: x\n  bogus: 1",
			want:     h + "spec:\n  command: x\n  schedule: 0 3 * * *\n",
			defaults: true,
		},
		{
			name: "quoted keys",
			in:   h + "spec:\n  \"bogus\": 1\n  'command': x\n",
			want: h + "spec:\n  'command': x\n",
		},
		{
			name: "sequence value at the key's indentation",
			in:   h + "spec:\n  extra:\n  - a\n  - b\n  command: x\n",
			want: h + "spec:\n  command: x\n",
		},
		{
			// The blank line inside the block scalar goes with it; the one
			// after it separates the fields and stays.
			name: "literal block with blank lines",
			in:   h + "spec:\n  command: x\n  bogus: |\n    text\n\n    more\n\n  retries: 1\n",
			want: h + "spec:\n  command: x\n\n  retries: 1\n",
		},
		{
			name: "indented sequence, unknown first key of an item",
			in:   h + "spec:\n  steps:\n    - bogus: 1\n      name: x\n    - name: y\n",
			want: h + "spec:\n  steps:\n    - name: x\n    - name: y\n",
		},
		{
			name: "multi-line flow value of an unknown first key",
			in:   h + "spec:\n  steps:\n  - bogus: [1,\n      2]\n    command: y\n",
			want: h + "spec:\n  steps:\n  - command: y\n",
		},
		{
			name: "flow mapping with a line comment",
			in:   h + "spec: {command: x, bogus: 1} # tail\n# end\n",
			want: h + "spec: {command: x} # tail\n# end\n",
		},
		{
			name: "flow sequence of objects",
			in:   h + "spec:\n  steps: [{name: x, bogus: 1}, {name: y}]\n",
			want: h + "spec:\n  steps: [{name: x}, {name: y}]\n",
		},
		{
			// status is not in the schema; the edit is made at the anchor.
			name: "anchor and alias",
			in:   h + "spec: &s\n  command: x\n  bogus: 1\nstatus: *s\n",
			want: h + "spec: &s\n  command: x\n",
		},
		{
			name: "mapping emptied",
			in:   h + "spec:\n  bogus: 1\n",
			want: h + "spec: {}\n",
		},
		{
			// The server stores spec: {}; the comments must survive.
			name: "mapping emptied, its key has a line comment",
			in:   h + "spec: # the spec\n  bogus: 1\n",
			want: h + "spec: {} # the spec\n",
		},
		{
			name: "CRLF, a field removed",
			in:   crlf(h + "spec:\n  command: x # c\n  bogus: 1\n  retries: 2\n"),
			want: crlf(h + "spec:\n  command: x # c\n  retries: 2\n"),
		},
		{
			name: "CRLF, an item emptied",
			in:   crlf(h + "spec:\n  steps:\n  - bogus: 1\n"),
			want: crlf(h + "spec:\n  steps:\n  - {}\n"),
		},
		{
			name:     "CRLF, a default added",
			in:       crlf(h + "spec:\n  command: x\n"),
			want:     crlf(h + "spec:\n  command: x\n  schedule: 0 3 * * *\n"),
			defaults: true,
		},
		{
			name:     "CRLF, first key of an item removed and a default added to it",
			in:       crlf(h + "spec:\n  schedule: x\n  steps:\n  - bogus: 1\n    name: x\n"),
			want:     crlf(h + "spec:\n  schedule: x\n  steps:\n  - name: x\n    timeout: 30\n"),
			defaults: true,
		},
	}
	reg := jobRegistry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := document.Read(strings.NewReader(tt.in), "in.yaml")
			if err != nil || len(docs) != 1 {
				t.Fatalf("Read: %d documents, %v", len(docs), err)
			}
			res, err := prune.Document(docs[0], reg, prune.Options{Defaults: tt.defaults})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reformatted != "" {
				t.Errorf("Reformatted: %s", res.Reformatted)
			}
			got, err := docs[0].Encode()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("edited (-want +got):\n%s", diff)
			}
		})
	}
}
