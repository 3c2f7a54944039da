// Package filter is kubectl crd as a KRM function (kyaml fn/framework): the
// engine over a ResourceList, for kustomize, kpt and pipelines, before apply.
package filter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/source"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdindex"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
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

// DefaultFailOn are the findings that are errors when failOn is not set
// (finding.DefaultFailOn): as the plugin exits 1 on them.
var DefaultFailOn = checkNames(finding.DefaultFailOn)

func checkNames(checks []finding.Check) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = string(c)
	}
	return out
}

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
	// IgnoreMissingCRDs lets an object of a kind no CRD defines through
	// with a warning, for repositories that check only some of their
	// kinds; by default it is an error (MissingCRD), as a typo in its
	// apiVersion would pass unchecked.
	IgnoreMissingCRDs bool `json:"ignoreMissingCRDs,omitempty"`
	// KubeVersion is the Kubernetes minor whose API server answers
	// ("1.31" to "1.37", as the plugin's --kube-version); default the
	// minor of the server code linked. The function reads no cluster.
	KubeVersion string `json:"kubeVersion,omitempty"`
	// LowerMutability rewrites the CRDs among the items with their
	// x-kubernetes-mutability markers lowered to CEL rules the API server
	// enforces (kubectl crd lower-mutability).
	LowerMutability bool `json:"lowerMutability,omitempty"`
	// Lock is a lock file (kubectl-crd.lock, written by kubectl crd
	// --update-lock) that pins the remote sources (https://, oci://) of crdPaths
	// and previous by digest: a source that changed fails the run.
	// Relative to the working directory, inside it as crdPaths.
	Lock string `json:"lock,omitempty"`
	// Offline reads the remote sources only from the cache, by the lock
	// (or the last fetch): a source not there fails the run.
	Offline bool `json:"offline,omitempty"`
	// SourceCertificateAuthority, SourceClientCertificate and
	// SourceClientKey are PEM files for the remote sources, as the
	// plugin's --source-* flags say: certificates trusted beside the
	// system's, and a client certificate with its key (in the certificate's
	// file when SourceClientKey is not set) for a server or registry that
	// requires one. Relative to the working directory, inside it as
	// crdPaths.
	SourceCertificateAuthority string `json:"sourceCertificateAuthority,omitempty"`
	SourceClientCertificate    string `json:"sourceClientCertificate,omitempty"`
	SourceClientKey            string `json:"sourceClientKey,omitempty"`
	// SourceInsecureSkipTLSVerify does not verify the certificates of the
	// remote sources (insecure).
	SourceInsecureSkipTLSVerify bool `json:"sourceInsecureSkipTLSVerify,omitempty"`
	// SourcePlainHTTP reaches oci:// registries without TLS (one on
	// loopback always is), and follows plain http on loopback from https
	// (a redirect, a chart's archive).
	SourcePlainHTTP bool `json:"sourcePlainHTTP,omitempty"`
	// ChartValues are values every Helm chart of crdPaths and previous is
	// rendered with (as a values file given to helm), after the files of
	// ChartValuesFiles: e.g. {crds: {enabled: true}}. The files are
	// relative to the working directory, inside it as crdPaths.
	ChartValues      map[string]any `json:"chartValues,omitempty"`
	ChartValuesFiles Paths          `json:"chartValuesFiles,omitempty"`

	// Results are the findings of the last Filter.
	Results framework.Results `json:"-"`
	// Warnings is where Filter writes what fails nothing but the user
	// should know (a cache not trusted), a line each, "Warning: " first,
	// as the plugin does; nil: nowhere.
	Warnings io.Writer `json:"-"`

	gate   finding.Gate
	ctx    context.Context // Processor.Context: nil, context.Background
	remote *source.Set     // the remote sources of crdPaths and previous
	// written takes item i once pruned or lowered, written again as node:
	// Filter's replaces it in the list, listByText's writes it.
	written func(it *listItem, i int, node *yaml.RNode) error
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
// CRDCheck over the items; the run's warnings go to Warnings (its stderr;
// nil: nowhere).
type Processor struct {
	Warnings io.Writer
	// Context is the run's (the command's, which a signal cancels): the
	// remote sources are fetched, and the charts rendered, on it; nil:
	// context.Background. A field, as the framework's Process takes none.
	Context context.Context
}

var _ framework.ResourceListProcessor = Processor{}

// Process prunes and checks the items and reports findings as results,
// then which minor gave the verdicts (answerResult); any result of error
// severity fails the function.
func (p Processor) Process(rl *framework.ResourceList) error {
	check, err := p.check(rl.FunctionConfig)
	if err != nil {
		return err
	}
	items, err := check.Filter(rl.Items)
	if err != nil {
		return err
	}
	rl.Items = items
	return check.finish(rl)
}

// check is the CRDCheck of the function config fc, the kubeVersion it
// names in use.
func (p Processor) check(fc *yaml.RNode) (*CRDCheck, error) {
	check, err := readConfig(fc)
	if err != nil {
		return nil, err
	}
	check.Warnings, check.ctx = p.Warnings, p.Context
	if err := check.useKubeVersion(); err != nil {
		return nil, err
	}
	return check, nil
}

// finish adds the results of the run to rl, and which minor answered:
// rl.Results, the error, when one of them is an error.
func (c *CRDCheck) finish(rl *framework.ResourceList) error {
	rl.Results = append(rl.Results, c.Results...)
	rl.Results = append(rl.Results, answerResult(kubeversion.Current()))
	for _, r := range c.Results {
		if r.Severity == framework.Error {
			return rl.Results
		}
	}
	return nil
}

// answerResult says which minor gave the verdicts of a run, and how, as
// the plugin's reports do: an info result, last, of no object, its tags
// kubeversion.Stamp's properties (kubernetes.version, .emulated, .by,
// .compatibilityVersion). Every run has it: results are data.
func answerResult(a kubeversion.Answer) *framework.Result {
	r := &framework.Result{Message: a.Verdicts(), Severity: framework.Info, Tags: map[string]string{}}
	for _, p := range a.Stamp().Properties() {
		r.Tags[p.Name] = p.Value
	}
	return r
}

// Filter prunes the items as the server would store them and checks each
// one that has a previous version as an update of it. Items are replaced
// only where something changes.
func (c *CRDCheck) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	items := make([]*listItem, len(nodes))
	for i, n := range nodes {
		items[i] = nodeItem(n, i)
	}
	// A pruned item replaces its original as it is checked, so that the
	// original can go.
	c.written = func(it *listItem, i int, node *yaml.RNode) error {
		it.node, nodes[i] = nil, node
		return nil
	}
	if err := c.filter(items); err != nil {
		return nil, err
	}
	return nodes, nil
}

// listItem is an item of the ResourceList as the function checks it:
// kyaml's node (Filter's), or its text located in the input (readItems),
// which the engine reads without a node tree of the whole list.
type listItem struct {
	// node is kyaml's node of the item (Filter's); nil for an item read
	// from the input's text, or once written again.
	node *yaml.RNode
	// text is the item written as a document of its own, once written
	// (itemText), until checkItems reads it; seq is an item read from the
	// input written as kyaml writes it in the list's items ("- ..."), its
	// document text seq without the entry's indentation when text is "".
	text string
	seq  []byte
	// What the function reads of the item before it reads it as a document.
	apiVersion, kind string
	path             string // its path annotation, else items[i]
	index            string // its index annotation
	fnConfig         bool   // isFunctionConfig
	// Of an item read from the input's text: its annotations of kyaml's
	// reader (kioutil.GetInternalAnnotations), and whether it has one of
	// those kyaml's protocol rewrites once the function ran.
	annotations map[string]string
	reconciled  bool
	changed     bool // pruned or lowered: written again
}

// nodeItem is item i, kyaml's node n.
func nodeItem(n *yaml.RNode, i int) *listItem {
	it := &listItem{node: n, apiVersion: n.GetApiVersion(), kind: n.GetKind(), path: itemPath(n, i), fnConfig: isFunctionConfig(n)}
	_, it.index, _ = kioutil.GetFileAnnotations(n)
	return it
}

// filter is Filter over items: a pruned or lowered item is handed to
// c.written.
func (c *CRDCheck) filter(items []*listItem) error {
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	c.Results = nil
	gate, err := c.gateOptions().Gate()
	if err != nil {
		return fmt.Errorf("function config: failOn: %w", err)
	}
	c.gate = gate
	// c.remote is set by load: closed as it is then.
	defer func() { c.remote.Close() }()
	// The namespace of an item without one is "default", as kubectl sends it.
	cat := catalog.New(catalog.Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}, Namespaces: catalog.Namespaces{Offline: true}})
	l, run, err := c.load(cat, items)
	if err != nil {
		return err
	}
	if err := c.checkItems(cat, items, l); err != nil {
		return err
	}
	c.reportChanges(run.Upgrades, l.CRDs)
	sort.SliceStable(c.Results, func(i, j int) bool {
		return severityRank[c.Results[i].Severity] < severityRank[c.Results[j].Severity]
	})
	return nil
}

// load is the run's first part (catalog.Loader): the CRDs of crdPaths, the
// objects and CRDs of previous, then the CRDs among the items (about to be
// applied, they override the files, and replace their previous version).
// Only CRDs and Lists are read as documents here; the other items are read
// one at a time by checkItems and dropped once checked, so that what an
// item costs beyond the ResourceList the protocol holds is small.
func (c *CRDCheck) load(cat *catalog.Catalog, items []*listItem) (*catalog.Loader, *catalog.Resolved, error) {
	root, err := c.root()
	if err != nil {
		return nil, nil, err
	}
	l := cat.Load(c.gate)
	cache, err := crdindex.Open(crdindex.DefaultDir(), crdindex.BuildKey())
	if err != nil && len(c.CRDPaths) > 0 {
		c.warn(err.Error())
	}
	if err := c.fetch(root); err != nil {
		return nil, nil, err
	}
	for _, p := range c.CRDPaths {
		if err := c.indexPath(l, cache, p, root); err != nil {
			return nil, nil, fmt.Errorf("crdPaths: %w", err)
		}
	}
	for _, p := range c.Previous {
		if err := l.Previous(c.pathDocs(p, root)); err != nil {
			return nil, nil, fmt.Errorf("previous: %w", err)
		}
	}
	// A previous object that matches nothing would let its update pass unchecked.
	if len(l.OldErrors) > 0 {
		// A line each (errors.Join), each printed escaped.
		bad := make([]error, len(l.OldErrors))
		for i, err := range l.OldErrors {
			bad[i] = fmt.Errorf("previous: %w", err)
		}
		return nil, nil, errors.Join(bad...)
	}
	var documents []int // the items read as documents here
	for i, it := range items {
		if !schema.IsCRD(it.apiVersion, it.kind) && !strings.HasSuffix(it.kind, "List") {
			l.Kinds.Add(map[string]interface{}{"apiVersion": it.apiVersion, "kind": it.kind})
			continue
		}
		documents = append(documents, i)
	}
	if err := l.Inputs(itemDocs(items, documents), true, nil); err != nil {
		return nil, nil, err
	}
	// Offline: refuses the kinds of built-in groups kubectl would not map.
	run, err := l.Resolve(c.ctx)
	var ie *document.InputError
	if errors.As(err, &ie) {
		// A CRD of crdPaths or previous that an item uses: named by its field.
		if field := c.fieldOf(ie.Source.File); field != "" {
			return nil, nil, fmt.Errorf("%s: %w", field, err)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	for _, a := range slices.Concat(l.CRDs, l.Unused) {
		c.addCRD(a)
	}
	return l, run, nil
}

// itemDocs are the items of indexes read as documents, on every core, in
// their order. Each item keeps its text, which checkItems reads again: for
// the CRDs, most of the ResourceList, writing an item's nodes as text
// costs more than reading the text.
func itemDocs(items []*listItem, indexes []int) catalog.Docs {
	return func(yield func(*document.Document, error) bool) {
		read := func(i int) itemRead {
			text, err := items[i].docText(i)
			if err != nil {
				return itemRead{err: err}
			}
			doc, err := readItemText(text, items[i].path)
			return itemRead{doc, text, err}
		}
		for i, r := range ordered.Seq(ordered.Workers(), slices.Values(indexes), read) {
			if items[i].seq == nil {
				items[i].text = r.text
			}
			if !yield(r.doc, r.err) || r.err != nil {
				return
			}
		}
	}
}

type itemRead struct {
	doc  *document.Document
	text string
	err  error
}

// checkItems reads and checks the items on every core (catalog.Check),
// and reports them in their order: results, the upgrade's counts, the
// pruned items. A pruned item replaces its original as it is checked, so
// that the original can go.
func (c *CRDCheck) checkItems(cat *catalog.Catalog, items []*listItem, l *catalog.Loader) error {
	opts := catalog.CheckOptions{Defaults: c.Defaults, Updates: true, Gate: c.gate, StoredCRDs: true}
	indexes := func(yield func(int) bool) {
		for i, it := range items {
			if it.fnConfig {
				continue // kustomize fn run and kpt pass the function's own config along
			}
			if !yield(i) {
				return
			}
		}
	}
	check := func(i int) itemChecks {
		// Each index is checked once, on one goroutine: its text is its own.
		text, err := items[i].docText(i)
		items[i].text = ""
		if err != nil {
			return itemChecks{err: err}
		}
		doc, err := readItemText(text, items[i].path)
		if err != nil {
			return itemChecks{err: err}
		}
		ic := itemChecks{doc: doc}
		// The objects kubectl would send: a List's items one by one.
		for _, d := range doc.Objects() {
			v, err := cat.Check(c.ctx, d, opts)
			if err != nil {
				ic.err = err
				break
			}
			ic.verdicts = append(ic.verdicts, v)
		}
		if ic.err == nil && !c.LowerMutability && c.prunes() && changes(ic.verdicts) {
			// Written again here, on every core: reporting it needs not.
			node, err := rewritten(doc)
			if err == nil {
				err = c.replace(items[i], i, node)
			}
			ic.err = err
		}
		return ic
	}
	for i, ic := range ordered.Seq(ordered.Workers(), indexes, check) {
		if ic.err != nil {
			return ic.err
		}
		node, err := c.reportItem(cat, items[i], ic)
		if err != nil {
			return err
		}
		if node != nil {
			if err := c.replace(items[i], i, node); err != nil {
				return err
			}
		}
	}
	return nil
}

// replace replaces item i by node, the item written again (c.written).
func (c *CRDCheck) replace(it *listItem, i int, node *yaml.RNode) error {
	it.changed = true
	return c.written(it, i, node)
}

// itemChecks are the verdicts on the objects of one item.
type itemChecks struct {
	doc      *document.Document
	verdicts []*catalog.Verdict
	err      error
}

// reportItem reports the verdicts on an item's objects, in order, and
// lowers its CRDs' markers when asked: the item written again when pruning
// or lowering changed it, else nil (without lowering, its check wrote it).
func (c *CRDCheck) reportItem(cat *catalog.Catalog, item *listItem, ic itemChecks) (*yaml.RNode, error) {
	for _, v := range ic.verdicts {
		cat.Count(v)
		c.report(v, item)
	}
	if !c.LowerMutability {
		return nil, nil // written again by its check, if pruned (checkItems)
	}
	changed := changes(ic.verdicts)
	var err error
	if changed {
		// Lowered as the item reads once stored: the edits of the one
		// are made on the text the other wrote.
		if ic.doc, err = reread(ic.doc); err != nil {
			return nil, err
		}
	}
	lowered, err := c.lowerMutability(item.node, ic.doc)
	if err != nil {
		return nil, err
	}
	if !(changed && c.prunes()) && !lowered {
		return nil, nil
	}
	return rewritten(ic.doc)
}

// prunes reports whether the function writes the items as stored.
func (c *CRDCheck) prunes() bool { return c.Prune == nil || *c.Prune }

// changes reports whether the server changes an object of verdicts.
func changes(verdicts []*catalog.Verdict) bool {
	return slices.ContainsFunc(verdicts, func(v *catalog.Verdict) bool { return len(v.Result.Changes) > 0 })
}

// rewritten is the item of doc as edited, kyaml's node of it.
func rewritten(doc *document.Document) (*yaml.RNode, error) {
	b, err := doc.Encode()
	if err != nil {
		return nil, err
	}
	node, err := yaml.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: the pruned item does not parse: %w", doc.Source.File, err)
	}
	return node, nil
}

// reread is doc read again from its text as edited.
func reread(doc *document.Document) (*document.Document, error) {
	b, err := doc.Encode()
	if err != nil {
		return nil, err
	}
	ds, err := document.Read(bytes.NewReader(b), doc.Source.File)
	if err != nil || len(ds) != 1 {
		return nil, fmt.Errorf("%s: the stored item does not read back: %v", doc.Source.File, err)
	}
	return ds[0], nil
}

// severityRank orders results, errors first.
var severityRank = map[framework.Severity]int{framework.Error: 0, framework.Warning: 1, framework.Info: 2}

// docText is item i's text as a document of its own: as read from the
// input, as load wrote it, else its nodes written now (itemText).
func (it *listItem) docText(i int) (string, error) {
	switch {
	case it.text != "":
		return it.text, nil
	case it.seq != nil:
		return unindented(it.seq)
	}
	text, _, err := itemText(it.node, i)
	return text, err
}

// itemPath is the name of item i: its path annotation, else its index.
func itemPath(item *yaml.RNode, i int) string {
	path, _, _ := kioutil.GetFileAnnotations(item)
	if path == "" {
		path = fmt.Sprintf("items[%d]", i)
	}
	return path
}

// itemText is item i written as a document of its own, and its name.
func itemText(item *yaml.RNode, i int) (text, path string, err error) {
	path = itemPath(item, i)
	// An alias of an anchor in another item reads in the list, not alone.
	node, err := withForeignAliasesInlined(item.YNode(), path)
	if err != nil {
		return "", "", err
	}
	text, err = yaml.NewRNode(node).String()
	return text, path, err
}

// readItemText is the document of an item's text.
func readItemText(text, path string) (*document.Document, error) {
	ds, err := document.Read(strings.NewReader(text), path)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the item: %w", path, err)
	}
	if len(ds) != 1 {
		return nil, fmt.Errorf("%s: reading the item: %d documents, want one", path, len(ds))
	}
	return ds[0], nil
}

// crdRef is how results name a CRD of the run.
func crdRef(a catalog.AddedCRD) (*yaml.ResourceIdentifier, *framework.File) {
	ref := a.Ref
	name := ref.Name // a CRD of Unused, which the loader did not add
	if a.CRD != nil {
		name = a.CRD.Name()
	}
	return &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind}, NameMeta: yaml.NameMeta{Name: name}},
		&framework.File{Path: a.Source.File}
}

// addCRD reports the findings of a CRD the loader added. (A CRD the API
// server refuses fails the run whatever failOn says, as the apply would
// fail: the loader's error.)
func (c *CRDCheck) addCRD(a catalog.AddedCRD) {
	ref, file := crdRef(a)
	if a.CRD != nil {
		ref.APIVersion = a.CRD.Object.APIVersion
	}
	ref.Kind = "CustomResourceDefinition"
	for _, j := range a.Findings {
		// Their words do not name the CRD: the server's warnings, defined twice.
		if j.Reason == finding.ReasonRedefined || j.Check == finding.CRDWarning && j.Reason != finding.ReasonRefusedUnused {
			j.Message = fmt.Sprintf("CustomResourceDefinition %s: %s", ref.Name, j.Message)
		}
		c.result(j, ref, file)
	}
}

// report reports the verdict on an object of item.
func (c *CRDCheck) report(v *catalog.Verdict, item *listItem) {
	res := v.Result
	ref := &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: res.Object.APIVersion, Kind: res.Object.Kind},
		NameMeta: yaml.NameMeta{Name: res.Object.Name, Namespace: res.Object.Namespace},
	}
	file := &framework.File{Path: res.Source.File}
	if item.index != "" {
		fmt.Sscan(item.index, &file.Index)
	}
	for _, f := range v.Findings {
		c.result(f, ref, file)
	}
}

// resultTags name, per check, the tag that carries a finding's reason.
var resultTags = map[finding.Check]string{finding.Prune: "reason", finding.Invalid: "type", finding.Update: "rule", finding.DataLoss: "reason"}

// result adds a finding about ref in file as a result: an error exactly
// when the gate's verdict on it (finding.Judged, the engine's) fails the
// run, else a warning (info for a finding the engine calls one).
func (c *CRDCheck) result(f finding.Judged, ref *yaml.ResourceIdentifier, file *framework.File) *framework.Result {
	r := &framework.Result{Message: f.Message, Severity: framework.Warning, ResourceRef: ref, File: file}
	if f.Severity == finding.Info {
		r.Severity = framework.Info
	}
	if f.Path != "" {
		r.Field = &framework.Field{Path: f.Path, CurrentValue: f.Value, ProposedValue: f.NewValue}
	}
	if f.Fails {
		r.Severity = framework.Error
	}
	if f.Check != "" {
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

// fieldOf is the field of the config that names file: crdPaths or
// previous; "" for none.
func (c *CRDCheck) fieldOf(file string) string {
	for _, f := range []struct {
		name  string
		paths Paths
	}{{"crdPaths", c.CRDPaths}, {"previous", c.Previous}} {
		for _, p := range f.paths {
			if names, ok := c.remote.Names(p); ok && slices.Contains(names, file) {
				return f.name
			}
			if files, err := document.Files(p, true); err == nil && slices.Contains(files, file) {
				return f.name
			}
		}
	}
	return ""
}

// fetch fetches the remote sources of crdPaths and previous (or reads them
// from the cache, by the lock), the lock and the files of TLS inside root
// as they are.
func (c *CRDCheck) fetch(root string) error {
	for _, f := range []struct{ field, path string }{{"lock", c.Lock}, {"sourceCertificateAuthority", c.SourceCertificateAuthority},
		{"sourceClientCertificate", c.SourceClientCertificate}, {"sourceClientKey", c.SourceClientKey}} {
		if f.path == "" {
			continue
		}
		if err := inside(f.path, root); err != nil {
			return fmt.Errorf("%s: %w", f.field, err)
		}
	}
	values, done, err := c.chartValues(root)
	if err != nil {
		return err
	}
	defer done()
	settings := c.sources()
	settings.ChartValues = values
	opts := settings.Options()
	opts.MaxBytes, opts.Warn, opts.ChartRoot = document.MaxDocumentBytes, c.warn, root
	set, err := source.Fetch(c.ctx, opts, c.Lock, c.CRDPaths, c.Previous)
	if err != nil {
		return err
	}
	c.remote = set
	return nil
}

// gateOptions are what the config says fails the run (failOn,
// ignoreMissingCRDs), as the plugin's flags say it: one gate for both.
func (c *CRDCheck) gateOptions() finding.GateOptions {
	return finding.GateOptions{FailOn: c.FailOn, IgnoreMissingCRDs: c.IgnoreMissingCRDs}
}

// sourceNames are the config's fields of source.Settings, as its messages
// name them.
var sourceNames = source.Names{Lock: "lock", Offline: "offline", ClientCert: "sourceClientCertificate", ClientKey: "sourceClientKey"}

// sources are the settings of the remote sources that the config's fields
// give (the plugin's flags give the same, source.Settings): they map here
// alone. The values files of charts are chartValues's.
func (c *CRDCheck) sources() source.Settings {
	return source.Settings{Lock: c.Lock, Offline: c.Offline, CAFile: c.SourceCertificateAuthority,
		Insecure: c.SourceInsecureSkipTLSVerify, PlainHTTP: c.SourcePlainHTTP,
		ClientCert: c.SourceClientCertificate, ClientKey: c.SourceClientKey, Names: sourceNames}
}

// warn writes a warning to Warnings, if any.
func (c *CRDCheck) warn(msg string) {
	if c.Warnings != nil {
		printable.Fprintf(c.Warnings, "Warning: %s\n", msg)
	}
}

// indexPath reads the CRD files of a file or directory (recursively) into
// the loader's index, through the cache of indexes (crdindex), on every
// core: each file inside root (unless root is ""), as readPaths reads them.
func (c *CRDCheck) indexPath(l *catalog.Loader, cache crdindex.Cache, p, root string) error {
	files, err := c.pathFiles(p, root)
	if err != nil {
		return err
	}
	paths := make([]crdindex.Path, len(files))
	for i, f := range files {
		paths[i] = crdindex.Path{File: c.remote.Path(f), Name: f}
	}
	for idx, err := range cache.ReadPaths(paths) {
		if err != nil {
			return err
		}
		l.Index(idx)
	}
	return nil
}

// pathFiles are the files of a file or directory (recursively), each
// inside root (unless root is ""), or the names of a remote source's.
func (c *CRDCheck) pathFiles(p, root string) ([]string, error) {
	if names, ok := c.remote.Names(p); ok {
		return names, nil
	}
	if err := inside(p, root); err != nil {
		return nil, err
	}
	files, err := document.Files(p, true)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := inside(f, root); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// pathDocs are the documents of a file or directory (recursively), each
// file inside root (unless root is "").
func (c *CRDCheck) pathDocs(p, root string) catalog.Docs {
	return func(yield func(*document.Document, error) bool) {
		docs, err := c.readPaths(p, root)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// readPaths reads every document of a file or directory (recursively), each
// file inside root (unless root is "").
func (c *CRDCheck) readPaths(p, root string) ([]*document.Document, error) {
	files, err := c.pathFiles(p, root)
	if err != nil {
		return nil, err
	}
	var docs []*document.Document
	for _, f := range files {
		data, err := os.ReadFile(c.remote.Path(f))
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

// useKubeVersion makes the engine answer as the config's kubeVersion
// (validated), else as the linked code's minor.
func (c *CRDCheck) useKubeVersion() error {
	m := kubeversion.Embedded
	if c.KubeVersion != "" {
		m, _ = kubeversion.Parse(c.KubeVersion)
	}
	_, err := kubeversion.Use(m)
	return err
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
	if err := cfg.gateOptions().Validate(); err != nil {
		return nil, fmt.Errorf("function config: failOn: %w", err)
	}
	if cfg.KubeVersion != "" {
		if _, err := kubeversion.Parse(cfg.KubeVersion); err != nil {
			if v := cfg.KubeVersion; len(v) == 3 && strings.HasPrefix(v, "1.") {
				// YAML reads 1.30 as the number 1.3.
				return nil, fmt.Errorf("function config: kubeVersion: %w (quote it: YAML reads kubeVersion: %s0 as the number %s)", err, v, v)
			}
			return nil, fmt.Errorf("function config: kubeVersion: %w", err)
		}
	}
	settings := cfg.sources()
	if err := settings.Validate(); err != nil {
		return nil, fmt.Errorf("function config: %w", err)
	}
	return cfg, nil
}
