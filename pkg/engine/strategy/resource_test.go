package strategy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// createCRD has a rule of each kind the server validates on a create. The
// e2e test test/e2e/createvalidation_test.go sends the same kinds of
// objects to a real API server.
const createCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: SCOPE
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          metadata:
            type: object
            properties:
              name: {type: string, maxLength: 20}
          spec:
            type: object
            required: [engine, size]
            x-kubernetes-validations:
            - rule: self.minReplicas <= self.replicas
              message: minReplicas must not exceed replicas
            properties:
              engine: {type: string, enum: [postgres, mysql]}
              region: {type: string, pattern: '^[a-z]+-[a-z]+-[0-9]$'}
              replicas: {type: integer, default: 1}
              minReplicas: {type: integer, default: 0}
              size: {type: string, default: small}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
          status:
            type: object
            properties:
              phase: {type: string, enum: [Ready]}
`

func createRegistry(t *testing.T, scope string) *schema.Registry {
	t.Helper()
	docs, err := document.Read(strings.NewReader(strings.Replace(createCRD, "SCOPE", scope, 1)), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd, ok, err := schema.FromObject(docs[0].Object, Validators{})
	if err != nil || !ok {
		t.Fatalf("the CRD: %v", err)
	}
	reg := schema.NewRegistry()
	reg.Add(crd)
	return reg
}

// Each kind of refusal of the server's create validation, run through
// prune.Document as prune runs it; and what the server does before
// validating, which makes an object valid (defaults, the status dropped, a
// generated name, the request's namespace).
func TestValidateCreate(t *testing.T) {
	type refusal struct{ Field, Type string }
	const head = "apiVersion: example.com/v1\nkind: Widget\n"
	// The server's CEL validation does not run over an object with errors
	// of some types, and says so at the root.
	blocked := refusal{"<nil>", "Invalid value"}
	for _, tc := range []struct {
		name     string
		scope    string // Namespaced unless set
		obj      string
		defaults bool
		want     []refusal // the field paths and error types; none: accepted
	}{
		{name: "valid", obj: "metadata: {name: w, namespace: ns}\nspec: {engine: postgres, size: large, replicas: 3, minReplicas: 1, region: eu-west-1}\n"},
		{name: "a required field with a default, output without defaults", obj: "metadata: {name: w}\nspec: {engine: mysql}\n"},
		{name: "a required field with a default, defaults", obj: "metadata: {name: w}\nspec: {engine: mysql}\n", defaults: true},
		{name: "an invalid status, dropped under the status subresource", obj: "metadata: {name: w}\nspec: {engine: mysql}\nstatus: {phase: Broken}\n"},
		{name: "generateName", obj: "metadata: {generateName: w-}\nspec: {engine: mysql}\n"},
		{name: "a cluster-scoped kind with a namespace", scope: "Cluster", obj: "metadata: {name: w, namespace: ns}\nspec: {engine: mysql}\n"},
		{name: "unknown fields are pruned before", obj: "metadata: {name: w}\nspec: {engine: mysql, extra: {replicas: x}}\n"},

		{name: "spec of the wrong type", obj: "metadata: {name: w}\nspec: a string\n",
			want: []refusal{blocked, {"spec", "Invalid value"}}},
		{name: "a field of the wrong type", obj: "metadata: {name: w}\nspec: {engine: mysql, replicas: three}\n",
			want: []refusal{blocked, {"spec.replicas", "Invalid value"}}},
		{name: "a missing required field", obj: "metadata: {name: w}\nspec: {size: large}\n",
			want: []refusal{blocked, {"spec.engine", "Required value"}}},
		{name: "no spec", obj: "metadata: {name: w}\n"},
		{name: "enum", obj: "metadata: {name: w}\nspec: {engine: oracle}\n",
			want: []refusal{blocked, {"spec.engine", "Unsupported value"}}},
		{name: "pattern", obj: "metadata: {name: w}\nspec: {engine: mysql, region: EU}\n",
			want: []refusal{{"spec.region", "Invalid value"}}},
		{name: "a CEL rule", obj: "metadata: {name: w}\nspec: {engine: mysql, replicas: 1, minReplicas: 2}\n",
			want: []refusal{{"spec", "Invalid value"}}},
		{name: "a CEL rule with a default", obj: "metadata: {name: w}\nspec: {engine: mysql, minReplicas: 2}\n",
			want: []refusal{{"spec", "Invalid value"}}},
		{name: "a list-type map with a duplicate key", obj: "metadata: {name: w}\nspec: {engine: mysql, ports: [{name: http, port: 80}, {name: http, port: 8080}]}\n",
			want: []refusal{{"spec.ports[1]", "Duplicate value"}}},
		{name: "a list-type set with a duplicate", obj: "metadata: {name: w}\nspec: {engine: mysql, tags: [a, b, a]}\n",
			want: []refusal{{"spec.tags[2]", "Duplicate value"}}},
		{name: "an invalid name", obj: "metadata: {name: Bad_Name}\nspec: {engine: mysql}\n",
			want: []refusal{{"metadata.name", "Invalid value"}}},
		{name: "a name longer than the schema allows", obj: "metadata: {name: a-name-of-twenty-five-chars}\nspec: {engine: mysql}\n",
			want: []refusal{blocked, {"metadata.name", "Too long"}}},
		{name: "no name", obj: "metadata: {labels: {a: b}}\nspec: {engine: mysql}\n",
			want: []refusal{blocked, {"metadata.name", "Required value"}}},
		{name: "an invalid label", obj: "metadata: {name: w, labels: {bad key: x}}\nspec: {engine: mysql}\n",
			want: []refusal{{"metadata.labels", "Invalid value"}}},
		{name: "an invalid namespace", obj: "metadata: {name: w, namespace: Bad_NS}\nspec: {engine: mysql}\n",
			want: []refusal{{"metadata.namespace", "Invalid value"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scope := tc.scope
			if scope == "" {
				scope = "Namespaced"
			}
			reg := createRegistry(t, scope)
			docs, err := document.Read(strings.NewReader(head+tc.obj), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			res, err := prune.Document(docs[0], reg, prune.Options{Defaults: tc.defaults, Validate: Validators{}})
			if err != nil {
				t.Fatal(err)
			}
			var got []refusal
			seen := map[refusal]bool{}
			for _, e := range res.Errors {
				if r := (refusal{e.Field, e.Type}); !seen[r] {
					seen[r] = true
					got = append(got, r)
				}
				if !strings.HasPrefix(e.Message, e.Field+": "+e.Type) || e.Line < 1 {
					t.Errorf("error %+v: want the message to start with the field and type, and a line", e)
				}
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("refusals (-want +got):\n%s\n%+v", d, res.Errors)
			}
			wantStatus := prune.Checked
			if len(tc.want) > 0 {
				wantStatus = prune.Invalid
			}
			if res.Status != wantStatus {
				t.Errorf("status %s, want %s", res.Status, wantStatus)
			}
		})
	}
}
