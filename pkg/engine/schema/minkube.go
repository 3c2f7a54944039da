package schema

import (
	"errors"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// Acceptance is which Kubernetes minors' API servers accept a CRD: each
// supported minor's create validation, as kubeversion.Use makes it answer.
type Acceptance struct {
	// Lowest is the oldest minor that accepts the CRD; 0 when none does.
	Lowest kubeversion.Minor
	// Accepted are the minors that accept it, Refused those that refuse
	// it, each oldest first.
	Accepted []kubeversion.Minor
	Refused  []MinorRefusal
}

// MinorRefusal is a minor that refuses a CRD, and the first of its
// reasons (the server's errors sorted, as Invalid sorts them).
type MinorRefusal struct {
	Minor  kubeversion.Minor
	Reason string
}

// From reports whether every minor from Lowest on accepts the CRD: the
// CRD works from Lowest on, and only older minors refuse it.
func (a Acceptance) From() bool {
	return a.Lowest != 0 && len(a.Accepted) == int(kubeversion.Embedded-a.Lowest)+1
}

// MinKubeVersion asks the create validation v of every supported minor,
// oldest first, whether it accepts obj, a CustomResourceDefinition as
// DecodeObject reads it (one in apiextensions.k8s.io/v1beta1 is validated
// as the rewrite of the CRD it stands for), and returns to the minor that
// answered before. An error is one of decoding, which no minor's answer
// changes, or one of switching minors.
func MinKubeVersion(obj map[string]interface{}, v CRDValidator) (Acceptance, error) {
	var a Acceptance
	err := kubeversion.Each(kubeversion.Supported(), func(m kubeversion.Minor) error {
		err := Refusal(obj, v)
		var invalid *InvalidError
		switch {
		case err == nil:
			if a.Lowest == 0 {
				a.Lowest = m
			}
			a.Accepted = append(a.Accepted, m)
		case errors.As(err, &invalid) && len(invalid.Errs) > 0:
			a.Refused = append(a.Refused, MinorRefusal{Minor: m, Reason: invalid.Errs[0].Error()})
		default:
			return err
		}
		return nil
	})
	return a, err
}

// AsCreated is a CRD of a cluster as a request to create it anew: its
// name, labels, annotations and spec, in apiextensions.k8s.io/v1, as
// DecodeObject reads it; what the server set (status, uid, versions and
// times, managed fields) left out, as a create of it would leave it out.
func AsCreated(crd *apiextensionsv1.CustomResourceDefinition) (map[string]interface{}, error) {
	created := apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations},
		Spec:       crd.Spec,
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&created)
	if err != nil {
		return nil, err
	}
	delete(obj, "status")
	return obj, nil
}
