package finding

// ReasonReformatted is the Reason of Reformatted.
const ReasonReformatted = "Reformatted"

// FromLowering is a warning of lowering a CRD's mutability markers
// (lower.Warning): what a rule cannot say as the markers' emulation does.
// path is the marked schema node's, in the CRD, in the server's format;
// line its line (0 when unknown). Of no check: the CRD is lowered, and a
// note on how it is a warning whatever fails a run, as it always was.
// (It takes plain values: pkg/engine/lower, which makes it, imports this
// package.)
func FromLowering(reason, path, message string, line int) Finding {
	return Finding{Reason: reason, Path: path, Severity: Warning, Message: message, Line: line}
}

// Reformatted is the note of a document written again without some of its
// comments or layout, because its edits could not keep them (note says
// which). Of no check, as OfResult's.
func Reformatted(note string, line int) Finding {
	return Finding{Reason: ReasonReformatted, Severity: Warning, Message: note, Line: line}
}
