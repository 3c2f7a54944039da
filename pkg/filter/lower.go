package filter

import (
	"errors"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// lowerMutability rewrites the CRDs of an item (a List's too) with their
// mutability markers lowered to CEL rules (lower.Document, as kubectl crd
// lower-mutability does) and reports lowering's findings; edited reports
// whether anything changed. The findings about the CRDs as written (the
// server's warnings) are the loader's, reported with the CRD (addCRD).
// Markers that cannot be lowered (misplaced, or over the server's cost
// budget) fail the run, naming the field's line: the CRD would not protect
// what it says.
func (c *CRDCheck) lowerMutability(item *yaml.RNode, doc *document.Document) (edited bool, err error) {
	for _, l := range lower.Document(doc, strategy.Validators{}) {
		if l.Err != nil {
			return false, atItemLine(item, doc, l)
		}
		ref := document.Ref(l.Doc.Object)
		id := &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind}, NameMeta: yaml.NameMeta{Name: ref.Name}}
		for _, f := range c.gate.Judge(l.Findings) {
			c.result(f, id, &framework.File{Path: l.Doc.Source.File})
		}
		edited = edited || l.Edited()
	}
	return edited, nil
}

// atItemLine is l's error at the line of its field as the function read the
// item: the file's line standalone (the reader keeps each node's line), the
// ResourceList's under kustomize or kpt. The document's own lines are those
// of the item written again, annotations added, which are nobody's. An
// item read from the input's text (item nil) is read again as kyaml's node
// before an error is reported (readItems).
func atItemLine(item *yaml.RNode, doc *document.Document, l lower.Lowered) error {
	var ie *document.InputError
	if item == nil || len(l.Field) == 0 || !errors.As(l.Err, &ie) {
		return l.Err
	}
	p := l.Field
	if l.Doc != doc { // an item of a List
		p = append(fieldpath.Path{fieldpath.Key("items"), fieldpath.Index(slices.Index(doc.Objects(), l.Doc))}, p...)
	}
	for ; len(p) > 0; p = p[:len(p)-1] {
		if line := document.NodeLine(item.YNode(), p); line > 0 {
			at := *ie
			at.Source.Line = line
			return &at
		}
	}
	return l.Err
}
