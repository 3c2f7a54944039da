package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// The release a chart is rendered as: fixed, so that a chart renders the
// same everywhere (docs/sources.md).
const (
	releaseName      = "kubectl-crd"
	releaseNamespace = "default"
)

// maxValuesBytes bounds a values file: read whole, as every small file a
// run is given by name.
var maxValuesBytes int64 = fileread.MaxBytes

type renderOptions struct {
	build, chart, out string
	root              string
	set, values       []string
}

// render writes the files of the chart that hold CRDs, crds/ first (as
// Helm installs them), then the rendered templates, each in name order.
func render(o renderOptions) ([]outputFile, error) {
	// Its errors do not name the chart: kubectl-crd names it by its
	// source (--chart is the cache's file of a remote chart).
	ch, err := loadChart(o.chart, o.root)
	if err != nil {
		return nil, inputError{err}
	}
	if err := checkDependencies(ch); err != nil {
		return nil, inputError{err}
	}
	vals, err := userValues(o)
	if err != nil {
		return nil, inputError{err}
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, inputError{fmt.Errorf("the chart's dependencies: %w", err)}
	}
	opts := common.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true}
	top, err := util.ToRenderValues(ch, vals, opts, common.DefaultCapabilities.Copy())
	if err != nil {
		return nil, inputError{fmt.Errorf("the values: %w", err)}
	}
	rendered, err := engine.Render(ch, top)
	if err != nil {
		return nil, inputError{fmt.Errorf("rendering the chart: %w", err)}
	}
	var crds, templates []outputFile
	contents := map[string][]byte{}
	for _, c := range ch.CRDObjects() {
		name := inChart(c.Filename)
		contents[name] = c.File.Data
		crds = append(crds, outputFile{Name: name})
	}
	for k, v := range rendered {
		name := inChart(k)
		if !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(name)) {
			continue
		}
		contents[name] = []byte(v)
		templates = append(templates, outputFile{Name: name})
	}
	byName := func(a, b outputFile) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(crds, byName)
	slices.SortFunc(templates, byName)
	var out []outputFile
	for _, f := range append(crds, templates...) {
		data, ok := onlyCRDs(contents[f.Name])
		if !ok {
			continue
		}
		f.File = strconv.Itoa(len(out)) + ".yaml"
		if err := os.WriteFile(filepath.Join(o.out, f.File), data, 0o644); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// checkDependencies refuses a chart whose Chart.yaml names dependencies
// that are not in its charts/, as helm install does (action.CheckDependencies,
// which we do not import: pkg/action would bring Helm's cluster client),
// by name and whatever their conditions say. Rendered without them, a
// template fails on a nil value, or the chart renders without their CRDs.
func checkDependencies(ch *chart.Chart) error {
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		if !have[d.Name] {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the chart's dependencies: found in Chart.yaml, but missing in charts/ directory: %s; 'helm dependency build' fetches them", strings.Join(missing, ", "))
	}
	return nil
}

// inChart is a file's path within the chart: Helm names it with the
// chart's name first (mychart/charts/sub/crds/a.yaml).
func inChart(name string) string {
	name = filepath.ToSlash(name)
	if _, rest, ok := strings.Cut(name, "/"); ok {
		return rest
	}
	return name
}

// userValues are the values files merged in order, then each --set, as
// helm install reads them.
func userValues(o renderOptions) (map[string]any, error) {
	base := map[string]any{}
	for _, f := range o.values {
		data, err := fileread.ReadLimit(f, maxValuesBytes)
		if err != nil {
			return nil, err
		}
		m, err := loader.LoadValues(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		base = loader.MergeMaps(base, m)
	}
	for _, s := range o.set {
		if err := strvals.ParseInto(s, base); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return base, nil
}

// onlyCRDs is a file with every document that is not a CRD blanked, line
// for line; false when it holds no CRD. A document that does not parse is
// kept, for kubectl-crd to report where it is.
func onlyCRDs(data []byte) ([]byte, bool) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out bytes.Buffer
	found := false
	flush := func(doc [][]byte) {
		keep, crd := isCRD(bytes.Join(doc, nil))
		found = found || crd
		for _, l := range doc {
			if keep {
				out.Write(l)
			} else if bytes.HasSuffix(l, []byte("\n")) {
				out.WriteByte('\n')
			}
		}
	}
	var doc [][]byte
	for _, l := range lines {
		if isSeparator(l) {
			flush(doc)
			doc = nil
			out.Write(l)
			continue
		}
		doc = append(doc, l)
	}
	flush(doc)
	return out.Bytes(), found
}

func isSeparator(l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("---"))
	rest = bytes.TrimSpace(rest)
	return ok && (len(rest) == 0 || rest[0] == '#')
}

// isCRD says whether a document is kept (a CRD, or one that does not
// parse) and whether it is a CRD.
func isCRD(doc []byte) (keep, crd bool) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return false, false
	}
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return true, false
	}
	crd = tm.Kind == "CustomResourceDefinition" && strings.HasPrefix(tm.APIVersion, "apiextensions.k8s.io/")
	return crd, crd
}
