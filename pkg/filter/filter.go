// Package filter is kubectl crd as a KRM function (kyaml fn/framework): the
// engine over a ResourceList, for kustomize, kpt and pipelines, before apply.
package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
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

// Finding kinds, for failOn.
const (
	FindingPrune         = "Prune"
	FindingNonStructural = "NonStructural"
	FindingUpdate        = "Update"
	FindingMissingCRD    = "MissingCRD"
	FindingInvalid       = "Invalid"
)

// DefaultFailOn are the findings that are errors when failOn is not set:
// what the server would refuse (a non-structural CRD, an update, an
// invalid object).
var DefaultFailOn = []string{FindingNonStructural, FindingUpdate, FindingInvalid}

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
	// namespace and name) is checked as an update of it.
	Previous Paths `json:"previous,omitempty"`
	// FailOn lists the findings that are errors (default NonStructural,
	// Update, Invalid); the others are warnings.
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

// crdMarkers are the mutability schemas of a CRD as written, by version.
type crdMarkers map[string]*update.Schema

// Filter prunes the items as the server would store them and checks each
// one that has a previous version as an update of it. Items are replaced
// only where something changes.
func (c *CRDCheck) Filter(items []*yaml.RNode) ([]*yaml.RNode, error) {
	c.Results = nil
	fail := map[string]bool{}
	for _, f := range c.FailOn {
		fail[f] = true
	}
	add := func(finding string, r *framework.Result) {
		r.Severity = framework.Warning
		if fail[finding] {
			r.Severity = framework.Error
		}
		if r.Tags == nil {
			r.Tags = map[string]string{}
		}
		r.Tags["finding"] = finding
		c.Results = append(c.Results, r)
	}

	reg := schema.NewRegistry()
	markers := map[runtimeschema.GroupKind]crdMarkers{}
	type sourced struct {
		crd    *schema.CRD
		source document.Source
	}
	byName := map[string]sourced{}
	addCRD := func(d *document.Document) error {
		// A CRD the API server refuses is bad input: it fails the run
		// whatever failOn says, as the apply would fail.
		crd, ok, err := schema.FromObject(d.Object)
		if err != nil {
			return fmt.Errorf("%s: %v", d.Source, err)
		}
		if !ok {
			return nil
		}
		reg.Add(crd)
		ref := &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: crd.Object.APIVersion, Kind: "CustomResourceDefinition"}, NameMeta: yaml.NameMeta{Name: crd.Name()}}
		if prev, ok := byName[crd.Name()]; ok && schema.Redefined(prev.crd, crd) {
			c.Results = append(c.Results, &framework.Result{
				Message: fmt.Sprintf("CustomResourceDefinition %s: defined twice, differently (%s and %s): the later one, of %s, is used",
					crd.Name(), prev.source, d.Source, d.Source),
				Severity: framework.Warning, ResourceRef: ref, File: &framework.File{Path: d.Source.File},
			})
		}
		byName[crd.Name()] = sourced{crd, d.Source}
		for _, e := range crd.Violations() {
			add(FindingNonStructural, &framework.Result{
				Message:     fmt.Sprintf("CustomResourceDefinition %s is not structural: %s", crd.Name(), e.ErrorBody()),
				ResourceRef: ref,
				Field:       &framework.Field{Path: e.Field},
				File:        &framework.File{Path: d.Source.File},
			})
		}
		// The mutability markers, which the server drops, from the CRD as written.
		m, errs := update.CRDSchemas(d.Object)
		markers[crd.GroupKind()] = m
		for _, e := range errs {
			add(FindingUpdate, &framework.Result{
				Message:     fmt.Sprintf("CustomResourceDefinition %s: misplaced mutability marker, not enforced: %s", crd.Name(), e.ErrorBody()),
				ResourceRef: ref,
				Field:       &framework.Field{Path: e.Field},
				File:        &framework.File{Path: d.Source.File},
			})
		}
		return nil
	}
	root, err := c.root()
	if err != nil {
		return nil, err
	}
	for _, p := range c.CRDPaths {
		docs, err := readPaths(p, root)
		if err != nil {
			return nil, fmt.Errorf("crdPaths: %v", err)
		}
		for _, d := range docs {
			if err := addCRD(d); err != nil {
				return nil, fmt.Errorf("crdPaths: %v", err)
			}
		}
	}
	previous := map[objectKey]*document.Document{}
	var bad []string // a previous object that matches nothing would let its update pass unchecked
	for _, p := range c.Previous {
		docs, err := readPaths(p, root)
		if err != nil {
			return nil, fmt.Errorf("previous: %v", err)
		}
		for _, d := range docs {
			if err := update.ValidateOld(d); err != nil {
				bad = append(bad, "previous: "+err.Error())
				continue
			}
			previous[keyOf(d.Object, false)] = d
		}
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "\n"))
	}

	// The items: CRDs first (about to be applied, they override the files).
	docs := make([]*document.Document, len(items))
	for i, item := range items {
		path, _, _ := kioutil.GetFileAnnotations(item)
		if path == "" {
			path = fmt.Sprintf("items[%d]", i)
		}
		s, err := item.String()
		if err != nil {
			return nil, err
		}
		ds, err := document.Read(strings.NewReader(s), path)
		if err != nil || len(ds) != 1 {
			return nil, fmt.Errorf("%s: reading the item: %v", path, err)
		}
		docs[i] = ds[0]
		for _, o := range ds[0].Objects() {
			if err := addCRD(o); err != nil {
				return nil, err
			}
		}
	}

	doPrune := c.Prune == nil || *c.Prune
	validators := update.Validators{}
	out := make([]*yaml.RNode, len(items))
	copy(out, items)
	for i, doc := range docs {
		if isFunctionConfig(items[i]) {
			continue // kustomize fn run and kpt pass the function's own config along
		}
		changed := false
		// The objects kubectl would send: a List's items one by one.
		for _, d := range doc.Objects() {
			original := d.Object // the object as written, before the edits of pruning
			opts := prune.Options{Defaults: c.Defaults}
			var old *document.Document
			if r := prune.Ref(original); r.APIVersion != "" && r.Kind != "" {
				if crd, ok := reg.Lookup(r.APIVersion, r.Kind); ok {
					old = previous[keyOf(original, crd.ClusterScoped())]
				}
			}
			if old == nil {
				// A create; an item with a previous version is validated as an update
				// (with ratcheting) below. The namespace of an item without one: "default".
				opts.Validate = validators
			}
			res, err := prune.Document(d, reg, opts)
			if err != nil {
				return nil, err
			}
			ref := &yaml.ResourceIdentifier{
				TypeMeta: yaml.TypeMeta{APIVersion: res.Object.APIVersion, Kind: res.Object.Kind},
				NameMeta: yaml.NameMeta{Name: res.Object.Name, Namespace: res.Object.Namespace},
			}
			file := &framework.File{Path: d.Source.File}
			if _, index, _ := kioutil.GetFileAnnotations(items[i]); index != "" {
				fmt.Sscan(index, &file.Index)
			}
			switch res.Status {
			case prune.MissingCRD:
				// A kind kubectl would not map is a bad item, like one that is not an object.
				if err := builtin.CheckKind(res.Object.APIVersion, res.Object.Kind); err != nil {
					return nil, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("%s: %v", res.Object, err)}
				}
				if !builtin.IsBuiltin(res.Object.APIVersion) {
					add(FindingMissingCRD, &framework.Result{
						Message:     fmt.Sprintf("no CustomResourceDefinition for %s, kind %s: not checked", res.Object.APIVersion, res.Object.Kind),
						ResourceRef: ref, File: file,
					})
				}
				continue
			case prune.IsCRD:
				continue
			}
			for _, ch := range res.Changes {
				if ch.Reason == prune.Defaulted && !c.Defaults {
					continue
				}
				add(FindingPrune, &framework.Result{
					Message:     fmt.Sprintf("%s %s", ch.Reason, describe(ch)),
					ResourceRef: ref,
					Field:       &framework.Field{Path: ch.Path, CurrentValue: ch.Value, ProposedValue: ch.NewValue},
					File:        file,
					Tags:        map[string]string{"reason": string(ch.Reason)},
				})
			}

			for _, e := range res.Errors {
				add(FindingInvalid, &framework.Result{
					Message:     "the server would refuse it: " + strings.TrimPrefix(e.Message, e.Field+": "),
					ResourceRef: ref,
					Field:       &framework.Field{Path: e.Field},
					File:        file,
					Tags:        map[string]string{"type": e.Type},
				})
			}

			crd, _ := reg.Lookup(res.Object.APIVersion, res.Object.Kind)
			if old != nil {
				findings, err := checkUpdate(old, original, crd, markers[crd.GroupKind()], validators)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", d.Source, err)
				}
				for _, f := range findings {
					add(FindingUpdate, &framework.Result{
						Message:     fmt.Sprintf("update refused: %s: %s (previous version: %s)", f.Rule, f.Message, old.Source),
						ResourceRef: ref,
						Field:       &framework.Field{Path: f.Path, CurrentValue: f.Old, ProposedValue: f.New},
						File:        file,
						Tags:        map[string]string{"rule": f.Rule},
					})
				}
			}

			changed = changed || len(res.Changes) > 0
		}
		lowered := false
		if c.LowerMutability {
			if lowered, err = c.lowerMutability(doc); err != nil {
				return nil, err
			}
		}
		if doPrune && changed || lowered {
			b, err := doc.Encode()
			if err != nil {
				return nil, err
			}
			node, err := yaml.Parse(string(b))
			if err != nil {
				return nil, fmt.Errorf("%s: the pruned item does not parse: %v", doc.Source.File, err)
			}
			out[i] = node
		}
	}
	sort.SliceStable(c.Results, func(i, j int) bool { return c.Results[i].Severity < c.Results[j].Severity })
	return out, nil
}

// checkUpdate is check-update on one object: what the server, and the
// mutability markers of its CRD file, refuse of updating old to new.
func checkUpdate(old *document.Document, new map[string]interface{}, crd *schema.CRD, markers crdMarkers, validators update.Validators) ([]update.Finding, error) {
	gv, err := runtimeschema.ParseGroupVersion(prune.Ref(new).APIVersion)
	if err != nil {
		return nil, err
	}
	v, err := validators.For(crd, gv.Version)
	if err != nil {
		return nil, err
	}
	out, err := update.Check(old.Object, new, crd, markers[gv.Version], v)
	if err != nil {
		return nil, err
	}
	return out.Refused, nil
}

// objectKey identifies an object across versions of its kind.
type objectKey struct {
	group, kind, namespace, name string
}

// keyOf is the object's key; a cluster-scoped kind has no namespace.
func keyOf(obj map[string]interface{}, clusterScoped bool) objectKey {
	ref := prune.Ref(obj)
	gv, _ := runtimeschema.ParseGroupVersion(ref.APIVersion)
	k := objectKey{gv.Group, ref.Kind, ref.Namespace, ref.Name}
	if clusterScoped {
		k.namespace = ""
	}
	return k
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

func describe(ch prune.Change) string {
	switch ch.Action {
	case prune.Removed:
		return fmt.Sprintf("%q removed", ch.Path)
	case prune.Added:
		return fmt.Sprintf("%q added", ch.Path)
	}
	return fmt.Sprintf("%q changed", ch.Path)
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
		return nil, fmt.Errorf("function config: %v", err)
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
	for _, f := range cfg.FailOn {
		switch f {
		case FindingPrune, FindingNonStructural, FindingUpdate, FindingMissingCRD, FindingInvalid:
		default:
			return nil, fmt.Errorf("function config: failOn: unknown finding %q (Prune, NonStructural, Update, MissingCRD, Invalid)", f)
		}
	}
	return cfg, nil
}
