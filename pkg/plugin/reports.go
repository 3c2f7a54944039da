package plugin

import (
	"fmt"
	"io"

	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin/report"
)

// homepage is the project's, for the reports' links to the docs.
const homepage = "https://github.com/kubectl-crd/kubectl-crd"

// reportFormats are the -o formats for CI (docs/reports.md), after a
// command's own.
func reportFormats(own ...string) []string { return append(own, report.Formats...) }

// reportOutput is a command's report in a CI format: rendered into a
// spool as objects are checked, written to stdout by Finish, once the run
// is over.
type reportOutput struct {
	spool *safewrite.Spool
	w     report.Writer
}

// newReportOutput is the report of command in format; the caller closes it.
func newReportOutput(format, command string) (*reportOutput, error) {
	spool, err := safewrite.NewSpool()
	if err != nil {
		return nil, &ExitError{Code: ExitInternal, Err: fmt.Errorf("a spool for the report: %w", err)}
	}
	tool := report.Tool{Name: "kubectl-crd", Version: version, InformationURI: homepage, Command: command}
	w, err := report.New(format, tool, spool)
	if err != nil {
		spool.Close()
		return nil, err
	}
	return &reportOutput{spool: spool, w: w}, nil
}

// Add renders an object.
func (r *reportOutput) Add(obj report.Object) error {
	if err := r.w.Add(obj); err != nil {
		return spoolError(err)
	}
	return nil
}

// Finish writes the report to out.
func (r *reportOutput) Finish(out io.Writer) error { return r.w.Finish(out) }

// Close removes the spool.
func (r *reportOutput) Close() { r.spool.Close() }

// reportObject is an object of the run, where it is and its findings;
// missing: no CRD defines its kind, it is not checked.
func reportObject(ref document.ObjectRef, src document.Source, missing bool, items []report.Item) report.Object {
	obj := report.Object{Ref: ref, Location: report.Location{File: src.File, Line: src.Line}, Findings: items}
	if missing {
		obj.Status = report.NotChecked
	}
	return obj
}

// verdictObject is prune's verdict on an object, its findings as the
// engine judged them.
func verdictObject(v *catalog.Verdict) report.Object {
	res := v.Result
	return reportObject(res.Object, res.Source, res.Status == prune.MissingCRD, v.Findings)
}

// warningObjects are the warnings about the inputs: the findings of a CRD
// (CRDWarning, NonStructural, Update) as the gate judged them, the rest
// notes of no check.
func warningObjects(warnings []inputWarning) []report.Object {
	out := make([]report.Object, len(warnings))
	for i, w := range warnings {
		f := finding.Finding{Check: w.Check, Severity: w.severity, Message: w.Message, Path: w.Path}
		if f.Severity == "" {
			f.Severity = finding.Warning
		}
		out[i] = report.Object{Ref: w.Object, Location: report.Location{File: w.Source.File, Line: w.Source.Line},
			Status: report.InputNote, Findings: []report.Item{{Finding: f, Fails: w.Fails}}}
	}
	return out
}
