package crdupgrade_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

var update = flag.Bool("update", false, "rewrite the golden files of the corpus upgrades")

// corpusCRDs reads the CRDs of one release of a corpus project, by name.
func corpusCRDs(t *testing.T, dir, project, set string) map[string]crdupgrade.CRD {
	t.Helper()
	out := map[string]crdupgrade.CRD{}
	for _, f := range corpus.CRDFiles(t, dir) {
		if f.Project != project || f.Set() != set {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, f.LocalPath))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := document.Read(bytes.NewReader(data), f.LocalPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			// As stored in a cluster: a v1beta1 CRD is validated as the
			// server validates a rewrite of it.
			c, ok, err := schema.FromObject(d.Object, strategy.Validators{})
			if err != nil {
				t.Fatalf("%s: %v", d.Source, err)
			}
			if ok {
				out[c.Name()] = crdupgrade.CRD{CRD: c, Raw: d.Object}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no CRDs of %s %s in the corpus", project, set)
	}
	return out
}

// The corpus's real upgrades: every change of every CRD both releases
// define, worded, against testdata/<project>.golden. The goldens were
// reviewed change by change when written (see testdata/README.md); -update
// rewrites them, for another review.
func TestCorpusUpgrades(t *testing.T) {
	dir := corpus.Dir(t)
	for _, tc := range []struct{ project, old, new string }{
		{"prometheus-operator", "old-prometheus-operator@v0.38.0", "prometheus-operator@v0.85.0"},
		{"argo-cd", "old-argo-cd@v1.8.7", "argo-cd@v3.6.1"},
	} {
		t.Run(tc.project, func(t *testing.T) {
			old, new := corpusCRDs(t, dir, tc.project, tc.old), corpusCRDs(t, dir, tc.project, tc.new)
			var names []string
			for n := range old {
				names = append(names, n)
			}
			sort.Strings(names)
			var b strings.Builder
			for _, name := range names {
				n, ok := new[name]
				if !ok {
					fmt.Fprintf(&b, "%s: not in %s\n", name, tc.new)
					continue
				}
				changes := crdupgrade.Compare(old[name], n, strategy.Validators{})
				fmt.Fprintf(&b, "%s: %d changes\n", name, len(changes))
				for _, ch := range changes {
					f := finding.FromCRDChange(ch)
					fmt.Fprintf(&b, "  %s %s: %s\n", ch.Severity, ch.Kind, f.Message)
				}
			}
			objectImpacts(t, &b, dir, tc.project, tc.old, old, new)
			golden := filepath.Join("testdata", tc.project+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// objectImpacts runs the upgrade on the samples of the old release: per
// change, the objects it hurts; per object, what it loses and why it is
// refused; and what no change explains.
func objectImpacts(t *testing.T, b *strings.Builder, dir, project, set string, old, new map[string]crdupgrade.CRD) {
	t.Helper()
	byKind := map[string]string{}
	for name, c := range old {
		byKind[c.CRD.GroupKind().String()] = name
	}
	perCRD := map[string][]*crdupgrade.ObjectImpact{}
	for _, f := range corpus.CRFiles(t, dir) {
		if f.Project != project || f.Set() != set {
			continue
		}
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			fmt.Fprintf(b, "%s: not read: %v\n", f.LocalPath, err)
			continue
		}
		for _, d := range docs {
			apiVersion, _ := d.Object["apiVersion"].(string)
			kind, _ := d.Object["kind"].(string)
			c, ok := old[byKind[groupKind(apiVersion, kind)]]
			if !ok {
				continue
			}
			n, ok := new[c.CRD.Name()]
			if !ok {
				continue
			}
			imp, err := crdupgrade.Impact(d, c.CRD, n.CRD, strategy.Validators{}, "default")
			if err != nil {
				fmt.Fprintf(b, "%s: not checked: %v\n", d.Source, err)
				continue
			}
			perCRD[c.CRD.Name()] = append(perCRD[c.CRD.Name()], imp)
		}
	}
	var names []string
	for n := range perCRD {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		impacts := perCRD[name]
		changes := crdupgrade.Compare(old[name], new[name], strategy.Validators{})
		tally := crdupgrade.NewTally(changes)
		fmt.Fprintf(b, "%s: %d sample objects\n", name, len(impacts))
		var unexplained []string
		for _, imp := range impacts {
			for _, u := range tally.Add(imp) {
				unexplained = append(unexplained, fmt.Sprintf("  UNEXPLAINED %s: %s %s\n", imp.Source, u.What, u.Path))
			}
		}
		for _, a := range tally.Affected() {
			if len(a.Objects) == 0 {
				continue
			}
			fmt.Fprintf(b, "  %s %s %s %s: %d objects\n", a.Change.Severity, a.Change.Kind, a.Change.Version, a.Change.Path, len(a.Objects))
		}
		for _, imp := range impacts {
			for _, c := range imp.Changes {
				fmt.Fprintf(b, "  %s: %s %s %s\n", imp.Source, c.Reason, c.Action, c.Path)
			}
			for _, e := range imp.Errors {
				fmt.Fprintf(b, "  %s: refused: %s\n", imp.Source, e.Message)
			}
			for _, e := range imp.UpdateErrors {
				fmt.Fprintf(b, "  %s: refused on a no-op update: %s\n", imp.Source, e.Message)
			}
			if len(imp.Before) > 0 {
				fmt.Fprintf(b, "  %s: already refused under the old CRD (%d errors)\n", imp.Source, len(imp.Before))
			}
		}
		for _, u := range unexplained {
			b.WriteString(u)
		}
	}
}

func groupKind(apiVersion, kind string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group = ""
	}
	return kind + "." + group
}
