package release

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testSums are stand-in checksums, a distinct valid one per released
// archive, for checking the template without building.
func testSums() (map[string]string, map[Platform]string) {
	byArchive, byPlatform := map[string]string{}, map[Platform]string{}
	for i, p := range Platforms {
		sum := fmt.Sprintf("%064x", i+1)
		byArchive[p.Archive()], byPlatform[p] = sum, sum
	}
	return byArchive, byPlatform
}

func readTemplate(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", ManifestTemplate))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// renderedTemplate is the repository's template rendered for v1.2.3 and testSums.
func renderedTemplate(t *testing.T) []byte {
	t.Helper()
	sums, _ := testSums()
	out, err := RenderManifest(ManifestTemplate, readTemplate(t), "v1.2.3", sums)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRepositoryManifestTemplate(t *testing.T) {
	// The template itself is YAML of the manifest's shape, placeholders quoted.
	tmpl, err := ParseManifest(readTemplate(t))
	if err != nil {
		t.Fatalf("%s does not parse as a manifest before rendering: %v", ManifestTemplate, err)
	}
	if tmpl.Spec.Version != "{{ .Version }}" {
		t.Errorf("template version = %q, want the placeholder {{ .Version }}", tmpl.Spec.Version)
	}
	for i, pl := range tmpl.Spec.Platforms {
		if !strings.Contains(pl.Sha256, "{{ sha256 ") || !strings.Contains(pl.URI, "{{ .Version }}") {
			t.Errorf("template platform %d: sha256 %q and uri %q must be placeholders", i, pl.Sha256, pl.URI)
		}
	}

	p, err := ParseManifest(renderedTemplate(t))
	if err != nil {
		t.Fatalf("rendered %s: %v", ManifestTemplate, err)
	}
	if errs := ValidateManifest("crd.yaml", p, Platforms); len(errs) > 0 {
		t.Errorf("rendered %s is not a valid krew manifest:\n%v", ManifestTemplate, errs.ToAggregate())
	}
	_, sums := testSums()
	if errs := ManifestFor(p, sums); len(errs) > 0 {
		t.Errorf("rendered %s does not name the archives make dist builds:\n%v", ManifestTemplate, errs.ToAggregate())
	}
	if p.Name != "crd" || p.Spec.Version != "v1.2.3" || p.Spec.Homepage != "https://github.com/kubectl-crd/kubectl-crd" {
		t.Errorf("name %q, version %q, homepage %q", p.Name, p.Spec.Version, p.Spec.Homepage)
	}
	for _, pl := range p.Spec.Platforms {
		target := Platform{pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]}
		want := "https://github.com/kubectl-crd/kubectl-crd/releases/download/v1.2.3/" + target.Archive()
		if pl.URI != want {
			t.Errorf("%s: uri %s, want %s", target, pl.URI, want)
		}
		var from []string
		for _, op := range pl.Files {
			from = append(from, op.From)
		}
		if diff := cmp.Diff([]string{target.Binary(), target.Companion(), filepath.Base(CompletionShim), "LICENSE"}, from); diff != "" {
			t.Errorf("%s: files from the archive (-want +got):\n%s", target, diff)
		}
	}
	// krew-index requires the file to be named after the plugin.
	if errs := ValidateManifest(ManifestTemplate, p, Platforms); len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Errorf("a manifest named %s: want one error on metadata.name, got %v", ManifestTemplate, errs)
	}
}

func TestParseManifestStrict(t *testing.T) {
	valid := string(renderedTemplate(t))
	for name, doc := range map[string]string{
		"unknown field":   strings.Replace(valid, "  shortDescription:", "  shortDescripton:", 1),
		"duplicate field": strings.Replace(valid, "  homepage:", "  homepage: https://example.com\n  homepage:", 1),
		"not YAML":        "spec: [",
	} {
		if _, err := ParseManifest([]byte(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestValidateManifest(t *testing.T) {
	selector := func(labels ...string) *metav1.LabelSelector {
		s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
		for i := 0; i < len(labels); i += 2 {
			s.MatchLabels[labels[i]] = labels[i+1]
		}
		return s
	}
	// Platforms of the template, in order: 0 darwin/amd64, 1 darwin/arm64,
	// 2 linux/amd64, 3 linux/arm64, 4 windows/amd64, 5 windows/arm64.
	for _, tc := range []struct {
		name   string
		change func(p *Plugin)
		want   []string
	}{
		{"valid", func(p *Plugin) {}, nil},
		{"apiVersion", func(p *Plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" },
			[]string{"Unsupported value: apiVersion"}},
		{"kind", func(p *Plugin) { p.Kind = "Plugins" }, []string{"Unsupported value: kind"}},
		{"unsafe name", func(p *Plugin) { p.Name = "crd/x" }, []string{"Invalid value: metadata.name"}},
		{"windows device name", func(p *Plugin) { p.Name = "Con" }, []string{"Invalid value: metadata.name"}},
		{"name not the file's", func(p *Plugin) { p.Name = "crds" }, []string{"Invalid value: metadata.name"}},
		{"version without v", func(p *Plugin) { p.Spec.Version = "1.2.3" }, []string{"Invalid value: spec.version"}},
		{"version not semver", func(p *Plugin) { p.Spec.Version = "v1.2" }, []string{"Invalid value: spec.version"}},
		{"prerelease version", func(p *Plugin) { p.Spec.Version = "v1.2.3-rc.1" }, nil},
		{"no short description", func(p *Plugin) { p.Spec.ShortDescription = " " },
			[]string{"Required value: spec.shortDescription"}},
		{"short description of two lines", func(p *Plugin) { p.Spec.ShortDescription = "a\nb" },
			[]string{"Invalid value: spec.shortDescription"}},
		{"no description", func(p *Plugin) { p.Spec.Description = "" }, []string{"Required value: spec.description"}},
		{"http homepage", func(p *Plugin) { p.Spec.Homepage = "http://example.com" }, []string{"Invalid value: spec.homepage"}},
		{"no platforms", func(p *Plugin) { p.Spec.Platforms = nil }, []string{"Required value: spec.platforms"}},
		{"no uri", func(p *Plugin) { p.Spec.Platforms[0].URI = "" }, []string{"Invalid value: spec.platforms[0].uri"}},
		{"upper-case sha256", func(p *Plugin) { p.Spec.Platforms[1].Sha256 = strings.Repeat("A", 64) },
			[]string{"Invalid value: spec.platforms[1].sha256"}},
		{"short sha256", func(p *Plugin) { p.Spec.Platforms[1].Sha256 = "abc" }, []string{"Invalid value: spec.platforms[1].sha256"}},
		{"no selector", func(p *Plugin) { p.Spec.Platforms[2].Selector = nil },
			[]string{"Required value: spec.platforms[2].selector", "Required value: spec.platforms"}},
		{"empty selector", func(p *Plugin) { p.Spec.Platforms[2].Selector = selector() },
			[]string{"Required value: spec.platforms[2].selector", "Required value: spec.platforms"}},
		{"selector on another label", func(p *Plugin) {
			p.Spec.Platforms[3].Selector = selector("os", "linux", "arch", "arm64", "distro", "debian")
		}, []string{"Unsupported value: spec.platforms[3].selector.matchLabels[distro]", "Required value: spec.platforms"}},
		{"invalid selector", func(p *Plugin) {
			p.Spec.Platforms[3].Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "os", Operator: "Like"}}
		}, []string{"Invalid value: spec.platforms[3].selector", "Required value: spec.platforms"}},
		{"overlapping selectors", func(p *Plugin) { p.Spec.Platforms[1].Selector = selector("os", "darwin") }, []string{
			"Invalid value: spec.platforms[1].selector", // darwin/386, arm, ppc64le, s390x
			"Invalid value: spec.platforms",             // darwin/amd64 twice
		}},
		{"platform missing", func(p *Plugin) { p.Spec.Platforms = p.Spec.Platforms[:5] }, []string{"Required value: spec.platforms"}},
		{"platform not released", func(p *Plugin) {
			extra := p.Spec.Platforms[3]
			extra.Selector = selector("os", "linux", "arch", "arm")
			p.Spec.Platforms = append(p.Spec.Platforms, extra)
		}, []string{"Invalid value: spec.platforms[6].selector"}},
		{"no bin", func(p *Plugin) { p.Spec.Platforms[2].Bin = "" }, []string{"Required value: spec.platforms[2].bin"}},
		{"bin outside", func(p *Plugin) { p.Spec.Platforms[2].Bin = "../kubectl-crd" }, []string{"Invalid value: spec.platforms[2].bin"}},
		{"windows bin without .exe", func(p *Plugin) {
			p.Spec.Platforms[4].Bin = "kubectl-crd"
			p.Spec.Platforms[4].Files[0].From = "kubectl-crd"
		}, []string{"Invalid value: spec.platforms[4].bin"}},
		{".exe on linux", func(p *Plugin) {
			p.Spec.Platforms[2].Bin = "kubectl-crd.exe"
			p.Spec.Platforms[2].Files[0].From = "kubectl-crd.exe"
		}, []string{"Invalid value: spec.platforms[2].bin"}},
		{"bin not installed", func(p *Plugin) { p.Spec.Platforms[2].Files = p.Spec.Platforms[2].Files[1:] },
			[]string{"Invalid value: spec.platforms[2].bin"}},
		{"files left out: everything is installed", func(p *Plugin) { p.Spec.Platforms[2].Files = nil }, nil},
		{"files empty", func(p *Plugin) { p.Spec.Platforms[2].Files = []FileOperation{} },
			[]string{"Invalid value: spec.platforms[2].files", "Invalid value: spec.platforms[2].bin"}},
		{"file without from", func(p *Plugin) { p.Spec.Platforms[0].Files[2].From = "" },
			[]string{"Required value: spec.platforms[0].files[2].from"}},
		{"file without to", func(p *Plugin) { p.Spec.Platforms[0].Files[2].To = "" },
			[]string{"Required value: spec.platforms[0].files[2].to"}},
		{"file to an absolute path", func(p *Plugin) { p.Spec.Platforms[0].Files[2].To = "/etc" },
			[]string{"Invalid value: spec.platforms[0].files[2].to"}},
		{"file from a parent", func(p *Plugin) { p.Spec.Platforms[0].Files[2].From = "../LICENSE" },
			[]string{"Invalid value: spec.platforms[0].files[2].from"}},
		{"file to an unclean path", func(p *Plugin) { p.Spec.Platforms[0].Files[2].To = "./doc/" },
			[]string{"Invalid value: spec.platforms[0].files[2].to"}},
		{"bin installed under another name", func(p *Plugin) {
			p.Spec.Platforms[0].Files[0].To = "bin/kubectl-crd"
			p.Spec.Platforms[0].Bin = "bin/kubectl-crd"
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseManifest(renderedTemplate(t))
			if err != nil {
				t.Fatal(err)
			}
			tc.change(p)
			var got []string
			for _, e := range ValidateManifest("crd.yaml", p, Platforms) {
				got = append(got, e.Type.String()+": "+e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
