package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/serverpath"
)

// corpusCRD is a CRD of the corpus the server accepts and serves.
type corpusCRD struct {
	crd *serverpath.CRD
	js  []byte
	set string // <project>/<module>@<version>
}

// sample is a custom resource of the corpus the server accepts as it is.
type sample struct {
	obj  map[string]interface{}
	gk   runtimeschema.GroupKind
	from string // corpus path
}

// corpus is what the input set is made of: the CRDs that samples use and
// the samples, grouped by kind.
type corpus struct {
	crds    []*corpusCRD // sorted by name
	samples map[runtimeschema.GroupKind][]sample
	kinds   []runtimeschema.GroupKind // sorted
}

// manifestRow is a row of the corpus's MANIFEST.tsv.
type manifestRow struct {
	project, localPath, kind string
}

// setOf is <project>/<module>@<version> of a corpus path
// (crds/<project>/<module>@<version>/... or crs/...).
func setOf(localPath string) string {
	p := strings.Split(filepath.ToSlash(localPath), "/")
	if len(p) < 3 {
		return ""
	}
	return p[1] + "/" + p[2]
}

func readManifest(dir string) ([]manifestRow, error) {
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[h] = i
	}
	for _, h := range []string{"project", "local_path", "kind"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("MANIFEST.tsv: no column %q", h)
		}
	}
	var rows []manifestRow
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) < len(col) {
			continue
		}
		rows = append(rows, manifestRow{project: f[col["project"]], localPath: f[col["local_path"]], kind: f[col["kind"]]})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].localPath < rows[j].localPath })
	return rows, nil
}

// documents splits data as kubectl's resource builder does; each
// non-empty document as JSON. A file kubectl cannot read gives an error.
func documents(data []byte) ([][]byte, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out [][]byte
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		out = append(out, raw)
	}
}

// loadCorpus reads the corpus in dir: every CRD the server serves, and
// every sample the server accepts unchanged by its validation (schema, CEL
// rules, metadata), each with the CRD of its own module version first,
// else of its project, else of any. Only the CRDs some sample uses are
// kept, each kind once: of maxCRDs at most (0: all), the kinds with the
// most samples. projects limits the projects read (none: all).
func loadCorpus(dir string, projects []string, maxCRDs int) (*corpus, error) {
	all, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	var rows []manifestRow
	for _, r := range all {
		if len(projects) == 0 || slices.Contains(projects, r.project) {
			rows = append(rows, r)
		}
	}
	bySet := map[string]map[runtimeschema.GroupKind]*corpusCRD{}
	var sets []string
	for _, r := range rows {
		if r.kind != "crd" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.localPath)))
		if err != nil {
			return nil, err
		}
		docs, err := documents(data)
		if err != nil {
			continue
		}
		for _, js := range docs {
			crd, err := serverpath.DecodeCRD(js)
			if err != nil {
				continue // not a CRD, or one the server refuses or cannot serve
			}
			set := setOf(r.localPath)
			if bySet[set] == nil {
				bySet[set] = map[runtimeschema.GroupKind]*corpusCRD{}
				sets = append(sets, set)
			}
			bySet[set][crd.GroupKind()] = &corpusCRD{crd: crd, js: js, set: set}
		}
	}
	sort.Strings(sets)
	find := func(localPath string, gk runtimeschema.GroupKind) *corpusCRD {
		if c := bySet[setOf(localPath)][gk]; c != nil {
			return c
		}
		project := strings.SplitN(setOf(localPath), "/", 2)[0] + "/"
		for _, same := range []bool{true, false} {
			for _, s := range sets {
				if c := bySet[s][gk]; c != nil && strings.HasPrefix(s, project) == same {
					return c
				}
			}
		}
		return nil
	}

	c := &corpus{samples: map[runtimeschema.GroupKind][]sample{}}
	used := map[runtimeschema.GroupKind]*corpusCRD{}
	for _, r := range rows {
		if r.kind != "cr" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.localPath)))
		if err != nil {
			return nil, err
		}
		docs, err := documents(data)
		if err != nil {
			continue // templates, deliberately broken files
		}
		for _, js := range docs {
			var obj map[string]interface{}
			if utiljson.Unmarshal(js, &obj) != nil {
				continue
			}
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			gv, err := runtimeschema.ParseGroupVersion(apiVersion)
			if err != nil || kind == "" || strings.HasSuffix(kind, "List") {
				continue
			}
			gk := runtimeschema.GroupKind{Group: gv.Group, Kind: kind}
			cc := find(r.localPath, gk)
			if cc == nil || !cc.crd.Served(gv.Version) {
				continue
			}
			// A kind keeps the CRD its first sample found.
			if u := used[gk]; u != nil && u != cc {
				continue
			}
			if !accepted(cc.crd, obj) {
				continue
			}
			used[gk] = cc
			c.samples[gk] = append(c.samples[gk], sample{obj: obj, gk: gk, from: r.localPath})
		}
	}
	for gk := range used {
		c.kinds = append(c.kinds, gk)
	}
	sort.Slice(c.kinds, func(i, j int) bool {
		ki, kj := c.kinds[i], c.kinds[j]
		if ni, nj := len(c.samples[ki]), len(c.samples[kj]); ni != nj {
			return ni > nj
		}
		return ki.String() < kj.String()
	})
	if maxCRDs > 0 && len(c.kinds) > maxCRDs {
		for _, gk := range c.kinds[maxCRDs:] {
			delete(c.samples, gk)
		}
		c.kinds = c.kinds[:maxCRDs]
	}
	sort.Slice(c.kinds, func(i, j int) bool { return c.kinds[i].String() < c.kinds[j].String() })
	for _, gk := range c.kinds {
		c.crds = append(c.crds, used[gk])
	}
	sort.Slice(c.crds, func(i, j int) bool { return c.crds[i].crd.Object.Name < c.crds[j].crd.Object.Name })
	if len(c.kinds) == 0 {
		return nil, fmt.Errorf("%s: no sample the server accepts", dir)
	}
	return c, nil
}

// accepted reports whether the server takes obj as it is, and would still
// when it is renamed as the input set renames it: nothing pruned, not
// refused.
func accepted(crd *serverpath.CRD, obj map[string]interface{}) bool {
	if md, ok := obj["metadata"].(map[string]interface{}); !ok || (md["name"] == nil && md["generateName"] == nil) {
		return false
	}
	for _, o := range []map[string]interface{}{obj, variant(obj, 99999, false)} {
		o = runtime.DeepCopyJSON(o)
		unknown, err := crd.Coerce(o, false)
		if err != nil || len(unknown) > 0 {
			return false
		}
		errs, err := crd.ValidateCreate(o, "default")
		if err != nil || len(errs) > 0 {
			return false
		}
	}
	return true
}

// unknownField is the field added to about one object in ten: a typo no
// schema has.
const unknownField = "replicaz"

// revisionLabel tells the new objects of check-update from the old ones.
const revisionLabel = "bench.kubectl-crd.io/revision"

// variant is object i of the input set made from a sample: its own name
// (name-i), the revision label ("2"; "1" for the old objects), and for one
// object in ten an unknown field in spec (or at the top).
func variant(obj map[string]interface{}, i int, old bool) map[string]interface{} {
	o := runtime.DeepCopyJSON(obj)
	md, _ := o["metadata"].(map[string]interface{})
	base, _ := md["name"].(string)
	if base == "" {
		base, _ = md["generateName"].(string)
		base = strings.TrimSuffix(base, "-")
		delete(md, "generateName")
	}
	suffix := fmt.Sprintf("-%d", i)
	if len(base)+len(suffix) > 63 {
		base = strings.TrimRight(base[:63-len(suffix)], "-.")
	}
	md["name"] = base + suffix
	labels, _ := md["labels"].(map[string]interface{})
	if labels == nil {
		labels = map[string]interface{}{}
		md["labels"] = labels
	}
	labels[revisionLabel] = "2"
	if old {
		labels[revisionLabel] = "1"
	}
	if i%10 == 3 {
		if spec, ok := o["spec"].(map[string]interface{}); ok {
			spec[unknownField] = int64(3)
		} else {
			o[unknownField] = int64(3)
		}
	}
	return o
}

// inputSet is what hack/bench writes for a run.
type inputSet struct {
	Dir          string
	CRDDir       string // one file per CRD
	Objects      string // the objects, one YAML stream
	Old          string // the same objects, the revision label changed
	Empty        string // no objects: the index of the CRD files alone
	PerKind      string // the first object of each kind: the CRD load
	ResourceList string // the CRDs and the objects as one ResourceList
	SchemaDir    string // JSON schemas for kubeconform
	CRDs, Kinds  int
	N            int
	Unknown      int // objects with the unknown field
	Bytes        int64
	CRDBytes     int64
	Small        smallSet
	// krmList is the ResourceList of krm when -krm-objects makes one of
	// its own ("": ResourceList).
	krmList string
}

// smallSet is the small run: one object of the input set, checked against
// every CRD of CRDDir and against its own CRD's file alone, by prune and
// by the KRM function (standalone: a function config and the object).
type smallSet struct {
	Kind   string // its group kind, Kind.group
	Object string // small/object.yaml: the object, as objects.yaml has it
	OwnCRD string // the file of its CRD in CRDDir
	// The function configs, relative to Dir (the KRM function's paths are
	// the working directory's): crdPaths [crds/], and crdPaths [its CRD's file].
	KRMAll, KRMOwn string
}

// smallKindDefault is the kind of the small run: the ServiceMonitor of the
// Prometheus operator, a kind most clusters with CRDs have.
const smallKindDefault = "ServiceMonitor.monitoring.coreos.com"

// smallKind is the kind of the small run: want when the corpus has it,
// else the kind with the most samples.
func (c *corpus) smallKind(want string) (runtimeschema.GroupKind, int) {
	best := -1
	for i, gk := range c.kinds {
		if gk.String() == want {
			return gk, i
		}
		if best < 0 || len(c.samples[gk]) > len(c.samples[c.kinds[best]]) {
			best = i
		}
	}
	return c.kinds[best], best
}

// writeInputs writes n objects made from the corpus samples to dir: the
// kinds in turn, each kind's samples in turn; and the small run's files,
// for an object of kind smallKind (smallKindDefault when "").
func writeInputs(c *corpus, dir string, n int, smallKind string) (*inputSet, error) {
	in := &inputSet{
		Dir:          dir,
		CRDDir:       filepath.Join(dir, "crds"),
		Objects:      filepath.Join(dir, "objects.yaml"),
		Old:          filepath.Join(dir, "old.yaml"),
		Empty:        filepath.Join(dir, "empty.yaml"),
		PerKind:      filepath.Join(dir, "per-kind.yaml"),
		ResourceList: filepath.Join(dir, "resourcelist.yaml"),
		SchemaDir:    filepath.Join(dir, "schemas"),
		CRDs:         len(c.crds),
		Kinds:        len(c.kinds),
		N:            n,
	}
	if err := os.MkdirAll(in.CRDDir, 0o755); err != nil {
		return nil, err
	}
	var crdYAML [][]byte
	var crdFiles []string
	for i, cc := range c.crds {
		y, err := sigsyaml.JSONToYAML(cc.js)
		if err != nil {
			return nil, err
		}
		crdYAML = append(crdYAML, y)
		in.CRDBytes += int64(len(y))
		name := filepath.Join(in.CRDDir, fmt.Sprintf("%03d-%s.yaml", i, cc.crd.Object.Name))
		if err := os.WriteFile(name, y, 0o644); err != nil {
			return nil, err
		}
		crdFiles = append(crdFiles, name)
		if err := writeJSONSchemas(in.SchemaDir, cc.crd.Object); err != nil {
			return nil, fmt.Errorf("%s: %v", cc.crd.Object.Name, err)
		}
	}
	if err := os.WriteFile(in.Empty, nil, 0o644); err != nil {
		return nil, err
	}
	if smallKind == "" {
		smallKind = smallKindDefault
	}
	if err := writeSmall(c, in, crdFiles, smallKind); err != nil {
		return nil, err
	}
	files := map[string]*bufio.Writer{}
	var closers []*os.File
	for _, name := range []string{in.Objects, in.Old, in.ResourceList, in.PerKind} {
		f, err := os.Create(name)
		if err != nil {
			return nil, err
		}
		closers = append(closers, f)
		files[name] = bufio.NewWriterSize(f, 1<<20)
	}
	rl := files[in.ResourceList]
	fmt.Fprint(rl, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, y := range crdYAML {
		writeItem(rl, y)
	}
	for i := 0; i < n; i++ {
		gk := c.kinds[i%len(c.kinds)]
		ss := c.samples[gk]
		s := ss[(i/len(c.kinds))%len(ss)]
		if i%10 == 3 {
			in.Unknown++
		}
		for _, old := range []bool{false, true} {
			y, err := sigsyaml.Marshal(variant(s.obj, i, old))
			if err != nil {
				return nil, err
			}
			if old {
				fmt.Fprintf(files[in.Old], "---\n%s", y)
				continue
			}
			// A comment, as real files have: kept by kubectl crd's edits.
			fmt.Fprintf(files[in.Objects], "---\n# object %d, from %s\n%s", i, s.from, y)
			in.Bytes += int64(len(y))
			writeItem(rl, y)
		}
	}
	// The CRD load: every CRD used once, by the first object of its kind.
	for i, gk := range c.kinds {
		y, err := objectYAML(c, gk, i)
		if err != nil {
			return nil, err
		}
		files[in.PerKind].Write(y)
	}
	for _, name := range []string{in.Objects, in.Old, in.ResourceList, in.PerKind} {
		if err := files[name].Flush(); err != nil {
			return nil, err
		}
	}
	for _, f := range closers {
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// objectYAML is object i of the input set, of kind gk (i < the number of
// kinds: its first object), as objects.yaml has it.
func objectYAML(c *corpus, gk runtimeschema.GroupKind, i int) ([]byte, error) {
	s := c.samples[gk][0]
	y, err := sigsyaml.Marshal(variant(s.obj, i, false))
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "---\n# object %d, from %s\n%s", i, s.from, y), nil
}

// writeSmall writes the small run's files to small/ of in.Dir: the first
// object of the input set of the kind named want (else of the kind with
// the most samples), and the function configs of the KRM function.
func writeSmall(c *corpus, in *inputSet, crdFiles []string, want string) error {
	gk, i := c.smallKind(want)
	dir := filepath.Join(in.Dir, "small")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	y, err := objectYAML(c, gk, i)
	if err != nil {
		return err
	}
	sm := smallSet{Kind: gk.String(), Object: filepath.Join(dir, "object.yaml")}
	if err := os.WriteFile(sm.Object, y, 0o644); err != nil {
		return err
	}
	for j, cc := range c.crds {
		if cc.crd.GroupKind() == gk {
			sm.OwnCRD = crdFiles[j]
		}
	}
	if sm.OwnCRD == "" {
		return fmt.Errorf("small run: no CRD of %s", gk)
	}
	ownRel, err := filepath.Rel(in.Dir, sm.OwnCRD)
	if err != nil {
		return err
	}
	allRel, err := filepath.Rel(in.Dir, in.CRDDir)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name *string
		file string
		path string
	}{{&sm.KRMAll, "krm-all.yaml", allRel + "/"}, {&sm.KRMOwn, "krm-own.yaml", ownRel}} {
		*f.name = filepath.Join("small", f.file)
		config := fmt.Sprintf("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nmetadata:\n  name: bench\ncrdPaths: [%s]\n", filepath.ToSlash(f.path))
		if err := os.WriteFile(filepath.Join(in.Dir, *f.name), []byte(config), 0o644); err != nil {
			return err
		}
	}
	in.Small = sm
	return nil
}

// writeItem writes a YAML document as an item of a ResourceList's items.
func writeItem(w *bufio.Writer, y []byte) {
	lines := strings.Split(strings.TrimRight(string(y), "\n"), "\n")
	for i, l := range lines {
		switch {
		case i == 0:
			w.WriteString("- ")
		case l == "":
			w.WriteString("\n")
			continue
		default:
			w.WriteString("  ")
		}
		w.WriteString(l)
		w.WriteByte('\n')
	}
}
