package update

import (
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

func TestValidateOld(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want: the error, "" for none
	}{
		{"stored object", "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: a, namespace: ns}\n", ""},
		{"cluster-scoped", "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: a}\n", ""},
		{"no kind", "apiVersion: example.com/v1\nmetadata: {name: a}\n", "f:1: not a Kubernetes object: apiVersion and kind must be set"},
		{"no apiVersion", "kind: Foo\nmetadata: {name: a}\n", "f:1: not a Kubernetes object: apiVersion and kind must be set"},
		{"apiVersion not a string", "apiVersion: 1\nkind: Foo\nmetadata: {name: a}\n", "f:1: not a Kubernetes object: apiVersion and kind must be set"},
		{"kind not a string", "apiVersion: v1\nkind: [Foo]\nmetadata: {name: a}\n", "f:1: not a Kubernetes object: apiVersion and kind must be set"},
		{"invalid apiVersion", "apiVersion: a/b/c\nkind: Foo\nmetadata: {name: a}\n", `f:1: invalid apiVersion "a/b/c": unexpected GroupVersion string: a/b/c`},
		{"metadata not an object", "apiVersion: v1\nkind: Foo\nmetadata: [a]\n", "f:1: the server would refuse this object: metadata: json: cannot unmarshal array into Go value of type v1.ObjectMeta"},
		{"name not a string", "apiVersion: v1\nkind: Foo\nmetadata: {name: true}\n", "f:1: the server would refuse this object: metadata: json: cannot unmarshal bool into Go struct field ObjectMeta.name of type string"},
		{"no metadata", "apiVersion: v1\nkind: Foo\n", "f:1: metadata.name must be set: old objects are matched to the new ones by name"},
		{"generateName only", "apiVersion: v1\nkind: Foo\nmetadata: {generateName: a-}\n", "f:1: metadata.name must be set: old objects are matched to the new ones by name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := document.Read(strings.NewReader(tc.in), "f")
			if err != nil || len(docs) != 1 {
				t.Fatalf("%d documents, %v", len(docs), err)
			}
			err = ValidateOld(docs[0])
			got := ""
			if err != nil {
				got = err.Error()
				if _, ok := err.(*document.InputError); !ok {
					t.Errorf("%T, want *document.InputError", err)
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
