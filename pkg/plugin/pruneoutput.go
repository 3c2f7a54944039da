package plugin

import (
	"fmt"
	"io"

	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// pruneOutput is where prune writes, a document at a time: the objects (YAML
// or a JSON List) and the report go to spools, the files to rewrite to a
// rewriter. Nothing reaches stdout or a file before Finish, which the run
// calls only when every document was checked.
type pruneOutput struct {
	o *PruneOptions

	objects   *safewrite.Spool // nil: no objects printed
	yamlDocs  int
	lastLF    bool              // the last YAML document written ends a line
	jsonList  *jsonObjectWriter // -o json
	jsonItems *jsonArray
	notes     []string // Lists written again without their comments

	report      *safewrite.Spool // nil: no report
	reportDoc   *jsonObjectWriter
	reportItems *jsonArray

	rewrites *rewriter // --in-place, --diff
}

func (o *PruneOptions) newPruneOutput() (_ *pruneOutput, err error) {
	out := &pruneOutput{o: o}
	defer func() {
		if err != nil {
			out.Close()
			err = &ExitError{Code: ExitInternal, Err: fmt.Errorf("a spool for the output: %w", err)}
		}
	}()
	switch {
	case o.InPlace || o.Diff:
		out.rewrites = newRewriter()
	case o.Report != "-":
		if out.objects, err = safewrite.NewSpool(); err != nil {
			return nil, err
		}
		if o.Output == "json" {
			out.jsonList = &jsonObjectWriter{w: out.objects}
			out.jsonList.Key("apiVersion")
			out.jsonList.Value("v1")
			out.jsonList.Key("items")
			out.jsonItems = out.jsonList.Array()
		}
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
	case p.jsonItems != nil:
		for _, obj := range d.Objects() {
			v, err := obj.Reparse()
			if err != nil {
				return err
			}
			p.jsonItems.Add(v)
		}
	case p.objects != nil:
		b, err := d.Encode()
		if err != nil {
			return err
		}
		// A List is written once, with the edits of all its items.
		if note, err := d.Reformatted(); err != nil {
			return err
		} else if note != "" {
			p.notes = append(p.notes, fmt.Sprintf("Warning: %s: %s (%s)\n", prune.Ref(d.Object), note, d.Source))
		}
		if p.yamlDocs > 0 {
			// A document at the end of a file may lack the final newline;
			// it needs one when another document follows.
			if !p.lastLF {
				p.write("\n")
			}
			p.write("---\n")
		}
		p.yamlDocs++
		if _, err := p.objects.Write(b); err != nil {
			return spoolError(err)
		}
		p.lastLF = len(b) == 0 || b[len(b)-1] == '\n'
	}
	return nil
}

func (p *pruneOutput) write(s string) {
	_, _ = io.WriteString(p.objects, s) // an error of the spool shows at its next write
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
		return len(files) > 0, p.o.writeRewrites(files)
	}
	if p.objects == nil {
		return false, nil
	}
	for _, n := range p.notes {
		fmt.Fprint(p.o.ErrOut, n)
	}
	if p.jsonList != nil {
		if err := p.jsonItems.Close(); err != nil {
			return false, spoolError(err)
		}
		p.jsonList.Key("kind")
		p.jsonList.Value("List")
		if err := p.jsonList.Close(); err != nil {
			return false, spoolError(err)
		}
	}
	if err := p.objects.Rewind(); err != nil {
		return false, spoolError(err)
	}
	_, err = io.Copy(p.o.Out, p.objects)
	return false, err
}

// writeReport ends the report and writes it where --report says.
func (p *pruneOutput) writeReport(warnings []inputWarning) error {
	if err := p.reportItems.Close(); err != nil {
		return spoolError(err)
	}
	if warnings == nil {
		warnings = []inputWarning{}
	}
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
		err = safewrite.Write(p.o.Report, func(w io.Writer) error {
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
}
