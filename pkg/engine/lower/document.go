package lower

import (
	"errors"
	"fmt"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Lowered is one CRD of a document, as Document lowered it.
type Lowered struct {
	// Doc is the CRD's document (in a List, its item's), edited in place.
	Doc *document.Document
	// Result is the lowering; nil when Err is set.
	Result *Result
	// CRD are the findings about the CRD as written (finding.OfCRD): the
	// server's warnings when it accepts it, an apiVersion no server serves.
	// A run that added the CRD to a catalog has them from there.
	CRD []finding.Finding
	// Findings are lowering's, in order: its warnings
	// (finding.FromLowering, with the marked node's path and line), then
	// the note of a document written again without some of its comments
	// (finding.Reformatted).
	Findings []finding.Finding
	// Err is why the markers cannot be lowered; the document is not
	// edited. Bad input is a *document.InputError naming the file and the
	// line of the field it is about, which wraps a *MarkerError (the line
	// of the first misplaced marker), a *CostError or an *UnreachableError
	// (the line of the marker), or a *schema.InvalidError (the CRD's own
	// line): the CRD would not protect what it says, or not be applied.
	// Anything else (a *RefusedError: a rule of this package the server
	// refuses) is wrapped with the document's source.
	Err error
	// Field is the path, in Doc, of the field Err is about: the first
	// misplaced marker, the marker of a rule that cannot be lowered; nil
	// for the whole CRD. (Its line is Err's, in Doc's lines.)
	Field fieldpath.Path
}

// Edited reports whether the CRD's document was edited.
func (l *Lowered) Edited() bool { return l.Err == nil && len(l.Result.Edits) > 0 }

// Document lowers the mutability markers of every CRD among doc's objects
// (a List's items too), as both kubectl crd lower-mutability and the KRM
// function's lowerMutability do: each CRD decoded and checked with v (the
// server's CRD validation), lowered (CRD), and its document edited with
// its comments and layout kept (document.Apply). The other objects are
// left alone and not listed. A CRD without markers is listed, unedited.
// Whether a finding fails the run is the caller's gate's (finding.Gate);
// lowering's findings are of no check, warnings.
func Document(doc *document.Document, v schema.CRDValidator) []Lowered {
	var out []Lowered
	for _, d := range doc.Objects() {
		crd, ok, err := schema.FromObject(d.Object, v)
		if !ok {
			continue
		}
		l := Lowered{Doc: d}
		if err != nil {
			l.Err = &document.InputError{Source: d.Source, Msg: err.Error(), Err: err}
		} else {
			l.CRD = finding.OfCRD(crd)
			l.lower(v)
		}
		out = append(out, l)
	}
	return out
}

// lower lowers l.Doc's CRD and applies the edits.
func (l *Lowered) lower(v schema.CRDValidator) {
	d := l.Doc
	res, err := CRD(d.Object, v)
	if err != nil {
		l.Field, l.Err = refusal(d, err)
		return
	}
	l.Result = res
	for _, w := range res.Warnings {
		l.Findings = append(l.Findings, finding.FromLowering(w.Reason, serverSchemaPath(w.Marked), w.String(), d.Line(w.Marked)))
	}
	if len(res.Edits) == 0 {
		return
	}
	note, err := d.Apply(res.Edits, res.Object)
	if err != nil {
		l.Result, l.Err = nil, fmt.Errorf("%s: %w", d.Source, err)
		return
	}
	if note != "" {
		l.Findings = append(l.Findings, finding.Reformatted(note, d.Source.Line))
	}
}

// refusal is the path of the field err is about, and err, which CRD
// returned for d, named by the file and the line of that field.
func refusal(d *document.Document, err error) (fieldpath.Path, error) {
	var cost *CostError
	var unreachable *UnreachableError
	var markers *MarkerError
	var invalid *schema.InvalidError
	var field fieldpath.Path
	switch {
	case errors.As(err, &cost):
		field = cost.Rule.MarkerPath()
	case errors.As(err, &unreachable):
		field = unreachable.Rule.MarkerPath()
	case errors.As(err, &markers):
		if len(markers.Errs) > 0 {
			field = fieldpath.Parse(markers.Errs[0].Field)
		}
	case errors.As(err, &invalid):
	default:
		return nil, fmt.Errorf("%s: %w", d.Source, err)
	}
	src := d.Source
	// The field's line, else its nearest parent's.
	for p := field; len(p) > 0; p = p[:len(p)-1] {
		if line := d.Line(p); line > 0 {
			src.Line = line
			break
		}
	}
	return field, &document.InputError{Source: src, Msg: err.Error(), Err: err}
}
