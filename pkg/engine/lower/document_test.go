package lower_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// thingCRDText is a CRD of kind Thing whose spec has the properties (YAML,
// indented for their place).
func thingCRDText(name, properties string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + name + `.example.com}
spec:
  group: example.com
  names: {kind: ` + name + `, plural: ` + name + `}
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
` + properties
}

// Document lowers every CRD of a document, a List's items too, and
// leaves other objects alone: per CRD, its findings (the server's warnings
// on it, lowering's warnings with the marked node's path and line) and,
// for markers that cannot be lowered, an input error at the marker's line
// that wraps the typed error.
func TestDocument(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		// per CRD: its findings (Check Reason Path Line: Message) and
		// "edited"; the start of its error, and the type it wraps
		want []string
		err  []string
		as   []func(error) bool
	}{{
		name: "nullable, and the server's warning",
		text: thingCRDText("things", `              ref: {type: string, nullable: true, x-kubernetes-mutability: Immutable}
              size: {type: integer, format: uint}
`),
		want: []string{`CRDWarning   : unrecognized format "uint"` +
			"\n Nullable spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[ref] 19: spec.ref: nullable: the server's CEL sees null as absent, so the rules let it go from null to absent and back" +
			"\nedited"},
		err: []string{""},
	}, {
		name: "a List: a CRD over the budget, one fine, an object",
		text: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c}
- ` + strings.ReplaceAll(thingCRDText("lists", `              names:
                type: array
                x-kubernetes-list-type: set
                x-kubernetes-key-mutability: AddOnly
                items: {type: string}
`), "\n", "\n  ") + `
- ` + strings.ReplaceAll(thingCRDText("zones", `              zone: {type: string, maxLength: 8, x-kubernetes-mutability: Immutable}
`), "\n", "\n  "),
		want: []string{"", "edited"},
		err:  []string{"-:28: spec.names: the rule lowered from x-kubernetes-key-mutability: AddOnly is over the API server's CEL cost budget", ""},
		as:   []func(error) bool{func(err error) bool { return errors.As(err, new(*lower.CostError)) }, nil},
	}, {
		name: "misplaced",
		text: thingCRDText("misplaced", `              a: {type: string}
            x-kubernetes-key-mutability: Immutable
`),
		want: []string{""},
		err:  []string{"-:20: misplaced mutability markers, which cannot be lowered"},
		as:   []func(error) bool{func(err error) bool { return errors.As(err, new(*lower.MarkerError)) }},
	}, {
		name: "refused by the server",
		text: strings.Replace(thingCRDText("invalid", "              a: {type: string}\n"), "scope: Namespaced", "scope: Somewhere", 1),
		want: []string{""},
		err:  []string{"-:1: CustomResourceDefinition invalid.example.com is invalid: spec.scope: Unsupported value"},
		as:   []func(error) bool{func(err error) bool { return errors.As(err, new(*schema.InvalidError)) }},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := document.Read(strings.NewReader(tc.text), "-")
			if err != nil || len(docs) != 1 {
				t.Fatalf("%d documents, %v", len(docs), err)
			}
			got := lower.Document(docs[0], strategy.Validators{})
			if len(got) != len(tc.want) {
				t.Fatalf("%d CRDs, want %d", len(got), len(tc.want))
			}
			edited := false
			for i, l := range got {
				edited = edited || l.Edited()
				var lines []string
				for _, f := range append(l.CRD, l.Findings...) {
					lines = append(lines, string(f.Check)+" "+f.Reason+" "+f.Path+" "+lineOf(f)+": "+f.Message)
				}
				if l.Edited() {
					lines = append(lines, "edited")
				}
				if diff := cmp.Diff(tc.want[i], strings.Join(lines, "\n")); diff != "" {
					t.Errorf("CRD %d (-want +got):\n%s", i, diff)
				}
				var ie *document.InputError
				switch {
				case tc.err[i] == "" && l.Err != nil:
					t.Errorf("CRD %d: %v", i, l.Err)
				case tc.err[i] != "" && (l.Err == nil || !strings.HasPrefix(l.Err.Error(), tc.err[i]) || !errors.As(l.Err, &ie) || !tc.as[i](l.Err)):
					t.Errorf("CRD %d: error %v (%T), want an input error wrapping the typed one: %s...", i, l.Err, l.Err, tc.err[i])
				}
			}
			// The edits are the document's, a List's too.
			out, err := docs[0].Encode()
			if err != nil || edited != strings.Contains(string(out), "x-kubernetes-validations") {
				t.Errorf("edited %v, the document: %v\n%s", edited, err, out)
			}
		})
	}
}

func lineOf(f finding.Finding) string {
	if f.Line == 0 {
		return ""
	}
	return strconv.Itoa(f.Line)
}
