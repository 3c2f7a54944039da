package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/internal/source"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// objectStream reads the inputs of a command that streams in two passes, so
// that memory is bounded by the largest document, not by the input. Scan,
// the first pass, reads everything once and keeps only what the checks need
// before the first object: the CRDs, the warnings, a count, and what its
// caller's visit keeps of each object (their kinds). Documents, the second,
// reads the documents of -f again, one at a time, to check and print them.
//
// The old objects of --old go to the catalog as Scan reads them: every new
// object is matched against them, so the catalog holds them all, by
// necessity (reading them again per object would be quadratic).
//
// Small inputs are kept from the first pass, not read again: one parse per
// document. A large one is read again from its files, and what cannot be
// read twice (standard input, a FIFO, a process substitution) from a spool
// the first pass wrote on disk.
type objectStream struct {
	// Warnings are those of the documents as read, then the CRDs defined twice.
	Warnings []inputWarning
	// Objects counts the objects of -f (the items of Lists one by one).
	Objects int
	// OldErrors are those of cat.AddOld, for the old objects the server
	// cannot have stored, in the order read.
	OldErrors []error

	inputs   []rereadable
	kept     []*document.Document // the documents of -f as read, while keeping
	keptSize int
	keeping  bool

	loader *catalog.Loader
	// cache holds the indexes of the files of --crd-file.
	cache crdindex.Cache
	// remote are the remote sources of --crd-file and --old, and the
	// charts of -f (check-update's), fetched and rendered.
	remote *source.Set
}

// keepBytes is how much document text the first pass keeps for the second
// rather than read it again: parsed, with its node tree, a document takes
// some 30 times its text on the heap.
var keepBytes = 2 << 20

// rereadable is an input of -f as the second pass reads it: a regular file
// again by its name, anything else from the spool the first pass filled.
type rereadable struct {
	name  string
	path  string // the file that holds it: a rendered chart's in the source.Set
	spool *safewrite.Spool
}

// scanObjects is the first pass of a streaming command: Scan, then the
// warnings about the inputs, kubectl-style, and about no objects at all.
// The caller closes the stream.
func (f *inputFlags) scanObjects(ctx context.Context, stdin io.Reader, errOut io.Writer, cat *catalog.Catalog, gate finding.Gate, visit func(*document.Document) error) (*objectStream, error) {
	in, err := f.Scan(ctx, stdin, errOut, cat, gate, visit)
	if err != nil {
		return nil, err
	}
	in.warn(errOut)
	f.warnNoObjects(errOut, in.Objects)
	return in, nil
}

// Scan reads every input once (see objectStream) into the engine's loader
// (catalog.Loader): the CRDs of --crd-file, then the objects of -f and
// their CRDs, then the old objects of --old; visit sees each object of -f,
// the items of Lists one by one, and may stop the scan with an error.
// What fails nothing but a run should know (a cache not trusted) is
// printed on errOut as it is found. The remote sources are fetched on ctx,
// the command's. The caller closes the stream.
func (f *inputFlags) Scan(ctx context.Context, stdin io.Reader, errOut io.Writer, cat *catalog.Catalog, gate finding.Gate, visit func(*document.Document) error) (*objectStream, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	s := &objectStream{keeping: true, loader: cat.Load(gate)}
	var err error
	if s.cache, err = crdindex.Open(crdindex.DefaultDir(), crdindex.BuildKey()); err != nil && len(f.CRDFiles) > 0 {
		warnOn(errOut)(err.Error())
	}
	remote, err := f.remote.fetch(ctx, warnOn(errOut), f.CRDFiles, f.Old, f.chartInputs())
	if err != nil {
		return nil, err
	}
	s.remote = remote
	if err := f.checkCharts(remote, errOut); err != nil {
		s.Close()
		return nil, err
	}
	if remote.Kept() && f.cluster != nil {
		f.cluster.sourcesKept()
	}
	if err := s.scan(f, stdin, visit); err != nil {
		s.Close()
		return nil, err
	}
	s.Objects, s.OldErrors = s.loader.Objects, s.loader.OldErrors
	// The findings of the CRDs the loader added, and of a schema source's
	// CRD the server would refuse that no object uses, as the gate judges
	// them: defined twice, what the server warns of (CRDWarning), a legacy
	// CRD's structural violations (NonStructural), a misplaced mutability
	// marker (Update). The function reports the same ones (addCRD).
	for _, a := range slices.Concat(s.loader.CRDs, s.loader.Unused) {
		for _, j := range a.Findings {
			s.Warnings = append(s.Warnings, inputWarning{Object: a.Ref, Source: a.Source, Message: j.Message, Check: j.Check, severity: j.Severity, Fails: j.Fails, Path: j.Path})
		}
	}
	return s, nil
}

// checkCharts refuses an argument of -f fetched as a chart that was none
// (a plain OCI artifact: objects are not fetched), and warns of a chart
// that renders no CRD (a value such as crds.enabled not given), which
// checks nothing.
func (f *inputFlags) checkCharts(remote *source.Set, errOut io.Writer) error {
	for _, name := range f.chartInputs() {
		if !remote.IsChart(name) {
			return usageErrorf("-f %s: not a Helm chart (a plain OCI artifact): -f reads Helm charts, files, directories and standard input (-), "+
				"not other remote sources: pull its files (oras pull) and give them", source.Redact(name))
		}
		if names, _ := remote.Names(name); len(names) == 0 {
			printable.Fprintf(errOut, "Warning: -f %s: the chart renders no CustomResourceDefinition (crds/ and templates, with its values, --set and --values)\n", source.Redact(name))
		}
	}
	return nil
}

// Failing reports whether a finding about the inputs fails the run (a
// CRD's, judged by the gate).
func (s *objectStream) Failing() bool {
	for _, w := range s.Warnings {
		if w.Fails {
			return true
		}
	}
	return false
}

// scan hands each input flag's documents to the loader; reading errors
// come first, then the CRDs the server would refuse.
func (s *objectStream) scan(f *inputFlags, stdin io.Reader, visit func(*document.Document) error) error {
	l := s.loader
	for _, src := range f.sources(&inputDocs{}) {
		docs := s.documents(src, f.Recursive, stdin)
		var err error
		switch src.flag {
		case "--crd-file":
			err = s.schemas(src, f.Recursive, stdin)
		case "-f":
			err = l.Inputs(docs, f.replaces, visit)
		case "--old":
			err = l.Previous(docs)
		}
		if err != nil {
			return asInputError(err)
		}
	}
	return asInputError(l.Added())
}

// schemas reads the files of --crd-file into the loader's index: regular
// files through the cache of indexes (crdindex), on every core, so that
// their CRDs are parsed and checked once per content; standard input and
// what is not a regular file (a FIFO, a device) through the reader, as the
// other inputs, in their place in the order.
func (s *objectStream) schemas(src inputSource, recursive bool, stdin io.Reader) error {
	var regular []crdindex.Path // files still to index, in order
	index := func() error {
		for idx, err := range s.cache.ReadPaths(regular) {
			if err != nil {
				return inputError(err)
			}
			for _, w := range idx.Warnings {
				s.Warnings = append(s.Warnings, indexWarning(w))
			}
			s.loader.Index(idx)
		}
		regular = regular[:0]
		return nil
	}
	for _, name := range src.names {
		files, err := s.inputFiles(name, recursive)
		if err != nil {
			return err
		}
		for _, file := range files {
			ok, err := isRegular(s.remote.Path(file))
			if err != nil {
				return inputError(err)
			}
			if ok {
				regular = append(regular, crdindex.Path{File: s.remote.Path(file), Name: file})
				continue
			}
			if err := index(); err != nil {
				return err
			}
			one := inputSource{flag: src.flag, names: []string{file}}
			if err := s.loader.Schemas(s.documents(one, false, stdin)); err != nil {
				return err
			}
		}
	}
	return index()
}

// inputFiles are the files of one path argument (inputFiles), or the
// names of a remote source's files.
func (s *objectStream) inputFiles(name string, recursive bool) ([]string, error) {
	if files, ok := s.remote.Names(name); ok {
		return files, nil
	}
	return inputFiles(name, recursive)
}

// isRegular says whether name is a regular file of at most
// document.MaxDocumentBytes: false for standard input and anything else.
func isRegular(name string) (bool, error) {
	if name == "-" {
		return false, nil
	}
	st, err := os.Stat(name)
	if err != nil {
		return false, err
	}
	return st.Mode().IsRegular() && st.Size() <= document.MaxDocumentBytes, nil
}

// asInputError is err with exit code 2 when it is bad input (a
// *document.InputError the engine returned, not yet given a code); other
// errors are as they are (the cluster's carry theirs).
func asInputError(err error) error {
	var ee *ExitError
	var ie *document.InputError
	if errors.As(err, &ie) && !errors.As(err, &ee) {
		return inputError(err)
	}
	return err
}

// documents are the documents of an input flag's files, - for stdin, in
// order: each file's parsed on every core. Those of -f are kept for the
// second pass, or it will read them again.
func (s *objectStream) documents(src inputSource, recursive bool, stdin io.Reader) catalog.Docs {
	return func(yield func(*document.Document, error) bool) {
		for _, name := range src.names {
			files, err := s.inputFiles(name, recursive)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, file := range files {
				if !s.fileDocuments(file, stdin, src.flag == "-f", yield) {
					return
				}
			}
		}
	}
}

// fileDocuments yields the documents of one file of an input flag (objects:
// of -f); false when the range stopped.
func (s *objectStream) fileDocuments(name string, stdin io.Reader, objects bool, yield func(*document.Document, error) bool) bool {
	in, again, err := s.open(name, stdin, objects)
	if err != nil {
		yield(nil, err)
		return false
	}
	defer in.Close()
	if objects {
		s.inputs = append(s.inputs, again)
	}
	stopped := false
	err = document.NewReader(in, name).Each(ordered.Workers(), func(d *document.Document) error {
		s.Warnings = append(s.Warnings, warningsOf(d)...)
		if objects {
			s.keep(d)
		}
		if !yield(d, nil) {
			stopped = true
			return errStopped
		}
		return nil
	})
	if stopped {
		return false
	}
	if err != nil {
		yield(nil, inputError(err))
		return false
	}
	return true
}

// errStopped stops a reader when the loader stopped ranging.
var errStopped = errors.New("stopped")

// keep keeps a document of -f for the second pass while the input is small.
func (s *objectStream) keep(d *document.Document) {
	if !s.keeping {
		return
	}
	s.keptSize += len(d.Raw())
	s.kept = append(s.kept, d)
	if s.keptSize > keepBytes {
		s.keeping, s.kept = false, nil
	}
}

// open opens a file (- for stdin) for the first pass, and says how the
// second reads it again (again: it will): a regular file by its name;
// anything else, which cannot be read twice, from a spool the first pass
// fills as it reads.
func (s *objectStream) open(name string, stdin io.Reader, again bool) (io.ReadCloser, rereadable, error) {
	r := rereadable{name: name, path: s.remote.Path(name)}
	in := io.NopCloser(stdin)
	if name != "-" {
		f, err := os.Open(r.path)
		if err != nil {
			return nil, r, inputError(err)
		}
		in = f
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			return f, r, nil
		}
	}
	if !again {
		return in, r, nil
	}
	spool, err := safewrite.NewSpool()
	if err != nil {
		in.Close()
		return nil, r, &ExitError{Code: ExitInternal, Err: fmt.Errorf("a spool for %s: %w", name, err)}
	}
	r.spool = spool
	return struct {
		io.Reader
		io.Closer
	}{io.TeeReader(in, spool), in}, r, nil
}

// Resolve ends the loading (catalog.Loader.Resolve), and refuses the
// objects kubectl apply would not map, read again to name them: every
// refusal printed on errOut, the last returned, an input error.
func (s *objectStream) Resolve(ctx context.Context, cat *catalog.Catalog, errOut io.Writer) (*catalog.Resolved, error) {
	run, err := s.loader.Resolve(ctx)
	if err != nil {
		return nil, asInputError(err)
	}
	if !cat.Refuses() {
		return run, nil
	}
	var errs []error
	err = s.Documents(func(d *document.Document) error {
		for _, obj := range d.Objects() {
			if err := cat.Refusal(obj); err != nil {
				errs = append(errs, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nil, inputErrors(errOut, errs)
}

// Documents calls fn with each document of -f as read, in order: the kept
// ones, or each read again.
func (s *objectStream) Documents(fn func(*document.Document) error) error {
	if s.keeping {
		for _, d := range s.kept {
			if err := fn(d); err != nil {
				return err
			}
		}
		return nil
	}
	for _, in := range s.inputs {
		if err := in.each(fn); err != nil {
			return err
		}
	}
	return nil
}

// each reads the documents of one input again.
func (in rereadable) each(fn func(*document.Document) error) error {
	var r io.Reader
	if in.spool != nil {
		if err := in.spool.Rewind(); err != nil {
			return &ExitError{Code: ExitInternal, Err: err}
		}
		r = in.spool
	} else {
		f, err := os.Open(in.path)
		if err != nil {
			return inputError(err)
		}
		defer f.Close()
		r = f
	}
	var fnErr error
	err := document.NewReader(r, in.name).Each(ordered.Workers(), func(d *document.Document) error {
		fnErr = fn(d)
		return fnErr
	})
	if err != nil && err != fnErr {
		// Read once already: the file changed in between.
		return inputError(fmt.Errorf("%w (read again: did the file change during the run?)", err))
	}
	return err
}

// Close removes the spools.
func (s *objectStream) Close() {
	s.remote.Close()
	for _, in := range s.inputs {
		if in.spool != nil {
			in.spool.Close()
		}
	}
	s.inputs = nil
}

// warn prints the warnings about the inputs, kubectl-style.
func (s *objectStream) warn(w io.Writer) { printWarnings(w, s.Warnings) }
