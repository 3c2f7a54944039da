package plugin

import (
	"fmt"
	"io"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin/report"
)

// pruneOutput is where prune writes, a document at a time: the objects (YAML
// or a JSON List) and the report go to spools, the files to rewrite to a
// rewriter. Nothing reaches stdout or a file before Finish, which the run
// calls only when every document was checked.
type pruneOutput struct {
	o *PruneOptions

	objects *safewrite.Spool // nil: no objects printed
	docs    *documentWriter

	report      *safewrite.Spool // nil: no report
	reportDoc   *jsonObjectWriter
	reportItems *jsonArray

	rewrites *rewriter // --in-place, --diff

	findings *reportOutput // -o sarif, junit, github: a report instead of the objects
}

func (o *PruneOptions) newPruneOutput() (_ *pruneOutput, err error) {
	out := &pruneOutput{o: o}
	defer func() {
		if err != nil {
			out.Close()
			err = &ExitError{Code: ExitInternal, Err: fmt.Errorf("a spool for the output: %w", err)}
		}
	}()
	isReport := report.IsFormat(o.Output)
	if isReport {
		if out.findings, err = newReportOutput(o.Output, "prune"); err != nil {
			return nil, err
		}
	}
	switch {
	case o.InPlace || o.Diff:
		out.rewrites = newRewriter(o.InPlace)
	case o.Report != "-" && !isReport:
		if out.objects, err = safewrite.NewSpool(); err != nil {
			return nil, err
		}
		out.docs = newDocumentWriter(out.objects, o.Output)
	}
	if o.Report != "" {
		if out.report, err = safewrite.NewSpool(); err != nil {
			return nil, err
		}
		out.reportDoc = &jsonObjectWriter{w: out.report}
		out.reportDoc.Key("items")
		out.reportItems = out.reportDoc.Array()
	}
	return out, nil
}

// AddVerdict adds an object's findings to the report of -o sarif, junit
// or github, if any.
func (p *pruneOutput) AddVerdict(v *catalog.Verdict) error {
	if p.findings == nil {
		return nil
	}
	return p.findings.Add(verdictObject(v))
}

// Add writes the next document of -f as read, with the results of its
// objects.
func (p *pruneOutput) Add(d *document.Document, results []*prune.Result) error {
	if p.reportItems != nil {
		for _, r := range results {
			p.reportItems.Add(r)
		}
	}
	switch {
	case p.rewrites != nil:
		p.rewrites.Add(d, results)
	case p.docs != nil:
		return p.docs.Add(d)
	}
	return nil
}

func spoolError(err error) error {
	return &ExitError{Code: ExitInternal, Err: fmt.Errorf("the output spool: %w", err)}
}

// Finish writes the report and the objects, or the rewrites, in that order;
// rewrote is whether --in-place or --diff has files to change.
func (p *pruneOutput) Finish(warnings []inputWarning) (rewrote bool, err error) {
	var files []rewrite
	if p.rewrites != nil {
		// Before anything is written: none is (nor the report) when a file is refused.
		if files, err = p.o.planRewrites(p.rewrites); err != nil {
			return false, err
		}
	}
	if p.report != nil {
		if err := p.writeReport(warnings); err != nil {
			return false, err
		}
	}
	if p.rewrites != nil {
		if err := p.o.writeRewrites(files); err != nil {
			return false, err
		}
	}
	if p.findings != nil {
		return len(files) > 0, p.writeFindings(warnings)
	}
	if p.rewrites != nil {
		return len(files) > 0, nil
	}
	if p.objects == nil {
		return false, nil
	}
	if err := p.docs.Close(); err != nil {
		return false, spoolError(err)
	}
	for _, n := range p.docs.Notes {
		fmt.Fprint(p.o.ErrOut, n)
	}
	if err := p.objects.Rewind(); err != nil {
		return false, spoolError(err)
	}
	_, err = io.Copy(p.o.Out, p.objects)
	return false, err
}

// writeFindings writes the report of -o sarif, junit or github, with the
// warnings about the inputs, to stdout.
func (p *pruneOutput) writeFindings(warnings []inputWarning) error {
	for _, w := range warningObjects(warnings) {
		if err := p.findings.Add(w); err != nil {
			return err
		}
	}
	return p.findings.Finish(p.o.Out)
}

// writeReport ends the report and writes it where --report says. The
// report is the --report contract of docs/json.md, {"items": the
// prune.Results, "kubernetes": which minor answered (kubeversion.Stamp),
// "warnings": the inputWarnings about the inputs themselves}: fields are
// added, never renamed.
func (p *pruneOutput) writeReport(warnings []inputWarning) error {
	if err := p.reportItems.Close(); err != nil {
		return spoolError(err)
	}
	if warnings == nil {
		warnings = []inputWarning{}
	}
	p.reportDoc.Key(kubeversion.Key)
	p.reportDoc.Value(kubeversion.Current().Stamp())
	p.reportDoc.Key("warnings")
	p.reportDoc.Value(warnings)
	if err := p.reportDoc.Close(); err != nil {
		return spoolError(err)
	}
	if err := p.report.Rewind(); err != nil {
		return spoolError(err)
	}
	var err error
	// The user named this file: failing to write it is no bad input.
	if p.o.Report == "-" {
		_, err = io.Copy(p.o.Out, p.report)
	} else {
		// A name of stdout or stderr (/dev/stderr, 2>>ci.log) is written
		// through the stream, after what it holds, never over its file.
		err = p.o.streams().Write(p.o.Report, func(w io.Writer) error {
			_, err := io.Copy(w, p.report)
			return err
		})
	}
	if err != nil {
		return &ExitError{Code: ExitInternal, Err: fmt.Errorf("--report: %w", err)}
	}
	return nil
}

// Close removes the spools.
func (p *pruneOutput) Close() {
	for _, s := range []*safewrite.Spool{p.objects, p.report} {
		if s != nil {
			s.Close()
		}
	}
	if p.findings != nil {
		p.findings.Close()
	}
}

// documentWriter writes the documents of -f as read, edited: as YAML, one
// after another with "---" between them, or (-o json) as a List of their
// objects, an element at a time.
type documentWriter struct {
	w     io.Writer
	n     int
	endLF bool // the last YAML document written ends its line
	list  *jsonObjectWriter
	items *jsonArray
	err   error
	// Notes are the warnings about Lists written again without their
	// comments, to print once the documents are.
	Notes []string
}

func newDocumentWriter(w io.Writer, output string) *documentWriter {
	dw := &documentWriter{w: w}
	if output == "json" {
		dw.list = &jsonObjectWriter{w: w}
		dw.list.Key("apiVersion")
		dw.list.Value("v1")
		dw.list.Key("items")
		dw.items = dw.list.Array()
	}
	return dw
}

// Add writes the next document.
func (dw *documentWriter) Add(d *document.Document) error {
	if dw.items != nil {
		for _, obj := range d.Objects() {
			v, err := obj.Reparse()
			if err != nil {
				return err
			}
			dw.items.Add(v)
		}
		return nil
	}
	b, err := d.Encode()
	if err != nil {
		return err
	}
	// A List is written once, with the edits of all its items.
	if note, err := d.Reformatted(); err != nil {
		return err
	} else if note != "" {
		dw.Notes = append(dw.Notes, printable.Sprintf("Warning: %s: %s (%s)\n", document.Ref(d.Object), note, d.Source))
	}
	if dw.n > 0 {
		// A document at the end of a file may lack the final newline; it
		// needs one when another document follows.
		if !dw.endLF {
			dw.write([]byte("\n"))
		}
		dw.write([]byte("---\n"))
	}
	dw.n++
	dw.write(b)
	dw.endLF = len(b) == 0 || b[len(b)-1] == '\n'
	return dw.err
}

func (dw *documentWriter) write(b []byte) {
	if dw.err == nil {
		_, dw.err = dw.w.Write(b)
	}
}

// Close ends the JSON List; the error is the first of any write.
func (dw *documentWriter) Close() error {
	if dw.list == nil {
		return dw.err
	}
	if err := dw.items.Close(); err != nil {
		return err
	}
	dw.list.Key("kind")
	dw.list.Value("List")
	return dw.list.Close()
}
