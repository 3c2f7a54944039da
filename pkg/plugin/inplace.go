package plugin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/linediff"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// rewrite is an input file with what the server would store.
type rewrite struct {
	name     string
	old, new []byte
}

// rewrites are the input files of docs (the documents of -f as read, in
// order) that change, each with its documents replaced by their edited
// text; what lies between documents (separators, comments) is kept. A file
// with a document that could not be edited in place is refused, so that no
// comment is lost: then no file is returned, and every refused one is named.
func rewrites(docs []*document.Document, results []*prune.Result) ([]rewrite, []error) {
	// Refused: a document written again without its comments (a List's
	// note is the List's own).
	refused := map[string]string{}
	for _, r := range results {
		if r.Reformatted != "" && refused[r.Source.File] == "" {
			refused[r.Source.File] = fmt.Sprintf("%s: %s: %s", r.Source, r.Object, r.Reformatted)
		}
	}
	var errs []error
	var out []rewrite
	var seen []os.FileInfo
	for _, group := range byFile(docs) {
		name := group[0].Source.File
		// A file named twice (-f a.yaml -f .) was read twice, edited the same way twice.
		info, err := os.Stat(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sameAsAny(info, seen) {
			continue
		}
		seen = append(seen, info)
		for _, d := range group {
			note, err := d.Reformatted()
			if err != nil {
				errs = append(errs, err)
			} else if note != "" && refused[name] == "" {
				refused[name] = fmt.Sprintf("%s: %s: %s", d.Source, prune.Ref(d.Object), note)
			}
		}
		if why := refused[name]; why != "" {
			errs = append(errs, fmt.Errorf("%s: not rewritten: it would lose its comments (%s)", name, why))
			continue
		}
		old, err := os.ReadFile(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		new, err := splice(old, group)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !bytes.Equal(old, new) {
			out = append(out, rewrite{name: name, old: old, new: new})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// byFile groups docs by the file they were read from, in input order.
func byFile(docs []*document.Document) [][]*document.Document {
	var groups [][]*document.Document
	for i, d := range docs {
		if i == 0 || d.Source.File != docs[i-1].Source.File {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], d)
	}
	return groups
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
func (o *PruneOptions) planRewrites(docs []*document.Document, results []*prune.Result) ([]rewrite, error) {
	files, errs := rewrites(docs, results)
	if len(errs) > 0 {
		for _, err := range errs[:len(errs)-1] {
			fmt.Fprintf(o.ErrOut, "error: %v\n", err)
		}
		return nil, usageErrorf("%w; %s changed no file", errs[len(errs)-1], o.inPlaceFlag())
	}
	return files, nil
}

// writeRewrites rewrites the files, or with --diff prints what would change.
func (o *PruneOptions) writeRewrites(files []rewrite) error {
	for _, f := range files {
		if o.Diff {
			label := strings.TrimPrefix(filepath.ToSlash(f.name), "/")
			if _, err := o.Out.Write(linediff.Unified("a/"+label, "b/"+label, f.old, f.new)); err != nil {
				return &ExitError{Code: ExitInternal, Err: fmt.Errorf("--diff: %w", err)}
			}
			continue
		}
		if err := safewrite.WriteFile(f.name, f.new); err != nil {
			return &ExitError{Code: ExitInternal, Err: fmt.Errorf("--in-place: %w", err)}
		}
	}
	return nil
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
		case o.Output != "yaml":
			return usageErrorf("%s writes YAML files, not -o %s", flag, o.Output)
		case o.Report == "-":
			return usageErrorf("%s and --report -: the report would go where nothing is printed; give --report FILE", flag)
		}
		for _, name := range o.inputs.Filenames {
			if name == "-" {
				return usageErrorf("%s rewrites files: standard input (-f -) has none", flag)
			}
		}
	}
	if o.Report != "" && o.Report != "-" {
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
