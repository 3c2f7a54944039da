package document_test

import (
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// An edited JSON document is written as JSON, in its key order and its
// layout: indented by its own unit (a collection written on one line stays
// on one), with its line ends, or on one line with its separators. It used
// to come out as YAML flow style on one line.
func TestJSONKeepsItsLayout(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"two spaces",
			"{\n  \"kind\": \"A\",\n  \"spec\": {\n    \"gone\": true,\n    \"list\": [1, 2.50, \"<x> & y\"],\n    \"z\": null\n  }\n}\n",
			"{\n  \"kind\": \"A\",\n  \"spec\": {\n    \"list\": [1, 2.50, \"<x> & y\"],\n    \"z\": null,\n    \"added\": {\n      \"b\": [\n        true\n      ],\n      \"n\": 1.5\n    }\n  }\n}"},
		{"tabs, CRLF",
			"{\r\n\t\"kind\": \"A\",\r\n\t\"spec\": {\r\n\t\t\"gone\": 1\r\n\t}\r\n}\r\n",
			"{\r\n\t\"kind\": \"A\",\r\n\t\"spec\": {\r\n\t\t\"added\": {\r\n\t\t\t\"b\": [\r\n\t\t\t\ttrue\r\n\t\t\t],\r\n\t\t\t\"n\": 1.5\r\n\t\t}\r\n\t}\r\n}"},
		{"compact",
			`{"kind":"A","spec":{"gone":1,"keep":"v"}}`,
			`{"kind":"A","spec":{"keep":"v","added":{"b":[true],"n":1.5}}}`},
		{"one line, spaced",
			`{"kind": "A", "spec": {"gone": 1}}`,
			`{"kind": "A", "spec": {"added": {"b": [true], "n": 1.5}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := document.Read(strings.NewReader(tc.in), "in.json")
			if err != nil || len(docs) != 1 {
				t.Fatal(docs, err)
			}
			d := docs[0]
			want := d.Object
			spec := want["spec"].(map[string]interface{})
			delete(spec, "gone")
			added := map[string]interface{}{"n": 1.5, "b": []interface{}{true}}
			spec["added"] = added
			note, err := d.Apply([]document.Edit{
				{Path: fieldpath.Parse("spec.gone"), Remove: true},
				{Path: fieldpath.Parse("spec.added"), Value: added},
			}, want)
			if err != nil || note != "" {
				t.Fatalf("Apply: %q, %v", note, err)
			}
			out, err := d.Encode()
			if err != nil || string(out) != tc.want {
				t.Errorf("Encode: %v\n%s\nwant:\n%s", err, out, tc.want)
			}
		})
	}
}
