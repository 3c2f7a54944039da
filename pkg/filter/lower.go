package filter

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// lowerMutability rewrites the CRDs of an item (a List's too) with their
// mutability markers lowered to CEL rules, as kubectl crd lower-mutability
// does; edited reports whether anything changed. Markers that cannot be
// lowered (misplaced, or over the server's cost budget) fail the run: the
// CRD would not protect what it says.
func (c *CRDCheck) lowerMutability(doc *document.Document) (edited bool, err error) {
	for _, d := range doc.Objects() {
		if _, ok, _ := schema.DecodeObject(d.Object, nil); !ok {
			continue
		}
		res, err := lower.CRD(d.Object, strategy.Validators{})
		if err != nil {
			// The error names the field; an item's lines are those of the
			// ResourceList kustomize wrote, so the item's start is named.
			return false, fmt.Errorf("%s: %v", d.Source, err)
		}
		for _, w := range res.Warnings {
			c.Results = append(c.Results, &framework.Result{
				Message:  "lowerMutability: " + w,
				Severity: framework.Warning,
				ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
					NameMeta: yaml.NameMeta{Name: fmt.Sprint(d.Object["metadata"].(map[string]interface{})["name"])}},
				File: &framework.File{Path: d.Source.File},
			})
		}
		if len(res.Edits) == 0 {
			continue
		}
		if _, err := d.Apply(res.Edits, res.Object); err != nil {
			return false, fmt.Errorf("%s: %v", d.Source, err)
		}
		edited = true
	}
	return edited, nil
}
