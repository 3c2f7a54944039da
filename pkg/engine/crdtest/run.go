package crdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// Options configure a Runner.
type Options struct {
	// Server and Builtins are the catalog's (pkg/engine/strategy's and
	// internal/builtin's, chosen by the front end).
	Server   catalog.Server
	Builtins catalog.Builtins
	// Costs estimates each rule's cost as the server does (strategy's
	// Validators); nil: no costs.
	Costs Costs
	// Lower runs the cases against the CRDs with their mutability markers
	// lowered to the transition rules the server enforces (lower.CRD),
	// rather than emulated.
	Lower bool
	// Minor is the Kubernetes minor the run was asked for, which answers
	// it (kubeversion.Use, before the run): a case expects what its
	// ExpectFor says of it, and the report names it. Zero: none was
	// asked for; the minor answering now chooses the expectations, and
	// the report names none.
	Minor kubeversion.Minor
	// Run selects the cases run by name, as go test -run does: a case runs
	// when its name matches (unanchored). Nil: every case.
	Run *regexp.Regexp
}

// Costs is the server's estimate of the cost of a CRD's rules.
type Costs interface {
	// RuleCosts maps each x-kubernetes-validations entry of crd, by its
	// path in the CRD document, to its estimated cost; limit is the
	// server's limit on one rule's.
	RuleCosts(crd map[string]interface{}) (costs map[string]uint64, limit uint64, err error)
}

// Observed is what the server does with a case's object.
type Observed struct {
	Result Result  `json:"result"`
	Errors []Error `json:"errors,omitempty"`
	// Pruned are the paths the server drops; Defaulted those it sets from
	// defaults, with their values.
	Pruned    []string               `json:"pruned,omitempty"`
	Defaulted map[string]interface{} `json:"defaulted,omitempty"`
}

// Error is one reason the server refuses the object.
type Error struct {
	Field   string `json:"field"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message"`
	// Text is the error as the server returns it, and kubectl apply
	// prints it (field.Error's Error): field, type, value, message. A
	// marker's refusal is the text of the rule lower-mutability writes
	// for it; an upgrade's, the message, with the server's text in it.
	Text string `json:"text"`

	// value is a marker's refusal's new value, for its text (markerText).
	value interface{}
	// Rule is the x-kubernetes-validations rule or the marker that refuses,
	// when one does.
	Rule string `json:"rule,omitempty"`
}

// CaseResult is the verdict on one case.
type CaseResult struct {
	Case *Case `json:"-"`
	// Expect is what the case expects of the minor that answered
	// (Case.ExpectFor), nil when nothing.
	Expect   *Expect   `json:"expect,omitempty"`
	Observed *Observed `json:"observed"`
	// Pass: the case expects what was observed (a case without an
	// expectation passes: it is to be recorded).
	Pass bool `json:"pass"`
	// Mismatches say what differs, expected against observed.
	Mismatches []string `json:"mismatches,omitempty"`
}

// Runner runs the cases of suites.
type Runner struct {
	opts Options
}

// NewRunner returns a runner.
func NewRunner(opts Options) *Runner { return &Runner{opts: opts} }

// prepared is a suite's CRDs, each read once for all its cases.
type prepared struct {
	crds  []*catalog.PreparedCRD
	docs  []*document.Document
	rules *ruleIndex
}

// SuiteResult is the verdict on every case of a suite.
type SuiteResult struct {
	Suite *Suite
	// Minor is Options.Minor: the minor asked for, zero when none was.
	Minor kubeversion.Minor
	Cases []CaseResult
	// NotSelected counts the cases Options.Run did not select: not run,
	// and not in Cases.
	NotSelected int
	// Rules are the rules and markers of the suite's CRDs, and Refused
	// which of them some case's object was refused by (its index in Rules).
	Rules   []Rule
	Refused map[int]bool
}

// Run runs every case of s. An error is an *document.InputError: a CRD
// the server refuses, an object of a kind no CRD of the suite defines, an
// object or old object the server cannot decode.
func (r *Runner) Run(ctx context.Context, s *Suite) (*SuiteResult, error) {
	p, err := r.prepare(s.CRDs)
	if err != nil {
		return nil, err
	}
	out := &SuiteResult{Suite: s, Minor: r.opts.Minor, Rules: p.rules.rules, Refused: map[int]bool{}}
	minor := r.opts.Minor
	if minor == 0 {
		minor = kubeversion.Current().Minor
	}
	for _, c := range s.Cases {
		if r.opts.Run != nil && !r.opts.Run.MatchString(c.Name) {
			out.NotSelected++
			continue
		}
		obs, refusedBy, err := r.observe(ctx, p, c)
		if err != nil {
			return nil, err
		}
		for _, i := range refusedBy {
			out.Refused[i] = true
		}
		res := CaseResult{Case: c, Expect: c.ExpectFor(minor), Observed: obs, Pass: true}
		if res.Expect != nil {
			res.Mismatches = Compare(res.Expect, obs)
			res.Pass = len(res.Mismatches) == 0
		}
		out.Cases = append(out.Cases, res)
	}
	return out, nil
}

func (r *Runner) newCatalog() *catalog.Catalog {
	return catalog.New(catalog.Options{
		Server: r.opts.Server, Builtins: r.opts.Builtins,
		Namespaces: catalog.Namespaces{Default: "default", Offline: true},
	})
}

// prepare reads the CRDs (lowered with Options.Lower) for the cases.
func (r *Runner) prepare(docs []*document.Document) (*prepared, error) {
	p := &prepared{rules: &ruleIndex{}}
	c := r.newCatalog()
	for _, d := range docs {
		ref := document.Ref(d.Object)
		if ref.Kind != "CustomResourceDefinition" {
			return nil, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("%s: expected a CustomResourceDefinition among the suite's crds", ref)}
		}
		p.rules.add(d, r.opts.Costs)
		if r.opts.Lower {
			lowered, err := r.lower(d)
			if err != nil {
				return nil, err
			}
			p.rules.addLowered(lowered)
			p.rules.addPlacement(lowered)
			d = &document.Document{Object: lowered.Object, Source: d.Source}
		} else if lowered, err := lower.CRD(d.Object, r.opts.Server); err == nil {
			// Only where the server would refuse: a CRD lowering refuses
			// keeps the emulation's fields.
			p.rules.addPlacement(lowered)
		}
		p.docs = append(p.docs, d)
		pc := c.PrepareCRD(d)
		if _, _, err := c.AddPrepared(pc); err != nil {
			return nil, err
		}
		p.crds = append(p.crds, pc)
	}
	return p, nil
}

func (r *Runner) lower(d *document.Document) (*lower.Result, error) {
	res, err := lower.CRD(d.Object, r.opts.Server)
	if err != nil {
		return nil, &document.InputError{Source: d.Source, Msg: "--lower: " + err.Error(), Err: err}
	}
	return res, nil
}

// fresh is a copy of d to check: a check edits its document.
func fresh(d *document.Document) (*document.Document, error) {
	docs, err := document.Read(bytes.NewReader(d.Raw()), d.Source.File)
	if err != nil || len(docs) != 1 {
		return nil, &document.InputError{Source: d.Source, Msg: "expected one object"}
	}
	docs[0].Source = d.Source
	return docs[0], nil
}

// observe checks c's object as the server would, and says which rules
// refused it.
func (r *Runner) observe(ctx context.Context, p *prepared, c *Case) (*Observed, []int, error) {
	d, err := fresh(c.Object)
	if err != nil {
		return nil, nil, err
	}
	cat, err := r.caseCatalog(ctx, p, c, d)
	if err != nil {
		return nil, nil, err
	}
	original := document.Ref(d.Object)
	v, err := cat.Check(ctx, d, catalog.CheckOptions{Defaults: true, Updates: c.OldObject != nil, Subresource: c.Subresource})
	var noSub *catalog.NoSubresourceError
	if errors.As(err, &noSub) {
		return nil, nil, &document.InputError{Source: document.Source{File: c.Source.File, Line: c.SubresourceLine}, Msg: fmt.Sprintf("case %q: subresource: %v", c.Name, noSub), Err: err}
	}
	if err != nil {
		return nil, nil, err
	}
	if v.Result.Status == prune.MissingCRD {
		return nil, nil, &document.InputError{Source: c.Source, Msg: fmt.Sprintf("case %q: %s: no CRD of the suite defines %s, kind %s", c.Name, original, original.APIVersion, original.Kind)}
	}
	obs := &Observed{Result: Allowed}
	changes(obs, v.Result.Changes, c.Subresource)
	var errs []Error
	switch {
	case c.OldObject != nil && v.Old != nil:
		errs = updateErrors(v.Update)
		if !r.opts.Lower {
			errs = p.rules.placeErrors(original, errs)
		}
	case len(c.OldCRDs) > 0:
		errs = upgradeErrors(v.Findings)
	default:
		errs = createErrors(v.Result.Errors)
	}
	var refusedBy []int
	for i := range errs {
		if k := p.rules.attribute(original, &errs[i]); k >= 0 {
			refusedBy = append(refusedBy, k)
		}
	}
	if len(errs) > 0 {
		obs.Result, obs.Errors = Refused, errs
	}
	return obs, refusedBy, nil
}

// caseCatalog is a catalog with the suite's CRDs and the case's old
// object, or, for an upgrade, its old CRDs replaced by the suite's.
func (r *Runner) caseCatalog(ctx context.Context, p *prepared, c *Case, d *document.Document) (*catalog.Catalog, error) {
	cat := r.newCatalog()
	if len(c.OldCRDs) > 0 {
		l := cat.Load(finding.Gate{}) // a case is judged by its expectation, not the gate
		if err := l.Previous(docsOf(c.OldCRDs)); err != nil {
			return nil, err
		}
		if err := errors.Join(l.OldErrors...); err != nil {
			return nil, err
		}
		if err := l.Inputs(docsOf(append(append([]*document.Document{}, p.docs...), d)), true, nil); err != nil {
			return nil, err
		}
		_, err := l.Resolve(ctx)
		return cat, err
	}
	for _, pc := range p.crds {
		if _, _, err := cat.AddPrepared(pc); err != nil {
			return nil, err
		}
	}
	if c.OldObject != nil {
		old, err := fresh(c.OldObject)
		if err != nil {
			return nil, err
		}
		if err := cat.AddOld(old); err != nil {
			return nil, err
		}
	}
	kinds := catalog.Kinds{}
	kinds.Add(d.Object)
	return cat, cat.Resolve(ctx, kinds)
}

func docsOf(docs []*document.Document) catalog.Docs {
	return func(yield func(*document.Document, error) bool) {
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// changes are what the server drops and defaults of the object; a write
// of /status keeps its status, which a write of the object drops.
func changes(obs *Observed, chs []prune.Change, subresource string) {
	for _, ch := range chs {
		switch {
		case subresource == "status" && ch.Reason == prune.StatusSubresource:
		case ch.Reason == prune.Defaulted:
			if obs.Defaulted == nil {
				obs.Defaulted = map[string]interface{}{}
			}
			obs.Defaulted[ch.Path] = ch.NewValue
		case ch.Action == prune.Removed:
			obs.Pruned = append(obs.Pruned, ch.Path)
		}
	}
}

func createErrors(errs []prune.FieldError) []Error {
	var out []Error
	for _, e := range errs {
		out = append(out, Error{Field: e.Field, Type: e.Type, Message: e.Detail, Text: e.Message})
	}
	return out
}

// markerErrorType is the type of the server's error for a marker's
// lowered rule (a transition rule without a reason): the emulation's
// refusals are named as the server names them.
const markerErrorType = "Invalid value"

// updateErrors are the errors of an update's outcome, as the verdict
// keeps it (catalog.Verdict.Update; nil for an object no update check
// concerns, a CRD).
func updateErrors(out *catalog.UpdateResult) []Error {
	if out == nil {
		return nil
	}
	var errs []Error
	for _, f := range out.Refused {
		e := Error{Field: f.Path, Type: f.Type, Message: f.Message, Text: f.Text}
		if strings.HasPrefix(f.Rule, "x-kubernetes-mutability:") || strings.HasPrefix(f.Rule, "x-kubernetes-key-mutability:") {
			e.Rule, e.Type, e.value = f.Rule, markerErrorType, f.New
			e.Text = (&field.Error{Type: field.ErrorTypeInvalid, Field: f.Path, BadValue: f.New, Detail: f.Message}).Error() // unless placed (placeErrors)
		}
		errs = append(errs, e)
	}
	return errs
}

// upgradeErrors are what the upgrade of its CRD does to an existing
// object that fails a run: it becomes invalid, or loses data.
func upgradeErrors(findings []finding.Judged) []Error {
	var out []Error
	for _, f := range findings {
		if f.Severity == finding.Error {
			out = append(out, Error{Field: f.Path, Type: f.Reason, Message: f.Message, Text: f.Message})
		}
	}
	return out
}
