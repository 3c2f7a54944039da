// Package filter is kubectl crd as a KRM function (kyaml fn/framework): the
// engine over a ResourceList, for kustomize, kpt and pipelines, before apply.
package filter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// The function config's type.
const (
	APIVersion = "crd.kubectl.dev/v1alpha1"
	Kind       = "CRDCheck"
)

// The values of loadRestrictor, as kustomize names them.
const (
	LoadRestrictionsRootOnly = "LoadRestrictionsRootOnly"
	LoadRestrictionsNone     = "LoadRestrictionsNone"
)

// Finding kinds, for failOn: the engine's checks (finding.Checks).
const (
	FindingPrune         = string(finding.Prune)
	FindingNonStructural = string(finding.NonStructural)
	FindingUpdate        = string(finding.Update)
	FindingMissingCRD    = string(finding.MissingCRD)
	FindingInvalid       = string(finding.Invalid)
	FindingBreaking      = string(finding.Breaking)
	FindingDataLoss      = string(finding.DataLoss)
	FindingCRDChange     = string(finding.CRDChange)
	FindingCRDWarning    = string(finding.CRDWarning)
)

// DefaultFailOn are the findings that are errors when failOn is not set:
// the checks whose findings the engine calls errors, as the plugin exits 1
// on them. What the server would refuse (a non-structural CRD, an update,
// an invalid object, a CRD update) and what a CRD upgrade loses of existing
// objects; not what pruning drops from a manifest, a kind without a CRD,
// or a compatible CRD change.
var DefaultFailOn = []string{FindingNonStructural, FindingUpdate, FindingInvalid, FindingBreaking, FindingDataLoss}

// CRDCheck is the function config, and the filter it configures: it prunes
// the items as the API server stores them and checks updates, collecting
// its findings in Results.
type CRDCheck struct {
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Metadata   map[string]interface{} `json:"metadata,omitempty"`
	// CRDPaths are CRD files or directories, relative to the working
	// directory (kustomize runs exec functions in the kustomization's).
	CRDPaths Paths `json:"crdPaths,omitempty"`
	// Prune removes what the server would drop (default true), keeping
	// comments and key order.
	Prune *bool `json:"prune,omitempty"`
	// Defaults also writes the schemas' defaults into the objects.
	Defaults bool `json:"defaults,omitempty"`
	// Previous are files or directories with the objects as rendered or
	// applied before: each item with a previous version (same group, kind,
	// namespace and name) is checked as an update of it. A CRD among them
	// is the previous version of the CRD of that name among the items: the
	// upgrade is checked, the items' custom resources standing for the
	// existing objects.
	Previous Paths `json:"previous,omitempty"`
	// FailOn lists the findings that are errors (default DefaultFailOn);
	// the others are warnings.
	FailOn []string `json:"failOn,omitempty"`
	// LoadRestrictor, as kustomize's --load-restrictor: LoadRestrictionsRootOnly
	// (the default) refuses CRDPaths and Previous outside the working
	// directory, symbolic links resolved; LoadRestrictionsNone reads any path.
	LoadRestrictor string `json:"loadRestrictor,omitempty"`
	// LowerMutability rewrites the CRDs among the items with their
	// x-kubernetes-mutability markers lowered to CEL rules the API server
	// enforces (kubectl crd lower-mutability).
	LowerMutability bool `json:"lowerMutability,omitempty"`

	// Results are the findings of the last Filter.
	Results framework.Results `json:"-"`
}

var _ kio.Filter = &CRDCheck{}

// Paths is a list of files or directories; a single string is a list of one.
type Paths []string

// UnmarshalJSON takes a string or a list of strings.
func (p *Paths) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*p = Paths{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a path or a list of paths")
	}
	*p = many
	return nil
}

// Processor reads the function config of a ResourceList and runs its
// CRDCheck over the items.
type Processor struct{}

var _ framework.ResourceListProcessor = Processor{}

// Process prunes and checks the items and reports findings as results; any
// result of error severity fails the function.
func (Processor) Process(rl *framework.ResourceList) error {
	check, err := readConfig(rl.FunctionConfig)
	if err != nil {
		return err
	}
	items, err := check.Filter(rl.Items)
	if err != nil {
		return err
	}
	rl.Items = items
	rl.Results = append(rl.Results, check.Results...)
	for _, r := range check.Results {
		if r.Severity == framework.Error {
			return rl.Results
		}
	}
	return nil
}

// Filter prunes the items as the server would store them and checks each
// one that has a previous version as an update of it. Items are replaced
// only where something changes.
func (c *CRDCheck) Filter(items []*yaml.RNode) ([]*yaml.RNode, error) {
	c.Results = nil
	// The namespace of an item without one is "default", as kubectl sends it.
	cat := catalog.New(catalog.Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}, Namespaces: catalog.Namespaces{Offline: true}})
	root, err := c.root()
	if err != nil {
		return nil, err
	}
	for _, p := range c.CRDPaths {
		docs, err := readPaths(p, root)
		if err != nil {
			return nil, fmt.Errorf("crdPaths: %w", err)
		}
		// The CRDs are decoded and validated on every core, added in order.
		err = ordered.Map(ordered.Workers(), func(emit func(*document.Document) error) error {
			for _, d := range docs {
				if err := emit(d); err != nil {
					return err
				}
			}
			return nil
		}, prepareCRD(cat, false), func(_ *document.Document, p *catalog.PreparedCRD) error {
			return c.addCRD(cat, p)
		})
		if err != nil {
			return nil, fmt.Errorf("crdPaths: %w", err)
		}
	}
	var bad []string // a previous object that matches nothing would let its update pass unchecked
	for _, p := range c.Previous {
		docs, err := readPaths(p, root)
		if err != nil {
			return nil, fmt.Errorf("previous: %w", err)
		}
		for _, d := range docs {
			// A previous CRD is the one a CRD of the items replaces.
			ok, err := cat.AddPreviousCRD(d)
			if !ok {
				err = cat.AddOld(d)
			}
			if err != nil {
				bad = append(bad, "previous: "+err.Error())
			}
		}
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "\n"))
	}

	// The items: CRDs first (about to be applied, they override the files).
	// Only CRDs and Lists are read as documents here; the other items are
	// read one at a time below and dropped once checked, so that what an
	// item costs beyond the ResourceList the protocol holds is small.
	kinds := catalog.Kinds{}
	upgrade := newUpgradeCheck()
	type read struct {
		objects  []*document.Document
		prepared []*catalog.PreparedCRD
		err      error
	}
	// A CRD of the items replaces its version of previous: when there is one,
	// the server's verdict on it is its CRD update validation's (Upgrades).
	prepare := prepareCRD(cat, true)
	var documents []int // the items read as documents here
	// The items that hold CRDs only, as read: they pass through unchanged,
	// and need not be read again below unless their markers are lowered.
	crdOnly := map[int]bool{}
	for i, item := range items {
		apiVersion, kind := item.GetApiVersion(), item.GetKind()
		if !schema.IsCRD(apiVersion, kind) && !strings.HasSuffix(kind, "List") {
			kinds.Add(map[string]interface{}{"apiVersion": apiVersion, "kind": kind})
			continue
		}
		documents = append(documents, i)
	}
	err = ordered.Map(ordered.Workers(), func(emit func(int) error) error {
		for _, i := range documents {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}, func(i int) read {
		doc, err := readItem(items[i], i)
		if err != nil {
			return read{err: err}
		}
		r := read{objects: doc.Objects()}
		for _, o := range r.objects {
			r.prepared = append(r.prepared, prepare(o))
		}
		return r
	}, func(i int, r read) error {
		if r.err != nil {
			return r.err
		}
		crdOnly[i] = len(r.objects) > 0
		for j, o := range r.objects {
			crdOnly[i] = crdOnly[i] && r.prepared[j] != nil
			kinds.Add(o.Object)
			upgrade.visit(o)
			if err := c.addCRD(cat, r.prepared[j]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Offline: refuses the kinds of built-in groups kubectl would not map.
	if err := cat.Resolve(context.Background(), kinds); err != nil {
		return nil, err
	}
	if err := upgrade.compare(cat); err != nil {
		return nil, err
	}

	doPrune := c.Prune == nil || *c.Prune
	// A pruned item replaces its original in items as it is checked, so
	// that the original can go.
	out := items
	// The items are read and checked on every core, and reported in their
	// order: results, the upgrade's counts, the pruned items.
	type itemChecks struct {
		doc     *document.Document
		objects []*checked
		err     error
	}
	err = ordered.Map(ordered.Workers(), func(emit func(int) error) error {
		for i, item := range items {
			if isFunctionConfig(item) {
				continue // kustomize fn run and kpt pass the function's own config along
			}
			if crdOnly[i] && !c.LowerMutability {
				continue // checked above, as CRDs are; nothing of it changes
			}
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}, func(i int) itemChecks {
		doc, err := readItem(items[i], i)
		if err != nil {
			return itemChecks{err: err}
		}
		ic := itemChecks{doc: doc}
		// The objects kubectl would send: a List's items one by one.
		for _, d := range doc.Objects() {
			ch, err := c.checkObject(cat, upgrade, d)
			if err != nil {
				ic.err = err
				break
			}
			ic.objects = append(ic.objects, ch)
		}
		return ic
	}, func(i int, ic itemChecks) error {
		if ic.err != nil {
			return ic.err
		}
		doc, changed := ic.doc, false
		for _, ch := range ic.objects {
			ch, err := c.report(cat, upgrade, ch, items[i])
			if err != nil {
				return err
			}
			changed = changed || ch
		}
		lowered := false
		if c.LowerMutability {
			var err error
			if lowered, err = c.lowerMutability(doc); err != nil {
				return err
			}
		}
		if doPrune && changed || lowered {
			b, err := doc.Encode()
			if err != nil {
				return err
			}
			node, err := yaml.Parse(string(b))
			if err != nil {
				return fmt.Errorf("%s: the pruned item does not parse: %w", doc.Source.File, err)
			}
			out[i] = node
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.reportChanges(upgrade)
	sort.SliceStable(c.Results, func(i, j int) bool {
		return severityRank[c.Results[i].Severity] < severityRank[c.Results[j].Severity]
	})
	return out, nil
}

// severityRank orders results, errors first.
var severityRank = map[framework.Severity]int{framework.Error: 0, framework.Warning: 1, framework.Info: 2}

// readItem is an item as a document, named by its path annotation.
func readItem(item *yaml.RNode, i int) (*document.Document, error) {
	path, _, _ := kioutil.GetFileAnnotations(item)
	if path == "" {
		path = fmt.Sprintf("items[%d]", i)
	}
	// An alias of an anchor in another item reads in the list, not alone.
	node, err := withForeignAliasesInlined(item.YNode(), path)
	if err != nil {
		return nil, err
	}
	s, err := yaml.NewRNode(node).String()
	if err != nil {
		return nil, err
	}
	ds, err := document.Read(strings.NewReader(s), path)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the item: %w", path, err)
	}
	if len(ds) != 1 {
		return nil, fmt.Errorf("%s: reading the item: %d documents, want one", path, len(ds))
	}
	return ds[0], nil
}

// prepareCRD is catalog.PrepareCRD of the documents that are CRDs (nil for
// the others), for any goroutine; replaces: PrepareReplacement, for CRDs
// about to replace their previous version.
func prepareCRD(cat *catalog.Catalog, replaces bool) func(*document.Document) *catalog.PreparedCRD {
	return func(d *document.Document) *catalog.PreparedCRD {
		if ref := prune.Ref(d.Object); !schema.IsCRD(ref.APIVersion, ref.Kind) {
			return nil
		}
		if replaces {
			return cat.PrepareReplacement(d)
		}
		return cat.PrepareCRD(d)
	}
}

// addCRD adds a document PrepareCRD read to the catalog when it is a CRD, with its findings as
// results. A CRD the API server refuses is bad input: it fails the run
// whatever failOn says, as the apply would fail.
func (c *CRDCheck) addCRD(cat *catalog.Catalog, p *catalog.PreparedCRD) error {
	if p == nil {
		return nil // not a CRD
	}
	crd, findings, err := cat.AddPrepared(p)
	if err != nil || crd == nil {
		return err
	}
	d := p.Document()
	ref := &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: crd.Object.APIVersion, Kind: "CustomResourceDefinition"}, NameMeta: yaml.NameMeta{Name: crd.Name()}}
	for _, f := range findings {
		// Their words do not name the CRD: the server's warnings, defined twice.
		if f.Reason == finding.ReasonRedefined || f.Check == finding.CRDWarning {
			f.Message = fmt.Sprintf("CustomResourceDefinition %s: %s", crd.Name(), f.Message)
		}
		c.result(f, ref, &framework.File{Path: d.Source.File})
	}
	return nil
}

// checked is what checkObject found of one object, for report.
type checked struct {
	d      *document.Document
	old    *document.Document
	impact *impact
	res    *prune.Result
	// findings are the prune check's; outcome is the update check's, when
	// the object has a previous version.
	findings []finding.Finding
	outcome  *update.Outcome
}

// checkObject prunes one object and checks it as a create, or as an update
// when it has a previous version, and as an existing object of an upgraded
// CRD. It changes nothing but the object's document (the edits of pruning),
// and goroutines may check objects at once; report reports in order.
func (c *CRDCheck) checkObject(cat *catalog.Catalog, upgrade *upgradeCheck, d *document.Document) (*checked, error) {
	original := d.Object // the object as written, before the edits of pruning
	old, err := cat.Old(context.Background(), d)
	if err != nil {
		return nil, err
	}
	// The upgrade reads the object as written, before pruning: as the cluster has it.
	// An object the new CRD cannot take at all is the prune check's error to tell.
	imp, upgradeErr := upgrade.computeImpact(cat, d)
	// A create is validated as one; an update (with ratcheting) below.
	res, findings, err := cat.Prune(d, catalog.PruneOptions{Defaults: c.Defaults, Validate: old == nil})
	if err != nil {
		return nil, err
	}
	if upgradeErr != nil {
		return nil, upgradeErr
	}
	out := &checked{d: d, old: old, impact: imp, res: res, findings: findings}
	if old != nil && res.Status != prune.MissingCRD && res.Status != prune.IsCRD {
		if out.outcome, err = cat.CheckUpdate(old.Object, original, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// report reports what checkObject found of an object of item, and counts
// its upgrade impact; changed says whether pruning changed it.
func (c *CRDCheck) report(cat *catalog.Catalog, upgrade *upgradeCheck, ch *checked, item *yaml.RNode) (changed bool, err error) {
	d, res := ch.d, ch.res
	upgraded, caused := upgrade.record(cat, ch.impact)
	ref := &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: res.Object.APIVersion, Kind: res.Object.Kind},
		NameMeta: yaml.NameMeta{Name: res.Object.Name, Namespace: res.Object.Namespace},
	}
	file := &framework.File{Path: d.Source.File}
	if _, index, _ := kioutil.GetFileAnnotations(item); index != "" {
		fmt.Sscan(index, &file.Index)
	}
	switch res.Status {
	case prune.MissingCRD:
		// A kind kubectl would not map is a bad item, like one that is not an object.
		if err := cat.Refusal(d); err != nil {
			return false, err
		}
		if !builtin.IsBuiltin(res.Object.APIVersion) {
			f := finding.NoCRD(res.Object)
			f.Message += ": not checked"
			c.result(f, ref, file)
		}
		return false, nil
	case prune.IsCRD:
		return false, nil
	}
	for _, f := range ch.findings {
		if !caused[findingKey(f)] {
			c.result(f, ref, file)
		}
	}
	for _, f := range upgraded {
		c.result(f, ref, file)
	}
	if ch.outcome != nil {
		for _, u := range ch.outcome.Refused {
			f := finding.FromUpdate(u)
			f.Message = fmt.Sprintf("update refused: %s (previous version: %s)", f.Message, ch.old.Source)
			c.result(f, ref, file)
		}
	}
	return len(res.Changes) > 0, nil
}

// resultTags name, per check, the tag that carries a finding's reason.
var resultTags = map[finding.Check]string{finding.Prune: "reason", finding.Invalid: "type", finding.Update: "rule", finding.DataLoss: "reason"}

// result adds a finding about ref in file as a result: an error when its
// check is in failOn, else a warning (info for a finding the engine calls
// one). A finding of no check (a CRD defined twice) is never an error,
// whatever failOn says.
func (c *CRDCheck) result(f finding.Finding, ref *yaml.ResourceIdentifier, file *framework.File) *framework.Result {
	r := &framework.Result{Message: f.Message, Severity: framework.Warning, ResourceRef: ref, File: file}
	if f.Severity == finding.Info {
		r.Severity = framework.Info
	}
	if f.Path != "" {
		r.Field = &framework.Field{Path: f.Path, CurrentValue: f.Value, ProposedValue: f.NewValue}
	}
	if f.Check != "" {
		for _, fail := range c.FailOn {
			if fail == string(f.Check) {
				r.Severity = framework.Error
			}
		}
		r.Tags = map[string]string{"finding": string(f.Check)}
		if key := resultTags[f.Check]; key != "" && f.Reason != "" {
			r.Tags[key] = f.Reason
		}
	}
	c.Results = append(c.Results, r)
	return r
}

// root is the directory that paths must stay in, symbolic links resolved;
// "" when the config lifts the restriction.
func (c *CRDCheck) root() (string, error) {
	if c.LoadRestrictor == LoadRestrictionsNone {
		return "", nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(wd)
}

// inside refuses a path that leads out of root (unless root is ""): a
// function config must not read /proc or a home directory by ../ or by a
// symbolic link, as kustomize's load restrictor refuses it.
func inside(p, root string) error {
	if root == "" {
		return nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil // it does not exist: reading it says so
	}
	rel, err := filepath.Rel(root, real)
	if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	const hint = "outside the function's working directory (set loadRestrictor: " + LoadRestrictionsNone + " in the function config to read it)"
	if lexical, err := filepath.Rel(root, abs); err == nil && lexical != rel && !strings.HasPrefix(lexical, "..") {
		return fmt.Errorf("%s: a symbolic link to %s, %s", p, rel, hint)
	}
	return fmt.Errorf("%s: %s", p, hint)
}

// readPaths reads every document of a file or directory (recursively), each
// file inside root (unless root is "").
func readPaths(p, root string) ([]*document.Document, error) {
	if err := inside(p, root); err != nil {
		return nil, err
	}
	files, err := document.Files(p, true)
	if err != nil {
		return nil, err
	}
	var docs []*document.Document
	for _, f := range files {
		if err := inside(f, root); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ds, err := document.Read(bytes.NewReader(data), f)
		if err != nil {
			return nil, err
		}
		docs = append(docs, ds...)
	}
	return docs, nil
}

// isFunctionConfig reports whether an item configures a KRM function: ours,
// or any declared with the function annotation.
func isFunctionConfig(item *yaml.RNode) bool {
	if item.GetApiVersion() == APIVersion && item.GetKind() == Kind {
		return true
	}
	a := item.GetAnnotations()
	_, ok1 := a["config.kubernetes.io/function"]
	_, ok2 := a["config.k8s.io/function"]
	return ok1 || ok2
}

func readConfig(fc *yaml.RNode) (*CRDCheck, error) {
	cfg := &CRDCheck{}
	if fc == nil {
		cfg.FailOn = DefaultFailOn
		return cfg, nil
	}
	s, err := fc.String()
	if err != nil {
		return nil, err
	}
	if err := sigsyaml.UnmarshalStrict([]byte(s), cfg); err != nil {
		return nil, fmt.Errorf("function config: %w", err)
	}
	if cfg.Kind != "" && (cfg.APIVersion != APIVersion || cfg.Kind != Kind) {
		return nil, fmt.Errorf("function config: want apiVersion %s, kind %s; got %s, %s", APIVersion, Kind, cfg.APIVersion, cfg.Kind)
	}
	if cfg.FailOn == nil {
		cfg.FailOn = DefaultFailOn
	}
	switch cfg.LoadRestrictor {
	case "", LoadRestrictionsRootOnly, LoadRestrictionsNone:
	default:
		return nil, fmt.Errorf("function config: loadRestrictor: unknown value %q (%s, %s)", cfg.LoadRestrictor, LoadRestrictionsRootOnly, LoadRestrictionsNone)
	}
	names := make([]string, len(finding.Checks))
	for i, check := range finding.Checks {
		names[i] = string(check)
	}
	for _, f := range cfg.FailOn {
		if !slices.Contains(names, f) {
			return nil, fmt.Errorf("function config: failOn: unknown finding %q (%s)", f, strings.Join(names, ", "))
		}
	}
	return cfg, nil
}
