package catalog

import (
	"context"
	"iter"
	"runtime"
	"sort"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Docs are the documents of a source in the order read, or the error that
// stops it (a read error, with file and line).
type Docs = iter.Seq2[*document.Document, error]

// Loader is the first part of every run, the same for both front ends: it
// reads the schema sources, the previous inputs and the inputs as document
// sequences, prepares their CRDs on every core and adds them in the order
// read (a later CRD of a kind replaces an earlier one), sends old objects
// and previous CRDs where they belong, and collects the kinds of the
// objects; Resolve ends it. The front ends keep only where documents come
// from.
//
// The costly part, decoding and the server's validation of each CRD
// (PrepareCRD), runs on other goroutines while the sources are read, one
// per core: a reader parses less than a preparation takes, and a core left
// to it alone idles. The CRDs are added in order as they are ready.
type Loader struct {
	cat *Catalog
	// Kinds are the kinds of the objects of the inputs.
	Kinds Kinds
	// Objects counts the objects of the inputs (a List's items one by one).
	Objects int
	// CRDs are the CRDs added, in order, with their own findings.
	CRDs []AddedCRD
	// Unused are the CRDs of the schema sources that the server would
	// refuse, of kinds no object uses: each with its warning
	// (finding.RefusedUnused) and no CRD, in the order read.
	Unused []AddedCRD
	// OldErrors are the previous inputs the server cannot have stored
	// (AddOld, addPreviousCRD), in the order read: each would match
	// nothing, and its update would pass unchecked.
	OldErrors []error

	// gate judges the findings of the CRDs added.
	gate finding.Gate
	// replacing are the CRDs of the inputs that replace a previous version.
	replacing map[string]bool
	// index are the CRDs of the schema sources, in the order read: Added
	// prepares only those of the kinds the objects use.
	index   []indexed
	added   bool
	err     error
	pending []chan *PreparedCRD // the inputs' CRDs, in the order read
	slots   chan struct{}
}

// AddedCRD is a CRD the loader added, with what AddPrepared found of it:
// defined twice, not structural, misplaced markers, the server's warnings,
// each judged by the run's gate (Load's), as Check judges an object's.
// It names its document, which it does not hold: a run keeps no CRD's
// YAML once it is added.
type AddedCRD struct {
	// Ref is the document's object as written; Source where it is.
	Ref      document.ObjectRef
	Source   document.Source
	CRD      *schema.CRD
	Findings []finding.Judged
}

// Load starts a run on c; gate judges the findings of the CRDs it adds
// (AddedCRD), as CheckOptions.Gate those of each object.
func (c *Catalog) Load(gate finding.Gate) *Loader {
	return &Loader{cat: c, gate: gate, Kinds: Kinds{}, replacing: map[string]bool{}}
}

// Schemas reads CRD sources (--crd-file, crdPaths), an index rather than a
// workload: a CRD there is decoded, validated by the server's CRD
// validation and compiled only when an object of the inputs is of its kind
// (Added), so that one object against a directory of CRDs costs what its
// own CRD costs. A CRD the server would refuse fails the run when an
// object uses it, and is else in Unused, a warning. What else they hold is
// no object of the run.
func (l *Loader) Schemas(docs Docs) error {
	return l.read(docs, func(o *document.Document) error {
		if ref := document.Ref(o.Object); schema.IsCRD(ref.APIVersion, ref.Kind) {
			f := &crdindex.File{Entries: []crdindex.Entry{crdindex.FromDocument(o)}}
			l.index = append(l.index, indexed{f, 0})
		}
		return nil
	})
}

// Index adds the CRDs of a schema file read as an index (crdindex), as
// Schemas adds those of documents: read only when used.
func (l *Loader) Index(f *crdindex.File) {
	for i := range f.Entries {
		l.index = append(l.index, indexed{f, i})
	}
}

// Previous reads the objects as they were (--old, previous:): a CRD among
// them is the version a CRD of the inputs replaces (addPreviousCRD), any
// other object an old version (AddOld). What the server cannot have stored
// goes to OldErrors, so that a front end reports them all.
func (l *Loader) Previous(docs Docs) error {
	return l.read(docs, func(o *document.Document) error {
		ok, err := l.cat.addPreviousCRD(o)
		if !ok {
			err = l.cat.AddOld(o)
		}
		if err != nil {
			l.OldErrors = append(l.OldErrors, err)
		}
		return nil
	})
}

// Inputs reads the inputs, the objects about to be applied: their CRDs are
// added after those of Schemas (they win), and with replaces each one
// replaces its previous version (prepareReplacement; Resolve compares
// them). visit, when not nil, sees each object, CRDs included, and may stop
// the run with an error.
func (l *Loader) Inputs(docs Docs, replaces bool, visit func(*document.Document) error) error {
	return l.read(docs, func(o *document.Document) error {
		l.Objects++
		l.Kinds.Add(o.Object)
		if ref := document.Ref(o.Object); replaces && schema.IsCRD(ref.APIVersion, ref.Kind) && ref.Name != "" {
			l.replacing[ref.Name] = true
		}
		l.prepare(o, replaces)
		if visit != nil {
			return visit(o)
		}
		return nil
	})
}

// read calls each with every object of docs (a List's items one by one).
func (l *Loader) read(docs Docs, each func(*document.Document) error) error {
	for d, err := range docs {
		if err != nil {
			return err
		}
		for _, o := range d.Objects() {
			if err := each(o); err != nil {
				return err
			}
		}
		if l.err != nil {
			return l.err
		}
	}
	return nil
}

// prepare prepares d on another goroutine when it is a CRD, and adds the
// CRDs ready at the head of the queue.
func (l *Loader) prepare(d *document.Document, replaces bool) {
	if l.err != nil {
		return
	}
	if ref := document.Ref(d.Object); !schema.IsCRD(ref.APIVersion, ref.Kind) {
		return
	}
	if l.slots == nil {
		// More preparations at once than cores would only raise the peak memory.
		l.slots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	}
	ready := make(chan *PreparedCRD, 1)
	l.pending = append(l.pending, ready)
	l.slots <- struct{}{}
	go func() {
		defer func() { <-l.slots }()
		if replaces {
			ready <- l.cat.prepareReplacement(d)
		} else {
			ready <- l.cat.PrepareCRD(d)
		}
	}()
}

// add adds a prepared CRD (AddPrepared), noting it in CRDs; false once
// one is refused.
func (l *Loader) add(p *PreparedCRD) bool {
	crd, findings, err := l.cat.AddPrepared(p)
	if err != nil {
		l.err = err
		return false
	}
	if crd != nil {
		d := p.doc
		l.CRDs = append(l.CRDs, AddedCRD{Ref: document.Ref(d.Object), Source: d.Source, CRD: crd, Findings: l.gate.Judge(findings)})
	}
	return true
}

// Added adds the CRDs, once every source is read: those of the schema
// sources whose kinds the objects use, prepared on every core, then those
// of the inputs, each in the order read (a later one of a kind replaces an
// earlier one). The error is the first CRD, in that order, that the server
// would refuse, or a schema source's CRD that can no longer be read (an
// *document.InputError); no CRD is added after it.
func (l *Loader) Added() error {
	if l.added {
		return l.err
	}
	l.added = true
	used := map[runtimeschema.GroupKind]bool{}
	for gvk := range l.Kinds {
		used[gvk.GroupKind()] = true
	}
	needed := func(yield func(indexed) bool) {
		for _, x := range l.index {
			if gk := x.entry().GroupKind; (gk.Empty() || used[gk]) && !yield(x) {
				return
			}
		}
	}
	prepare := func(x indexed) *PreparedCRD {
		e := x.entry()
		warnings, accepted := e.Accepted()
		accepted = accepted && l.cat.opts.Server != nil
		if accepted {
			if p := l.cat.prepareEncoded(e, warnings); p != nil {
				return p // neither read nor decoded again
			}
		}
		d, err := e.Document()
		if err != nil {
			return &PreparedCRD{doc: &document.Document{Source: e.Source}, err: err}
		}
		if accepted {
			return l.cat.prepareCRD(d, &warnings) // not validated again
		}
		return l.cat.PrepareCRD(d)
	}
	for x, p := range ordered.Seq(ordered.Workers(), needed, prepare) {
		if p.doc.Object != nil && l.cat.opts.Server != nil {
			x.f.SetVerdict(x.i, p.refusal(), p.warnings()) // the verdict the cache keeps
			if p.encodable() {
				x.f.SetEncoded(x.i, p.crd.Encoded) // and the CRD decoded
			}
		}
		if !l.add(p) {
			break
		}
	}
	if l.err == nil {
		l.refusedUnused(used)
	}
	for _, x := range l.index {
		x.f.Keep() // once per file: Keep keeps it once
	}
	l.index = nil
	for _, ready := range l.pending {
		p := <-ready // after an error, what is still prepared is dropped
		if l.err == nil {
			l.add(p)
		}
	}
	l.pending = nil
	return l.err
}

// indexed is entry i of an index file, Schemas' or Index's.
type indexed struct {
	f *crdindex.File
	i int
}

func (x indexed) entry() crdindex.Entry { return x.f.Entries[x.i] }

// refusedUnused notes in Unused the CRDs of the index, of no kind in
// used, that the server would refuse: as the cache kept the verdict, or
// decided now on every core (and recorded for the cache to keep).
func (l *Loader) refusedUnused(used map[runtimeschema.GroupKind]bool) {
	v := l.cat.opts.Server
	if v == nil {
		return // a catalog without the server's validation refuses no CRD
	}
	unused := func(yield func(indexed) bool) {
		for _, x := range l.index {
			if gk := x.entry().GroupKind; !gk.Empty() && !used[gk] && !yield(x) {
				return
			}
		}
	}
	type verdict struct {
		refusal  string
		warnings []string
		err      error
		d        *document.Document
	}
	check := func(x indexed) verdict {
		e := x.entry()
		refusal, warnings, err := e.Verdict(v)
		if err != nil || refusal == "" {
			return verdict{refusal: refusal, warnings: warnings, err: err}
		}
		d, err := e.Document()
		return verdict{refusal: refusal, err: err, d: d}
	}
	for x, got := range ordered.Seq(ordered.Workers(), unused, check) {
		if got.err != nil { // the CRD could not be read again (the cache and the file gone): no verdict
			src := x.entry().Source
			l.err = &document.InputError{Source: src, Msg: got.err.Error(), Err: got.err}
			return
		}
		x.f.SetVerdict(x.i, got.refusal, got.warnings)
		if got.refusal != "" {
			l.addUnused(x.entry().Source, got.d, got.refusal)
		}
	}
}

// addUnused notes a CRD no object uses that the server would refuse.
func (l *Loader) addUnused(src document.Source, d *document.Document, refusal string) {
	f := finding.RefusedUnused(refusal)
	f.Line = src.Line
	l.Unused = append(l.Unused, AddedCRD{Ref: document.Ref(d.Object), Source: src, Findings: l.gate.Judge([]finding.Finding{f})})
}

// Resolved is what Resolve found beyond the catalog's own state.
type Resolved struct {
	// Upgrades are the CRDs of the inputs that replace a previous version
	// (Catalog.compareUpgrades), by name; Unreplaced are those of the inputs
	// (with replaces) that have none: new CRDs, no upgrade to check.
	Upgrades   []*Upgrade
	Unreplaced []string
}

// Resolve ends the loading, once every source is read: every CRD added
// (Added), the kinds of the objects resolved (Catalog.Resolve: Refusal
// then names the objects of refused kinds), and the CRDs of the inputs
// that replace another compared with it (Catalog.compareUpgrades). An error is an
// *document.InputError, or the cluster's.
func (l *Loader) Resolve(ctx context.Context) (*Resolved, error) {
	if err := l.Added(); err != nil {
		return nil, err
	}
	if err := l.cat.Resolve(ctx, l.Kinds); err != nil {
		return nil, err
	}
	out := &Resolved{}
	// A refused kind fails the run before the cluster is asked for more.
	if len(l.replacing) == 0 || l.cat.Refuses() {
		return out, nil
	}
	var err error
	if out.Upgrades, err = l.cat.compareUpgrades(ctx, l.replacing); err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, up := range out.Upgrades {
		found[up.New.CRD.Name()] = true
	}
	for name := range l.replacing {
		if !found[name] {
			out.Unreplaced = append(out.Unreplaced, name)
		}
	}
	sort.Strings(out.Unreplaced)
	return out, nil
}

// Replacing reports whether the inputs hold CRDs that replace a previous
// version (Inputs with replaces).
func (l *Loader) Replacing() bool { return len(l.replacing) > 0 }
