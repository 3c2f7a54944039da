package plugin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/linediff"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin/report"
)

// rewrite is an input file with what the server would store.
type rewrite struct {
	name     string
	old, new []byte
}

// rewriter collects, file by file, the input files of -f that change,
// each with its documents replaced by their edited text; what lies between
// documents (separators, comments) is kept. A file with a document that
// could not be edited in place is refused, so that no comment is lost: then
// no file is written, and every refused one is named. Only the files that
// change are held, until every one is known.
type rewriter struct {
	inPlace bool                 // files will be written, not diffed
	group   []*document.Document // of the file being read
	refused map[string]string    // file -> why
	seen    []os.FileInfo
	files   []rewrite
	errs    []error
}

func newRewriter(inPlace bool) *rewriter {
	return &rewriter{inPlace: inPlace, refused: map[string]string{}}
}

// Add adds the next document of -f as read, with the results of its objects.
func (w *rewriter) Add(d *document.Document, results []*prune.Result) {
	if len(w.group) > 0 && w.group[0].Source.File != d.Source.File {
		w.flush()
	}
	// Refused: a document written again without its comments (a List's
	// note is the List's own).
	for _, r := range results {
		if r.Reformatted != "" && w.refused[r.Source.File] == "" {
			w.refused[r.Source.File] = fmt.Sprintf("%s: %s: %s", r.Source, r.Object, r.Reformatted)
		}
	}
	w.group = append(w.group, d)
}

// Finish returns the files that change, or every error.
func (w *rewriter) Finish() ([]rewrite, []error) {
	w.flush()
	if len(w.errs) > 0 {
		return nil, w.errs
	}
	return w.files, nil
}

// flush ends the file of the group.
func (w *rewriter) flush() {
	group := w.group
	w.group = nil
	if len(group) == 0 {
		return
	}
	name := group[0].Source.File
	// A file named twice (-f a.yaml -f .) was read twice, edited the same way twice.
	info, err := os.Stat(name)
	if err != nil {
		w.errs = append(w.errs, err)
		return
	}
	if sameAsAny(info, w.seen) {
		return
	}
	w.seen = append(w.seen, info)
	for _, d := range group {
		note, err := d.Reformatted()
		if err != nil {
			w.errs = append(w.errs, err)
		} else if note != "" && w.refused[name] == "" {
			w.refused[name] = fmt.Sprintf("%s: %s: %s", d.Source, document.Ref(d.Object), note)
		}
	}
	if why := w.refused[name]; why != "" {
		w.errs = append(w.errs, fmt.Errorf("%s: not rewritten: it would lose its comments (%s)", name, why))
		return
	}
	old, err := os.ReadFile(name)
	if err != nil {
		w.errs = append(w.errs, err)
		return
	}
	new, err := splice(old, group)
	if err != nil {
		w.errs = append(w.errs, err)
		return
	}
	if bytes.Equal(old, new) {
		return
	}
	if w.inPlace {
		if why := unwritable(info); why != "" {
			w.errs = append(w.errs, fmt.Errorf("%s: not rewritten: %s", name, why))
			return
		}
	}
	w.files = append(w.files, rewrite{name: name, old: old, new: new})
}

// unwritable says why --in-place leaves a file that changes alone. A file
// is rewritten by writing a new one and renaming it over the old (a crash
// never leaves half of it), which GNU sed -i does too: that would rewrite
// a read-only file, whose mode says "do not change me" (kubectl, kustomize
// and the shell's > refuse it, writing in place), and break its hard
// links, the other names keeping the old text (which writing in place
// would keep, but not atomically). Both are refused, whoever runs it.
func unwritable(info os.FileInfo) string {
	if info.Mode().Perm()&0o222 == 0 {
		return fmt.Sprintf("it is read-only (%v); make it writable to rewrite it", info.Mode().Perm())
	}
	if n := safewrite.HardLinks(info); n > 1 {
		return fmt.Sprintf("it has %d hard links: a rewrite would break them, the other names keeping the old text", n)
	}
	return ""
}

func sameAsAny(info os.FileInfo, infos []os.FileInfo) bool {
	for _, i := range infos {
		if os.SameFile(info, i) {
			return true
		}
	}
	return false
}

// splice replaces the text of each of docs, in order, in the file text old
// by the document's edited text.
func splice(old []byte, docs []*document.Document) ([]byte, error) {
	edited := false
	for _, d := range docs {
		edited = edited || d.Edited()
	}
	if !edited {
		return old, nil // as it is, whatever its encoding
	}
	var out bytes.Buffer
	rest := old
	for _, d := range docs {
		raw := d.Raw()
		i := bytes.Index(rest, raw)
		if i < 0 {
			// The reader ends a last line without a line break with one.
			raw = bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
			i = bytes.Index(rest, raw)
		}
		if i < 0 {
			if why := document.NotUTF8(old); why != "" {
				// Its text as read is not its bytes: a UTF-16 or Latin-1 file.
				return nil, fmt.Errorf("%s: not rewritten: it is not UTF-8: %s; --in-place rewrites UTF-8 files only (iconv -t UTF-8 converts it)", d.Source.File, why)
			}
			return nil, fmt.Errorf("%s: not rewritten: the document is no longer in the file as it was read", d.Source)
		}
		text, err := d.Encode()
		if err != nil {
			return nil, err
		}
		if !d.Edited() {
			text = raw
		}
		out.Write(rest[:i])
		out.Write(text)
		rest = rest[i+len(raw):]
	}
	out.Write(rest)
	return out.Bytes(), nil
}

// planRewrites are the files --in-place would rewrite: none is written
// (nor the report) when one of them is refused.
func (o *PruneOptions) planRewrites(w *rewriter) ([]rewrite, error) {
	files, errs := w.Finish()
	if len(errs) > 0 {
		for _, err := range errs[:len(errs)-1] {
			fmt.Fprintf(o.ErrOut, "error: %s\n", printable.Error(err))
		}
		return nil, usageErrorf("%w; %s changed no file", errs[len(errs)-1], o.inPlaceFlag())
	}
	return files, nil
}

// writeRewrites rewrites the files, or with --diff prints what would change.
// A write that fails stops it: the error names the files rewritten before.
func (o *PruneOptions) writeRewrites(files []rewrite) error {
	for i, f := range files {
		if o.Diff {
			label := strings.TrimPrefix(filepath.ToSlash(f.name), "/")
			a, b := "a/"+label, "b/"+label
			if printable.Line(label) != label {
				// As git names such a file: C-quoted, which git apply and patch read.
				a, b = strconv.Quote(a), strconv.Quote(b)
			}
			if _, err := o.Out.Write(linediff.Unified(a, b, f.old, f.new)); err != nil {
				return &ExitError{Code: ExitInternal, Err: fmt.Errorf("--diff: %w", err)}
			}
			continue
		}
		if err := safewrite.WriteFile(f.name, f.new); err != nil {
			return &ExitError{Code: ExitInternal, Err: fmt.Errorf("--in-place: %w: %s", err, stoppedAt(files, i))}
		}
	}
	return nil
}

// stoppedAt says which files were rewritten before files[i] failed.
func stoppedAt(files []rewrite, i int) string {
	names := make([]string, len(files))
	for j, f := range files {
		names[j] = f.name
	}
	left := fmt.Sprintf("%s is as it was", names[i])
	if rest := len(names) - i - 1; rest > 0 {
		left = fmt.Sprintf("%s and the %d after it (%s) are as they were", names[i], rest, strings.Join(names[i+1:], ", "))
	}
	if i == 0 {
		return "no file was rewritten: " + left
	}
	return fmt.Sprintf("stopped after rewriting %d of %d files (%s); %s", i, len(names), strings.Join(names[:i], ", "), left)
}

// streams are the command's own streams, which a file name may denote.
func (o *PruneOptions) streams() safewrite.Streams {
	return safewrite.Streams{In: o.In, Out: o.Out, ErrOut: o.ErrOut}
}

func (o *PruneOptions) inPlaceFlag() string {
	if o.Diff {
		return "--diff"
	}
	return "--in-place"
}

// validateWrites checks the flags that write files or diffs: --in-place
// and --diff rewrite the files of -f, and no written file may be an input.
func (o *PruneOptions) validateWrites() error {
	if o.InPlace || o.Diff {
		flag := o.inPlaceFlag()
		switch {
		case o.InPlace && o.Diff:
			return usageErrorf("--in-place and --diff: give one (--diff shows what --in-place would change)")
		case o.Diff && report.IsFormat(o.Output):
			return usageErrorf("--diff prints a diff and -o %s a report, both on stdout: give one", o.Output)
		case o.Output != "yaml" && !report.IsFormat(o.Output):
			return usageErrorf("%s writes YAML files, not -o %s", flag, o.Output)
		case o.Report == "-":
			return usageErrorf("%s and --report -: the report would go where nothing is printed; give --report FILE", flag)
		}
		for _, name := range o.inputs.Filenames {
			if name == "-" {
				return usageErrorf("%s rewrites files: standard input (-f -) has none", flag)
			}
			// Under another name (/dev/stdin, < w.yaml -f w.yaml) it was
			// rewritten, or a pipe written to.
			if o.streams().Descriptor(name) == 0 {
				return usageErrorf("%s rewrites files: -f %s is standard input, which has none", flag, name)
			}
		}
	}
	switch fd := o.streams().Descriptor(o.Report); {
	case o.Report == "-" && report.IsFormat(o.Output):
		return usageErrorf("--report - and -o %s both write stdout: give --report FILE", o.Output)
	case o.Report == "" && o.reportSet:
		return usageErrorf("--report '': give a file name, or - for stdout")
	case o.Report == "" || o.Report == "-":
	case fd == 0:
		return usageErrorf("--report %s is standard input: give a file name, or - for stdout", o.Report)
	case fd < 0:
		return o.reportIsNotInput()
	}
	return nil
}

// reportIsNotInput refuses a --report path that is one of the inputs (or a
// link to one): writing the report would destroy it.
func (o *PruneOptions) reportIsNotInput() error {
	report, err := os.Stat(o.Report) // follows symlinks
	if err != nil {
		return nil // a new file is no input
	}
	for _, in := range []struct {
		flag  string
		names []string
	}{{"-f", o.inputs.Filenames}, {"--crd-file", o.inputs.CRDFiles}} {
		for _, name := range in.names {
			if name == "-" {
				continue
			}
			files, err := document.Files(name, o.inputs.Recursive)
			if err != nil {
				continue // reading reports it
			}
			for _, f := range files {
				if info, err := os.Stat(f); err == nil && os.SameFile(report, info) {
					return usageErrorf("--report %s is the input %s %s: writing the report would replace it", o.Report, in.flag, f)
				}
			}
		}
	}
	return nil
}
