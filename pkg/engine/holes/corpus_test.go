package holes_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/holes"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// corpusCRDs are the CRDs of the corpus whose rules mention oldSelf, by
// project.
func corpusCRDs(t *testing.T) map[string][]map[string]interface{} {
	dir := corpus.Dir(t)
	out := map[string][]map[string]interface{}{}
	for _, f := range corpus.Sample(t, corpus.CRDFiles(t, dir)) {
		data, err := os.ReadFile(filepath.Join(dir, f.LocalPath))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("oldSelf")) {
			continue
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj map[string]interface{}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f.LocalPath, err)
			}
			if obj != nil && obj["kind"] == "CustomResourceDefinition" {
				out[f.Project] = append(out[f.Project], obj)
			}
		}
	}
	return out
}

// TestCorpus runs the search on every CRD of the corpus with a transition
// rule: no error on a CRD the server accepts, every hole with the rule that
// closes it checked, and the counts per project logged (a sample, every
// set read, unless KUBECTL_CRD_CORPUS_ALL=1).
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus takes a while")
	}
	byProject := corpusCRDs(t)
	projects := make([]string, 0, len(byProject))
	for p := range byProject {
		projects = append(projects, p)
	}
	sort.Strings(projects)
	lines := []string{"| project | CRDs | fields | immutable | leaky | not analysed | holes |", "|---|---:|---:|---:|---:|---:|---:|"}
	var total [6]int
	var oldSelfRules, read int
	for _, p := range projects {
		crds := map[string]bool{}
		verdicts := map[string]string{}
		holeCount := map[string]int{}
		for _, obj := range byProject[p] {
			rep, err := holes.Analyze(obj, strategy.Validators{})
			if err != nil {
				t.Logf("%s: not analysed: %v", p, err)
				continue
			}
			oldSelfRules += countOldSelf(obj)
			for _, f := range rep.Fields {
				if strings.HasPrefix(f.Rule, "x-kubernetes-validations: ") {
					read++
				}
				crds[rep.CRD] = true
				key := rep.CRD + " " + f.Version + " " + f.Field
				// A field leaks if it leaks in any release of the project.
				if verdicts[key] != holes.Leaks {
					verdicts[key] = f.Verdict
				}
				holeCount[key] = max(holeCount[key], len(f.Holes))
				if f.Verdict == holes.NotAnalysed {
					t.Logf("%s %s: not analysed: %s", p, key, f.Reason)
				}
				for _, h := range f.Holes {
					if h.Fix == nil || h.Fix.Err != "" && !strings.Contains(h.Fix.Err, "cost budget") {
						t.Errorf("%s %s %s: %s: no checked fix: %+v", p, rep.CRD, f.Field, h.Kind, h.Fix)
					}
				}
			}
		}
		count := map[string]int{}
		n := 0
		for k, v := range verdicts {
			count[v]++
			n += holeCount[k]
		}
		row := [6]int{len(crds), len(verdicts), count[holes.Immutable], count[holes.Leaks], count[holes.NotAnalysed], n}
		for i := range row {
			total[i] += row[i]
		}
		lines = append(lines, fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d |", p, row[0], row[1], row[2], row[3], row[4], row[5]))
	}
	lines = append(lines, fmt.Sprintf("| **all** | %d | %d | %d | %d | %d | %d |", total[0], total[1], total[2], total[3], total[4], total[5]))
	t.Logf("%d rules with oldSelf in the CRDs analysed (each release), %d of them read as meant to make a field immutable\n%s", oldSelfRules, read, strings.Join(lines, "\n"))
}

// countOldSelf counts the x-kubernetes-validations rules that mention
// oldSelf anywhere in v.
func countOldSelf(v interface{}) int {
	n := 0
	switch v := v.(type) {
	case map[string]interface{}:
		for k, x := range v {
			if k == "x-kubernetes-validations" {
				rules, _ := x.([]interface{})
				for _, r := range rules {
					r, _ := r.(map[string]interface{})
					if rule, _ := r["rule"].(string); strings.Contains(rule, "oldSelf") {
						n++
					}
				}
				continue
			}
			n += countOldSelf(x)
		}
	case []interface{}:
		for _, x := range v {
			n += countOldSelf(x)
		}
	}
	return n
}
