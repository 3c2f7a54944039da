// Package filter is kubectl crd as a KRM function (kyaml fn/framework): the
// engine over a ResourceList, for kustomize, kpt and pipelines, before apply.
package filter

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// The function config's type.
const (
	APIVersion = "crd.kubectl.dev/v1alpha1"
	Kind       = "CRDCheck"
)

// Finding kinds, for failOn.
const (
	FindingPrune         = "Prune"
	FindingNonStructural = "NonStructural"
	FindingMissingCRD    = "MissingCRD"
)

// CRDCheck is the function config.
type CRDCheck struct {
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Metadata   map[string]interface{} `json:"metadata,omitempty"`
	// CRDPaths are CRD files or directories, relative to the working
	// directory (kustomize runs exec functions in the kustomization's).
	CRDPaths []string `json:"crdPaths,omitempty"`
	// Prune removes what the server would drop (default true), keeping
	// comments and key order.
	Prune *bool `json:"prune,omitempty"`
	// Defaults also writes the schemas' defaults into the objects.
	Defaults bool `json:"defaults,omitempty"`
	// FailOn lists the findings that are errors (default NonStructural);
	// the others are warnings.
	FailOn []string `json:"failOn,omitempty"`
}

// Processor runs the checks of its function config over a ResourceList.
type Processor struct{}

var _ framework.ResourceListProcessor = Processor{}

// Process prunes the items and reports findings as results; any result of
// error severity fails the function.
func (Processor) Process(rl *framework.ResourceList) error {
	cfg, err := readConfig(rl.FunctionConfig)
	if err != nil {
		return err
	}
	fail := map[string]bool{}
	for _, f := range cfg.FailOn {
		fail[f] = true
	}
	severity := func(finding string) framework.Severity {
		if fail[finding] {
			return framework.Error
		}
		return framework.Warning
	}

	reg := schema.NewRegistry()
	var results framework.Results
	addCRD := func(c *schema.CRD, file string) {
		reg.Add(c)
		for _, e := range c.Violations() {
			results = append(results, &framework.Result{
				Message:     fmt.Sprintf("CustomResourceDefinition %s is not structural: %s", c.Name(), e.Error()),
				Severity:    severity(FindingNonStructural),
				ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: c.Object.APIVersion, Kind: "CustomResourceDefinition"}, NameMeta: yaml.NameMeta{Name: c.Name()}},
				Field:       &framework.Field{Path: e.Field},
				File:        &framework.File{Path: file},
				Tags:        map[string]string{"finding": FindingNonStructural},
			})
		}
	}
	for _, p := range cfg.CRDPaths {
		files, err := document.Files(p, true)
		if err != nil {
			return fmt.Errorf("crdPaths: %v", err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("crdPaths: %v", err)
			}
			docs, err := document.Read(bytes.NewReader(data), f)
			if err != nil {
				return fmt.Errorf("crdPaths: %v", err)
			}
			for _, d := range docs {
				if err := addDocCRD(d, f, addCRD); err != nil {
					return err
				}
			}
		}
	}
	// The items: CRDs first (about to be applied, they override the files).
	docs := make([]*document.Document, len(rl.Items))
	for i, item := range rl.Items {
		path, _, _ := kioutil.GetFileAnnotations(item)
		if path == "" {
			path = fmt.Sprintf("items[%d]", i)
		}
		s, err := item.String()
		if err != nil {
			return err
		}
		ds, err := document.Read(strings.NewReader(s), path)
		if err != nil || len(ds) != 1 {
			return fmt.Errorf("%s: reading the item: %v", path, err)
		}
		docs[i] = ds[0]
		if err := addDocCRD(ds[0], path, addCRD); err != nil {
			return err
		}
	}

	doPrune := cfg.Prune == nil || *cfg.Prune
	for i, d := range docs {
		res, err := prune.Document(d, reg, prune.Options{Defaults: cfg.Defaults})
		if err != nil {
			return err
		}
		ref := &yaml.ResourceIdentifier{
			TypeMeta: yaml.TypeMeta{APIVersion: res.Object.APIVersion, Kind: res.Object.Kind},
			NameMeta: yaml.NameMeta{Name: res.Object.Name, Namespace: res.Object.Namespace},
		}
		file := &framework.File{Path: d.Source.File}
		if _, index, _ := kioutil.GetFileAnnotations(rl.Items[i]); index != "" {
			fmt.Sscan(index, &file.Index)
		}
		if isFunctionConfig(rl.Items[i]) {
			continue // kustomize fn run and kpt pass the function's own config along
		}
		switch res.Status {
		case prune.MissingCRD:
			if !builtin.IsBuiltin(res.Object.APIVersion) {
				results = append(results, &framework.Result{
					Message:     fmt.Sprintf("no CustomResourceDefinition for %s, kind %s: not checked", res.Object.APIVersion, res.Object.Kind),
					Severity:    severity(FindingMissingCRD),
					ResourceRef: ref, File: file,
					Tags: map[string]string{"finding": FindingMissingCRD},
				})
			}
			continue
		case prune.IsCRD:
			continue
		}
		for _, ch := range res.Changes {
			if ch.Reason == prune.Defaulted && !cfg.Defaults {
				continue
			}
			results = append(results, &framework.Result{
				Message:     fmt.Sprintf("%s %s", ch.Reason, describe(ch)),
				Severity:    severity(FindingPrune),
				ResourceRef: ref,
				Field:       &framework.Field{Path: ch.Path, CurrentValue: ch.Value, ProposedValue: ch.NewValue},
				File:        file,
				Tags:        map[string]string{"finding": FindingPrune, "reason": string(ch.Reason)},
			})
		}
		if doPrune && len(res.Changes) > 0 {
			b, err := d.Encode()
			if err != nil {
				return err
			}
			node, err := yaml.Parse(string(b))
			if err != nil {
				return fmt.Errorf("%s: the pruned item does not parse: %v", d.Source.File, err)
			}
			rl.Items[i] = node
		}
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Severity < results[j].Severity })
	rl.Results = append(rl.Results, results...)
	for _, r := range results {
		if r.Severity == framework.Error {
			return rl.Results
		}
	}
	return nil
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

func addDocCRD(d *document.Document, file string, add func(*schema.CRD, string)) error {
	c, ok, err := schema.FromObject(d.Object)
	if err != nil {
		return fmt.Errorf("%s: %v", d.Source, err)
	}
	if ok {
		add(c, file)
	}
	return nil
}

func readConfig(fc *yaml.RNode) (*CRDCheck, error) {
	cfg := &CRDCheck{}
	if fc == nil {
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
		cfg.FailOn = []string{FindingNonStructural}
	}
	for _, f := range cfg.FailOn {
		switch f {
		case FindingPrune, FindingNonStructural, FindingMissingCRD:
		default:
			return nil, fmt.Errorf("function config: failOn: unknown finding %q (Prune, NonStructural, MissingCRD)", f)
		}
	}
	return cfg, nil
}
