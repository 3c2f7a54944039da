package plugin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/migration"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin/report"
)

// upgradeCheck is check-update's CRD upgrade: the CRDs of -f replace the
// ones before them (of --old, else the cluster's), and every existing
// object (of --objects, else the cluster's) is run through the new CRD's
// read, create and update path (catalog.Catalog.ScanImpacts).
type upgradeCheck struct {
	// upgrades count the objects checked and hurt (catalog.Upgrade).
	upgrades []*catalog.Upgrade
	// objects hold, by CRD name, what the report says of each object, in
	// the order checked, on disk: a scan of any size takes the memory of
	// one object. With json, every object changed or hurt, each an
	// element of "objects"; else the lines of the objects hurt.
	json    bool
	objects map[string]*objectRecords
	// skipped counts the objects of --objects no upgrade concerns.
	skipped int
	// findings, for -o sarif, junit or github, takes every existing object
	// checked, as scanned, with gate's verdict on its findings.
	findings *reportOutput
	gate     finding.Gate
	// plans are --migration-plan's, nil without it.
	plans migrationPlans
}

func newUpgradeCheck(json bool, findings *reportOutput, gate finding.Gate) *upgradeCheck {
	return &upgradeCheck{json: json, objects: map[string]*objectRecords{}, findings: findings, gate: gate}
}

// Close removes the spools.
func (u *upgradeCheck) Close() {
	for _, r := range u.objects {
		r.spool.Close()
	}
}

// objectRecords are records in a spool, each a length and its bytes.
type objectRecords struct {
	spool *safewrite.Spool
	n     int
}

func (r *objectRecords) add(b []byte) error {
	rec := binary.AppendUvarint(nil, uint64(len(b)))
	if _, err := r.spool.Write(append(rec, b...)); err != nil {
		return spoolError(err)
	}
	r.n++
	return nil
}

// each calls fn with each record, in the order added; the bytes are fn's
// only until it returns.
func (r *objectRecords) each(fn func([]byte) error) error {
	if err := r.spool.Rewind(); err != nil {
		return spoolError(err)
	}
	br := bufio.NewReader(r.spool)
	var buf []byte
	for i := 0; i < r.n; i++ {
		n, err := binary.ReadUvarint(br)
		if err == nil {
			buf = slices.Grow(buf[:0], int(n))[:n]
			_, err = io.ReadFull(br, buf)
		}
		if err != nil {
			return spoolError(err)
		}
		if err := fn(buf); err != nil {
			return err
		}
	}
	return nil
}

// upgradeObjectIndent is the indent of the members of an element of
// upgrades[].objects in -o json, four levels deep.
const upgradeObjectIndent = "        "

// scan runs the existing objects through their upgrades on every core and
// records them in their order (catalog.ScanImpacts). what turns the error
// of an object into the run's; step, when not nil, follows each object.
func (u *upgradeCheck) scan(cat *catalog.Catalog, objects catalog.Docs, what func(*document.Document, error) error, step func()) error {
	return cat.ScanImpacts(objects, func(d *document.Document, imp *crdupgrade.ObjectImpact, findings []finding.Finding, err error) error {
		if err == nil {
			err = u.record(imp, findings)
		}
		if err != nil {
			return what(d, err)
		}
		if step != nil {
			step()
		}
		return nil
	})
}

// record keeps what the report says of one existing object (imp nil: not
// of an upgraded kind), which the catalog counted.
func (u *upgradeCheck) record(imp *crdupgrade.ObjectImpact, findings []finding.Finding) error {
	if imp == nil {
		u.skipped++
		return nil
	}
	if p := u.plans[imp.CRD]; p != nil {
		p.Add(imp)
	}
	if u.findings != nil {
		return u.findings.Add(u.existingObject(imp, findings))
	}
	if len(findings) == 0 {
		return nil
	}
	hurt := false
	for _, f := range findings {
		hurt = hurt || f.Severity == finding.Error
	}
	if !hurt && !u.json {
		return nil
	}
	records := u.objects[imp.CRD]
	if records == nil {
		spool, err := safewrite.NewSpool()
		if err != nil {
			return &ExitError{Code: ExitInternal, Err: fmt.Errorf("a spool for the report: %w", err)}
		}
		records = &objectRecords{spool: spool}
		u.objects[imp.CRD] = records
	}
	if u.json {
		b, err := indentedJSON(imp, upgradeObjectIndent)
		if err != nil {
			return err
		}
		return records.add(b)
	}
	var lines bytes.Buffer
	for _, f := range findings {
		if f.Severity != finding.Error {
			continue
		}
		where := ""
		if src := imp.Source; src.File != "" {
			if f.Line > 0 {
				src.Line = f.Line
			}
			where = " (" + src.String() + ")"
		}
		printable.Fprintf(&lines, "    %s: %s%s\n", imp.Object, f.Message, where)
	}
	return records.add(lines.Bytes())
}

// objectsFromFiles checks the objects of --objects, read one document at a time.
func (u *upgradeCheck) objectsFromFiles(cat *catalog.Catalog, names []string, recursive bool, stdin io.Reader) error {
	for _, name := range names {
		files, err := inputFiles(name, recursive)
		if err != nil {
			return err
		}
		for _, file := range files {
			if err := u.objectsFromFile(cat, file, stdin); err != nil {
				return err
			}
		}
	}
	return nil
}

func (u *upgradeCheck) objectsFromFile(cat *catalog.Catalog, name string, stdin io.Reader) error {
	in := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return inputError(err)
		}
		defer f.Close()
		in = f
	}
	objects := func(yield func(*document.Document, error) bool) {
		stopped := false
		err := document.NewReader(in, name).Each(ordered.Workers(), func(d *document.Document) error {
			for _, o := range d.Objects() {
				if !yield(o, nil) {
					stopped = true
					return errStopped
				}
			}
			return nil
		})
		if err != nil && !stopped {
			yield(nil, inputError(err))
		}
	}
	return u.scan(cat, objects, func(_ *document.Document, err error) error { return inputError(err) }, nil)
}

// objectsFromCluster lists the objects of each upgraded CRD in every
// version the old CRD serves (a client reads them in any), chunk at a
// time, with progress on errOut when it is a terminal. A page is checked
// while the next is listed: the server's time and ours overlap.
func (u *upgradeCheck) objectsFromCluster(ctx context.Context, c *cluster, cat *catalog.Catalog, chunk int64, errOut io.Writer) error {
	for _, up := range u.upgrades {
		old := up.Old.CRD
		for _, version := range old.Versions() {
			if v, _ := old.Version(version); !v.Served {
				continue
			}
			gvr := runtimeschema.GroupVersionResource{Group: old.Object.Spec.Group, Version: version, Resource: old.Object.Spec.Names.Plural}
			if err := u.listAndCheck(ctx, c, cat, gvr, chunk, fmt.Sprintf("%s objects (%s)", old.Object.Spec.Names.Kind, version), errOut); err != nil {
				return err
			}
		}
	}
	return nil
}

func (u *upgradeCheck) listAndCheck(ctx context.Context, c *cluster, cat *catalog.Catalog, gvr runtimeschema.GroupVersionResource, chunk int64, what string, errOut io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan []unstructured.Unstructured, 1)
	var p *progress
	var checkErr error
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		done := 0
		objects := func(yield func(*document.Document, error) bool) {
			for items := range pages {
				for i := range items {
					if !yield(&document.Document{Object: items[i].Object}, nil) {
						return
					}
				}
			}
		}
		checkErr = u.scan(cat, objects, func(d *document.Document, err error) error {
			cancel() // the lister stops: the scan failed
			var ie *document.InputError
			if errors.As(err, &ie) {
				// An object the cluster serves that its own CRD cannot store: the server's business.
				err = &ExitError{Code: ExitInternal, Err: fmt.Errorf("%s: %s", document.Ref(d.Object), ie.Msg)}
			}
			return err
		}, func() {
			done++
			p.step(done)
		})
		for range pages {
			// After an error: the lister stops at the cancel; what it sent is dropped.
		}
	}()
	listErr := c.ListObjects(ctx, gvr, chunk, func(items []unstructured.Unstructured, remaining int64) error {
		if p == nil {
			total := len(items)
			if remaining > 0 {
				total += int(remaining)
			}
			p = newProgress(errOut, total, what)
		}
		select {
		case pages <- items:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(pages)
	<-checked
	if p != nil {
		p.clear()
	}
	if checkErr != nil {
		return checkErr
	}
	return listErr
}

// failed says whether an upgrade fails the run (catalog.Upgrade.Fails:
// a change that fails it, or an existing object hurt; strict: any
// Breaking, DataLoss or Invalid change at all).
func (u *upgradeCheck) failed(strict bool, gate finding.Gate) bool {
	for _, up := range u.upgrades {
		if up.Fails(strict, gate) {
			return true
		}
	}
	return false
}

// upgradeReport is an element of "upgrades" in check-update -o json.
type upgradeReport struct {
	CRD    string          `json:"crd"`
	Source document.Source `json:"source"`
	// OldSource is absent when the old CRD is the cluster's.
	OldSource      *document.Source `json:"oldSource,omitempty"`
	ObjectsChecked int              `json:"objectsChecked"`
	// ObjectsHurt counts the objects that lose data or are refused.
	ObjectsHurt int                      `json:"objectsHurt"`
	Changes     []upgradeChange          `json:"changes"`
	Unexplained []crdupgrade.Unexplained `json:"unexplained,omitempty"`
	// Migration is the plan of the storage-version migration
	// (--migration-plan), when the objects must be rewritten.
	Migration *migration.Plan `json:"migration,omitempty"`
	// "objects", last, are the objects the upgrade changes or hurts, each
	// as the prune report's items (crdupgrade.ObjectImpact): what each
	// reads as, why each is refused. writeJSON writes them from the spool.
	objects *objectRecords
}

// writeJSON writes r, an element of "upgrades" whose members are indented
// by prefix, as encoding/json writes it whole with "objects" its last
// member, the objects read from the spool one at a time.
func (r upgradeReport) writeJSON(w io.Writer, prefix string) error {
	if prefix+"  " != upgradeObjectIndent {
		return fmt.Errorf("upgrades[].objects at indent %q, encoded at %q", prefix+"  ", upgradeObjectIndent)
	}
	outer := prefix[:len(prefix)-2]
	head, err := indentedJSON(r, outer)
	if err != nil {
		return err
	}
	head = bytes.TrimSuffix(head, []byte("\n"+outer+"}"))
	if _, err := fmt.Fprintf(w, "%s,\n%s\"objects\": ", head, prefix); err != nil {
		return err
	}
	arr := &jsonArray{w: w, prefix: prefix}
	if r.objects != nil {
		if err := r.objects.each(func(b []byte) error {
			arr.addEncoded(b)
			return arr.err
		}); err != nil {
			return err
		}
	}
	if err := arr.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\n%s}", outer)
	return err
}

type upgradeChange struct {
	Kind     crdupgrade.Kind     `json:"kind"`
	Severity crdupgrade.Severity `json:"severity"`
	Version  string              `json:"version,omitempty"`
	Path     string              `json:"path"`
	Keyword  string              `json:"keyword,omitempty"`
	Old      interface{}         `json:"old,omitempty"`
	New      interface{}         `json:"new,omitempty"`
	Message  string              `json:"message"`
	// Objects are the objects it hurts; AllObjects says it concerns every
	// object of the CRD (a version, a name, the update refused).
	Objects    []document.ObjectRef `json:"objects"`
	AllObjects bool                 `json:"allObjects,omitempty"`
}

func (u *upgradeCheck) reports() []upgradeReport {
	var out []upgradeReport
	for _, up := range u.upgrades {
		name := up.New.CRD.Name()
		r := upgradeReport{CRD: name, Source: up.Source, ObjectsChecked: up.Checked, ObjectsHurt: up.Hurt, Changes: []upgradeChange{}, Unexplained: up.Unexplained, Migration: u.plans[name], objects: u.objects[name]}
		if up.OldSource.File != "" {
			src := up.OldSource
			r.OldSource = &src
		}
		for i, a := range up.Tally.Affected() {
			ch := a.Change
			objects := a.Objects
			if objects == nil {
				objects = []document.ObjectRef{}
			}
			r.Changes = append(r.Changes, upgradeChange{Kind: ch.Kind, Severity: ch.Severity, Version: ch.Version, Path: ch.Path,
				Keyword: ch.Keyword, Old: ch.Old, New: ch.New, Message: up.Findings[i].Message, Objects: objects, AllObjects: !a.Counted})
		}
		out = append(out, r)
	}
	return out
}

// print writes the text report: per CRD, its changes grouped by
// severity, the worst first, each with the objects it hurts, then per hurt
// object what it loses and why it would be refused.
func (u *upgradeCheck) print(out io.Writer) error {
	for _, up := range u.upgrades {
		name := up.New.CRD.Name()
		old := "the cluster's"
		if up.OldSource.File != "" {
			old = up.OldSource.String()
		}
		printable.Fprintf(out, "CustomResourceDefinition %s (%s, replacing %s): %s; %s checked, %d hurt\n",
			name, up.Source, old, plural(len(up.Changes), "change"), plural(up.Checked, "object"), up.Hurt)
		verdicts := up.Verdicts(false, u.gate)
		for _, sev := range crdupgrade.Severities {
			heading := false
			for _, v := range verdicts {
				if v.Change.Severity != sev {
					continue
				}
				if !heading {
					printable.Fprintf(out, "  %s:\n", sev)
					heading = true
				}
				printable.Fprintf(out, "    %s\n", v.Finding.Message)
			}
		}
		if records := u.objects[name]; records != nil && up.Hurt > 0 {
			printable.Fprintf(out, "  Objects hurt:\n")
			if err := records.each(func(b []byte) error {
				_, err := out.Write(b)
				return err
			}); err != nil {
				return err
			}
		}
		for _, x := range up.Unexplained {
			printable.Fprintf(out, "  Unexplained: %s (%s): no change found accounts for it\n", x.Path, x.What)
		}
		if p := u.plans[name]; p != nil {
			printMigrationPlan(out, p)
		}
	}
	return nil
}

// existingObject is an existing object of an upgrade, for the report of
// -o sarif, junit or github, with the engine's verdict on its findings
// (catalog.JudgeImpact). An object of the cluster is placed at the CRD
// that hurts it.
func (u *upgradeCheck) existingObject(imp *crdupgrade.ObjectImpact, findings []finding.Finding) report.Object {
	items := catalog.JudgeImpact(u.gate, findings)
	src := imp.Source
	if src.File == "" {
		for _, up := range u.upgrades {
			if up.New.CRD.Name() == imp.CRD {
				src = up.Source
			}
		}
	}
	return reportObject(imp.Object, src, false, items)
}

// reportObjects are the upgrades, each a CRD with its changes (the
// engine's verdict on each, catalog.Upgrade.Verdicts; strict: --strict)
// and what no change explains, for the report of -o sarif, junit or github.
func (u *upgradeCheck) reportObjects(strict bool, gate finding.Gate) []report.Object {
	var out []report.Object
	for _, up := range u.upgrades {
		var items []report.Item
		for _, v := range up.Verdicts(strict, gate) {
			items = append(items, report.Item{Finding: v.Finding, Fails: v.Fails})
		}
		for _, x := range up.Unexplained {
			items = append(items, report.Item{Finding: finding.Finding{Severity: finding.Warning, Path: x.Path, Reason: x.What,
				Message: fmt.Sprintf("%s (%s): no change found accounts for it", x.Path, x.What)}})
		}
		ref := document.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: up.New.CRD.Name()}
		out = append(out, reportObject(ref, up.Source, false, items))
	}
	return out
}
