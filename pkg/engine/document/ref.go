package document

import (
	"fmt"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectRef names an object: what every finding, report and result is
// about, in both front ends.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
}

func (r ObjectRef) String() string {
	name := r.Name
	if name == "" {
		name = "<unnamed>"
	}
	if r.Namespace != "" {
		return r.Kind + " " + r.Namespace + "/" + name
	}
	return r.Kind + " " + name
}

// Ref returns the reference of a decoded object; fields of the wrong type are left empty.
func Ref(obj map[string]interface{}) ObjectRef {
	str := func(m map[string]interface{}, k string) string {
		s, _ := m[k].(string)
		return s
	}
	ref := ObjectRef{APIVersion: str(obj, "apiVersion"), Kind: str(obj, "kind")}
	if md, ok := obj["metadata"].(map[string]interface{}); ok {
		ref.Namespace, ref.Name = str(md, "namespace"), str(md, "name")
	}
	return ref
}

// Identify returns what a document says it is: its reference and group
// version. An error is an *InputError: apiVersion or kind is unset or not
// a string, or apiVersion is not a group version.
func Identify(doc *Document) (ObjectRef, runtimeschema.GroupVersion, error) {
	ref := Ref(doc.Object)
	if ref.APIVersion == "" || ref.Kind == "" {
		return ref, runtimeschema.GroupVersion{}, &InputError{Source: doc.Source, Msg: "not a Kubernetes object: apiVersion and kind must be set"}
	}
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ref, gv, &InputError{Source: doc.Source, Msg: fmt.Sprintf("invalid apiVersion %q: %v", ref.APIVersion, err)}
	}
	return ref, gv, nil
}
