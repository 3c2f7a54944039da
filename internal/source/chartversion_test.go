package source

import (
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/version"
)

// realChartVersions are versions of real charts, each chart's in the order
// of its repository's index.yaml: Rancher's elemental (release numbers of
// three digits, the upstream version as build metadata) and cert-manager
// (a "v", a pre-release above the newest release).
var realChartVersions = map[string][]string{
	"elemental": {"108.1.0+up1.8.1", "108.0.0+up1.7.4", "107.1.1+up1.7.4", "107.1.0+up1.7.3", "107.0.1+up1.6.10",
		"107.0.0+up1.6.9", "106.1.1+up1.7.4", "106.1.0+up1.7.3", "106.0.2+up1.6.10", "106.0.1+up1.6.9",
		"106.0.0+up1.6.5", "105.1.0+up1.7.3", "105.0.2+up1.6.9", "105.0.1+up1.6.5"},
	"cert-manager": {"v1.15.0-alpha.0", "v1.14.5", "v1.14.4", "v1.13.6"},
}

// Forms of versions Helm reads or refuses, beyond those of real charts.
var chartVersionForms = []string{
	"1.2.3", "v1.2.3", "1.2", "1", "v2", "01.02.03", "1.10.0", "1.9.0", "10.0.0",
	"1.2.3-rc.1", "1.2.3-rc.10", "1.2.3-0", "1.2.3-01", "1.2.3-rc.01", "1.2.3-alpha-1",
	"1.2.3+build", "1.2.3+build-1", "2.0.0+build-1", "1.2.3+up1.0.0-rc1", "1.2.3-rc.1+build",
	"1.2.3.4", "latest", "", "v", "1.2.3-", "1.2.3+", "1..2", " 1.2.3", "V1.2.3",
	"99999999999999999999.0.0", "1.2.3-" + strings.Repeat("x", 260),
}

// helmVersion is how Helm reads a version: Masterminds/semver's
// NewVersion, as repo.IndexFile.Get and ChartVersions.Less call it.
func helmVersion(s string) (*semver.Version, bool) {
	v, err := semver.NewVersion(s)
	return v, err == nil
}

func allChartVersions() []string {
	out := append([]string{}, chartVersionForms...)
	for _, vs := range realChartVersions {
		out = append(out, vs...)
	}
	return out
}

// parseChartVersion reads a version exactly when Helm does, with the same
// pre-release, and orders those that are not pre-releases as Helm does.
func TestChartVersionsAsHelm(t *testing.T) {
	all := allChartVersions()
	for _, s := range all {
		v, ok := parseChartVersion(s)
		hv, hok := helmVersion(s)
		if ok != hok {
			t.Errorf("%q: read %v, Helm %v", s, ok, hok)
			continue
		}
		if ok && v.pre != hv.Prerelease() {
			t.Errorf("%q: pre-release %q, Helm's %q", s, v.pre, hv.Prerelease())
		}
	}
	for _, a := range all {
		for _, b := range all {
			va, oka := parseChartVersion(a)
			vb, okb := parseChartVersion(b)
			if !oka || !okb || va.pre != "" || vb.pre != "" {
				continue
			}
			ha, _ := helmVersion(a)
			hb, _ := helmVersion(b)
			if got, want := va.compare(vb), ha.Compare(hb); got != want {
				t.Errorf("compare(%q, %q) = %d, Helm's %d", a, b, got, want)
			}
		}
	}
}

// helmChooses is the version Helm installs when none is asked for: the
// highest that meets the constraint "*" (no pre-release; of those equal,
// the first, as Helm's sort keeps short lists).
func helmChooses(versions []string) string {
	any, _ := semver.NewConstraint("*")
	var best *semver.Version
	chosen := ""
	for _, s := range versions {
		v, ok := helmVersion(s)
		if ok && any.Check(v) && (best == nil || v.GreaterThan(best)) {
			best, chosen = v, s
		}
	}
	return chosen
}

// Of real charts' versions, and of each form with the others, the version
// chosen when none is asked for is Helm's; as strings, or with the
// pre-releases, it would not be (so these cases tell).
func TestChooseEntryAsHelm(t *testing.T) {
	cases := map[string][]string{}
	for chart, vs := range realChartVersions {
		cases[chart] = vs
	}
	for _, form := range chartVersionForms {
		cases[fmt.Sprintf("%q among 1.9.0, 1.2.3-rc.1", form)] = []string{"1.9.0", form, "1.2.3-rc.1"}
	}
	want := map[string]string{"elemental": "108.1.0+up1.8.1", "cert-manager": "v1.14.5"}
	for name, vs := range cases {
		var entries []indexEntry
		for _, v := range vs {
			entries = append(entries, indexEntry{Version: v, URLs: []string{"chart-" + v + ".tgz"}})
		}
		helm := helmChooses(vs)
		if w, ok := want[name]; ok && helm != w {
			t.Fatalf("%s: Helm chooses %q, want %q", name, helm, w)
		}
		e, err := chooseEntry(entries, "chart", "")
		if err != nil || e.Version != helm {
			t.Errorf("%s: chose %q (%v), Helm %q", name, e.Version, err, helm)
		}
	}
}

// apimachinery's version package, linked already, does not read chart
// versions as Helm: its semantic versions refuse what Helm reads, and its
// generic ones read what Helm refuses and order a pre-release as its
// release. chartVersion's comment says so; this test tells when it is no
// longer true.
func TestChartVersionsNotApimachinery(t *testing.T) {
	for _, s := range []string{"1.2", "1", "01.02.03"} {
		if _, ok := helmVersion(s); !ok {
			t.Fatalf("Helm refuses %q", s)
		}
		if _, err := version.ParseSemantic(s); err == nil {
			t.Errorf("ParseSemantic reads %q now, as Helm does", s)
		}
	}
	if _, ok := helmVersion("1.2.3.4"); ok {
		t.Fatalf("Helm reads 1.2.3.4")
	}
	if _, err := version.ParseGeneric("1.2.3.4"); err != nil {
		t.Errorf("ParseGeneric refuses 1.2.3.4 now, as Helm does: %v", err)
	}
	rc, err := version.ParseGeneric("1.0.0-rc.1")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rc.Compare("1.0.0"); err != nil || c != 0 {
		t.Errorf("ParseGeneric orders 1.0.0-rc.1 against 1.0.0 as %d (%v) now, not as equal", c, err)
	}
}
