// Package table computes the upgrade safety table of docs/upgrades.md: for
// each consecutive pair of releases of a project in the corpus's history/
// (../shared/corpus/README.md), check-update's verdict of the CRD upgrade
// and what it does to the project's samples (crs/<project>) that release N
// can store. It calls the engine as check-update does (crdupgrade.Compare
// with the server's CRD update validation, crdupgrade.Impact on every
// object, finding's words), so that hack/upgrades and the e2e test that
// confirms the table on a real API server read one computation.
package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// The verdicts of a pair, the worst first: check-update's checks of a CRD
// upgrade (finding.UpgradeChecks), and Safe when the comparison finds no
// change at all.
const (
	Breaking  = string(finding.Breaking)
	DataLoss  = string(finding.DataLoss)
	Invalid   = string(finding.Invalid)
	CRDChange = string(finding.CRDChange)
	Safe      = "Safe"
)

// Verdicts are every verdict, the worst first.
var Verdicts = []string{Breaking, DataLoss, Invalid, CRDChange, Safe}

// Release is one release of a project: its CRDs by name.
type Release struct {
	Project, Version string
	CRDs             map[string]*CRD
}

// CRD is a CRD of a release, as decoded and as written.
type CRD struct {
	CRD    *schema.CRD
	Raw    map[string]interface{}
	Source document.Source
}

// Upgrade is one CRD of a pair, in both releases.
type Upgrade struct {
	Name     string
	Old, New *CRD
	Changes  []crdupgrade.Change
	// Findings are the changes as check-update words them, one per
	// change; Tally counts the samples each hurts.
	Findings []finding.Finding
	Tally    *crdupgrade.Tally
}

// Sample is one sample object of the project, as the corpus ships it.
type Sample struct {
	Doc *document.Document
	Ref document.ObjectRef
}

// Checked is a sample that release N's CRD stores (created and valid
// under N), run through the upgrade of its CRD.
type Checked struct {
	Sample
	Upgrade *Upgrade
	Impact  *crdupgrade.ObjectImpact
	// Hurt are its findings of error severity (check-update's "Objects
	// hurt"): what it loses, and what would be refused.
	Hurt []finding.Finding
	// Unexplained is what it shows that no change of the upgrade explains.
	Unexplained []crdupgrade.Unexplained
}

// Pair is one consecutive pair of releases of a project.
type Pair struct {
	Project, From, To string
	// Verdict is the worst check of the changes of the pair's CRDs
	// (Verdicts), as check-update --strict judges them.
	Verdict  string
	Upgrades []*Upgrade
	// Added and Removed are the CRDs of one release only.
	Added, Removed []string
	// Samples are those of the project's samples release N stores;
	// Unstored counts the others of its kinds (refused by N's CRD, a
	// version N does not serve, no name, a kind N+1 no longer defines).
	Samples  []*Checked
	Unstored int
	// NoSamples: the corpus has no samples of the project at all.
	NoSamples bool
	// Refused are the CRDs of release N whose files the server refuses to
	// create (cert-manager's deploy/crds are Helm templates): the pair is
	// not one a cluster can have met with these files.
	Refused []string
}

// Hurt are the checked samples the upgrade hurts.
func (p *Pair) Hurt() []*Checked {
	var out []*Checked
	for _, c := range p.Samples {
		if len(c.Hurt) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Counts are the changes of the pair by check.
func (p *Pair) Counts() map[string]int {
	out := map[string]int{}
	for _, u := range p.Upgrades {
		for _, f := range u.Findings {
			out[string(f.Check)]++
		}
	}
	return out
}

// Compute reads the corpus in dir and computes every pair of every project
// of its history, by project, then release.
func Compute(dir string) ([]*Pair, error) {
	rows, err := readManifest(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		return nil, err
	}
	releases := map[string][]*Release{}
	byVersion := map[string]*Release{}
	samples := map[string][]string{}
	for _, r := range rows {
		switch {
		case r.kind == "crd" && strings.HasPrefix(r.local, "history/"):
			key := r.project + "@" + r.version
			rel := byVersion[key]
			if rel == nil {
				rel = &Release{Project: r.project, Version: r.version, CRDs: map[string]*CRD{}}
				byVersion[key] = rel
				releases[r.project] = append(releases[r.project], rel)
			}
			if err := readCRDs(dir, r.local, rel); err != nil {
				return nil, err
			}
		case r.kind == "cr" && strings.HasPrefix(r.local, "crs/"):
			samples[r.project] = append(samples[r.project], r.local)
		}
	}
	var projects []string
	for p := range releases {
		projects = append(projects, p)
	}
	sort.Strings(projects)
	var out []*Pair
	for _, project := range projects {
		rels := releases[project]
		sort.Slice(rels, func(i, j int) bool { return semverLess(rels[i].Version, rels[j].Version) })
		objs, err := readSamples(dir, samples[project])
		if err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(rels); i++ {
			p, err := comparePair(rels[i], rels[i+1], objs)
			if err != nil {
				return nil, err
			}
			p.NoSamples = len(samples[project]) == 0
			out = append(out, p)
		}
	}
	return out, nil
}

// comparePair compares the CRDs of two releases by name (a CRD's path may
// move: Cluster API v1.14), and runs the samples through the upgrades.
func comparePair(from, to *Release, samples []Sample) (*Pair, error) {
	p := &Pair{Project: from.Project, From: from.Version, To: to.Version}
	v := strategy.Validators{}
	for _, name := range sortedKeys(to.CRDs) {
		old, ok := from.CRDs[name]
		if !ok {
			p.Added = append(p.Added, name)
			continue
		}
		nw := to.CRDs[name]
		if errs, _ := v.ValidateCRDCreate(crdObject(old.Raw)); len(errs) > 0 {
			p.Refused = append(p.Refused, name)
		}
		u := &Upgrade{Name: name, Old: old, New: nw}
		u.Changes = crdupgrade.Compare(crdupgrade.CRD{CRD: old.CRD, Raw: old.Raw}, crdupgrade.CRD{CRD: nw.CRD, Raw: nw.Raw}, v)
		u.Tally = crdupgrade.NewTally(u.Changes)
		for _, ch := range u.Changes {
			u.Findings = append(u.Findings, finding.FromCRDChange(ch))
		}
		p.Upgrades = append(p.Upgrades, u)
	}
	for _, name := range sortedKeys(from.CRDs) {
		if _, ok := to.CRDs[name]; !ok {
			p.Removed = append(p.Removed, name)
		}
	}
	p.Verdict = Safe
	for _, u := range p.Upgrades {
		for _, f := range u.Findings {
			if rank(string(f.Check)) < rank(p.Verdict) {
				p.Verdict = string(f.Check)
			}
		}
	}
	byGK := map[string]*Upgrade{}
	for _, u := range p.Upgrades {
		byGK[u.Old.CRD.GroupKind().String()] = u
	}
	// The kinds of a CRD of one release only: their samples are not checked.
	onlyOne := map[string]bool{}
	for _, rel := range []*Release{from, to} {
		for _, c := range rel.CRDs {
			if gk := c.CRD.GroupKind().String(); byGK[gk] == nil {
				onlyOne[gk] = true
			}
		}
	}
	for _, s := range samples {
		if err := p.check(s, byGK, onlyOne, v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// check runs a sample through the upgrade of its CRD, when release N
// stores it; samples of other kinds (another project's, built-in kinds)
// are not counted.
func (p *Pair) check(s Sample, byGK map[string]*Upgrade, onlyOne map[string]bool, v strategy.Validators) error {
	_, gv, err := document.Identify(s.Doc)
	if err != nil {
		return nil
	}
	gk := gv.WithKind(s.Ref.Kind).GroupKind().String()
	u, ok := byGK[gk]
	if !ok {
		if onlyOne[gk] {
			p.Unstored++
		}
		return nil
	}
	if !Stores(u.Old.CRD, s, v) {
		p.Unstored++
		return nil
	}
	imp, err := crdupgrade.Impact(s.Doc, u.Old.CRD, u.New.CRD, v, "default")
	if err != nil {
		return fmt.Errorf("%s: %s %s to %s: %w", s.Doc.Source, p.Project, p.From, p.To, err)
	}
	c := &Checked{Sample: s, Upgrade: u, Impact: imp}
	c.Unexplained = u.Tally.Add(imp)
	for _, f := range finding.FromImpact(imp) {
		if f.Severity == finding.Error {
			c.Hurt = append(c.Hurt, f)
		}
	}
	p.Samples = append(p.Samples, c)
	return nil
}

// Stores says whether crd's server stores the sample: its version served,
// a name, and a create of it valid.
func Stores(crd *schema.CRD, s Sample, v strategy.Validators) bool {
	_, gv, err := document.Identify(s.Doc)
	if err != nil || s.Ref.Name == "" {
		return false
	}
	// The registry refuses a create that sets resourceVersion before any
	// validation ("resourceVersion should not be set on objects to be
	// created"): a sample copied from a cluster (Argo CD's test data).
	if rv, _, _ := unstructured.NestedFieldNoCopy(s.Doc.Object, "metadata", "resourceVersion"); rv != nil {
		return false
	}
	if ver, ok := crd.Version(gv.Version); !ok || !ver.Served {
		return false
	}
	created, err := prune.Store(s.Doc.Object, crd, gv.Version, true)
	if err != nil {
		return false
	}
	decoded := created.Object
	if created.Request != nil {
		decoded = created.Request
	}
	ns := s.Ref.Namespace
	if ns == "" {
		ns = "default"
	}
	errs, err := v.ValidateCreate(crd, gv.Version, decoded, ns)
	return err == nil && len(errs) == 0
}

func rank(verdict string) int {
	for i, v := range Verdicts {
		if v == verdict {
			return i
		}
	}
	return len(Verdicts)
}

// readCRDs adds the CRDs of a history file to rel, by name.
func readCRDs(dir, local string, rel *Release) error {
	data, err := os.ReadFile(filepath.Join(dir, local))
	if err != nil {
		return err
	}
	docs, err := document.Read(bytes.NewReader(data), local)
	if err != nil {
		return err
	}
	for _, d := range docs {
		ref := document.Ref(d.Object)
		if !schema.IsCRD(ref.APIVersion, ref.Kind) {
			continue
		}
		crd, ok, err := schema.DecodeObject(d.Object, nil)
		if err != nil || !ok {
			return fmt.Errorf("%s: %v", d.Source, err)
		}
		rel.CRDs[crd.Name()] = &CRD{CRD: crd, Raw: d.Object, Source: d.Source}
	}
	return nil
}

// readSamples reads the sample objects of files, in order; a file kubectl
// could not read (a template, a patch) holds none.
func readSamples(dir string, files []string) ([]Sample, error) {
	var out []Sample
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		docs, err := document.Read(bytes.NewReader(data), f)
		if err != nil {
			continue
		}
		for _, d := range docs {
			ref := document.Ref(d.Object)
			if ref.APIVersion == "" || ref.Kind == "" || schema.IsCRD(ref.APIVersion, ref.Kind) {
				continue
			}
			out = append(out, Sample{Doc: d, Ref: ref})
		}
	}
	return out, nil
}

// crdObject is a CRD as its file writes it, as a create sends it: the
// server defaults it itself.
func crdObject(raw map[string]interface{}) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if b, err := json.Marshal(raw); err == nil {
		_ = json.Unmarshal(b, crd)
	}
	return crd
}

type manifestRow struct{ project, version, local, kind string }

// readManifest reads the columns of MANIFEST.tsv the table needs.
func readManifest(name string) ([]manifestRow, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[h] = i
	}
	for _, h := range []string{"project", "version", "local_path", "kind"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: no column %q", name, h)
		}
	}
	var out []manifestRow
	for n, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if len(f) < len(col) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", name, n+2, len(f), len(col))
		}
		out = append(out, manifestRow{f[col["project"]], f[col["version"]], f[col["local_path"]], f[col["kind"]]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].local < out[j].local })
	return out, nil
}

// semverLess orders vMAJOR.MINOR.PATCH versions.
func semverLess(a, b string) bool {
	pa, pb := semverParts(a), semverParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return a < b
}

func semverParts(v string) [3]int {
	var out [3]int
	for i, s := range strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3) {
		n, _ := strconv.Atoi(strings.SplitN(s, "-", 2)[0])
		out[i] = n
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
