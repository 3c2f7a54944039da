package plugin

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCRDMatches(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "certificates.cert-manager.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cert-manager.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "certificates", Singular: "certificate", Kind: "Certificate", ShortNames: []string{"cert", "certs"}},
		},
	}
	for name, want := range map[string]bool{
		"certificates.cert-manager.io": true,
		"certificates":                 true,
		"certificate":                  true,
		"Certificate":                  true,
		"certificate.cert-manager.io":  true,
		"cert":                         true,
		"CERTS":                        true,
		"cert.cert-manager.io":         true,
		"certificates.other.io":        false,
		"certificaterequests":          false,
		"cert-manager.io":              false,
		"":                             false,
	} {
		if got := crdMatches(crd, name); got != want {
			t.Errorf("crdMatches(%q) = %v, want %v", name, got, want)
		}
	}
}
