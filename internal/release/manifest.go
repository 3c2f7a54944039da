package release

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// The kind of object krew reads from a manifest: krew's index API, v1alpha2.
const (
	KrewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	KrewKind       = "Plugin"
)

// Plugin is a krew plugin manifest. The types mirror the JSON of krew's
// pkg/index types (krew is not available as a Go module here).
type Plugin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PluginSpec `json:"spec"`
}

// PluginSpec is what krew installs and shows.
type PluginSpec struct {
	Version          string `json:"version,omitempty"`
	ShortDescription string `json:"shortDescription,omitempty"`
	Description      string `json:"description,omitempty"`
	Caveats          string `json:"caveats,omitempty"`
	Homepage         string `json:"homepage,omitempty"`

	Platforms []KrewPlatform `json:"platforms,omitempty"`
}

// KrewPlatform is the archive and the files krew installs on the platforms
// its selector matches.
type KrewPlatform struct {
	URI      string                `json:"uri,omitempty"`
	Sha256   string                `json:"sha256,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Files nil means everything in the archive, to the installation directory.
	Files []FileOperation `json:"files"`
	// Bin is the plugin executable, relative to the installation directory.
	Bin string `json:"bin"`
}

// FileOperation copies the archive's files matching From (a glob) to To,
// relative to the installation directory.
type FileOperation struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// ParseManifest decodes a manifest strictly: an unknown or duplicate field is
// an error (krew itself ignores unknown fields, so a typo there would be lost
// silently).
func ParseManifest(data []byte) (*Plugin, error) {
	var p Plugin
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// candidateOS and candidateArch span the platforms a selector is tried
// against: more than we release, so that a selector matching a platform
// without an archive is found.
var (
	candidateOS   = []string{"darwin", "linux", "windows", "freebsd"}
	candidateArch = []string{"386", "amd64", "arm", "arm64", "ppc64le", "s390x"}
)

var (
	sha256Hex = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// A plugin name is also a file name in krew's store, on every OS.
	pluginName       = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	windowsReserved  = regexp.MustCompile(`(?i)^(con|prn|aux|nul|com[1-9]|lpt[1-9])$`)
	selectorLabelKey = map[string]bool{"os": true, "arch": true}
)

// ValidateManifest checks a manifest as krew and its index review would, and
// more: file is the manifest's file name (krew-index requires NAME.yaml),
// want the platforms it must cover, each by exactly one entry.
func ValidateManifest(file string, p *Plugin, want []Platform) field.ErrorList {
	var errs field.ErrorList
	if p.APIVersion != KrewAPIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), p.APIVersion, []string{KrewAPIVersion}))
	}
	if p.Kind != KrewKind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), p.Kind, []string{KrewKind}))
	}
	name := field.NewPath("metadata", "name")
	switch {
	case !pluginName.MatchString(p.Name) || windowsReserved.MatchString(p.Name):
		errs = append(errs, field.Invalid(name, p.Name, "must match "+pluginName.String()+" and not be a name Windows reserves"))
	case filepath.Base(file) != p.Name+".yaml":
		errs = append(errs, field.Invalid(name, p.Name, fmt.Sprintf("the manifest file must be named %s.yaml, not %s", p.Name, filepath.Base(file))))
	}
	errs = append(errs, validateSpec(field.NewPath("spec"), &p.Spec, want)...)
	return errs
}

func validateSpec(fld *field.Path, s *PluginSpec, want []Platform) field.ErrorList {
	var errs field.ErrorList
	if _, err := ParseVersion(s.Version); err != nil {
		errs = append(errs, field.Invalid(fld.Child("version"), s.Version, err.Error()))
	}
	switch {
	case strings.TrimSpace(s.ShortDescription) == "":
		errs = append(errs, field.Required(fld.Child("shortDescription"), ""))
	case strings.ContainsAny(s.ShortDescription, "\r\n"):
		errs = append(errs, field.Invalid(fld.Child("shortDescription"), s.ShortDescription, "must be one line"))
	}
	if strings.TrimSpace(s.Description) == "" {
		errs = append(errs, field.Required(fld.Child("description"), ""))
	}
	if err := httpsURL(s.Homepage); err != nil {
		errs = append(errs, field.Invalid(fld.Child("homepage"), s.Homepage, err.Error()))
	}
	platforms := fld.Child("platforms")
	if len(s.Platforms) == 0 {
		return append(errs, field.Required(platforms, ""))
	}
	wanted := map[Platform]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	// matched[pair] lists the entries whose selector matches the pair.
	matched := map[Platform][]int{}
	for i := range s.Platforms {
		errs = append(errs, validatePlatform(platforms.Index(i), &s.Platforms[i])...)
		sel, selErrs := validateSelector(platforms.Index(i).Child("selector"), s.Platforms[i].Selector)
		errs = append(errs, selErrs...)
		if sel == nil {
			continue
		}
		var unreleased []string
		for _, os := range candidateOS {
			for _, arch := range candidateArch {
				if pair := (Platform{os, arch}); sel.Matches(labels.Set{"os": os, "arch": arch}) {
					matched[pair] = append(matched[pair], i)
					if !wanted[pair] {
						unreleased = append(unreleased, pair.String())
					}
				}
			}
		}
		if len(unreleased) > 0 {
			errs = append(errs, field.Invalid(platforms.Index(i).Child("selector"), sel.String(),
				"matches platforms without a release: "+strings.Join(unreleased, ", ")))
		}
	}
	for _, w := range want {
		switch n := len(matched[w]); {
		case n == 0:
			errs = append(errs, field.Required(platforms, "no entry's selector matches "+w.String()))
		case n > 1:
			errs = append(errs, field.Invalid(platforms, w.String(), fmt.Sprintf("entries %v all match it: krew needs exactly one", matched[w])))
		}
	}
	return errs
}

func validatePlatform(fld *field.Path, pl *KrewPlatform) field.ErrorList {
	var errs field.ErrorList
	if err := httpsURL(pl.URI); err != nil {
		errs = append(errs, field.Invalid(fld.Child("uri"), pl.URI, err.Error()))
	}
	if !sha256Hex.MatchString(pl.Sha256) {
		errs = append(errs, field.Invalid(fld.Child("sha256"), pl.Sha256, "must be 64 lower-case hex digits"))
	}
	binErr := ""
	switch {
	case pl.Bin == "":
		errs = append(errs, field.Required(fld.Child("bin"), ""))
	case relativePath(pl.Bin) != nil:
		binErr = relativePath(pl.Bin).Error()
	case (selectorLabel(pl.Selector, "os") == "windows") != strings.HasSuffix(pl.Bin, ".exe"):
		binErr = "must end in .exe on windows, and only there"
	}
	files := fld.Child("files")
	if pl.Files != nil && len(pl.Files) == 0 {
		errs = append(errs, field.Invalid(files, "[]", "must be left out (everything) or name files"))
	}
	installsBin := pl.Files == nil
	for i, op := range pl.Files {
		if op.From == "" {
			errs = append(errs, field.Required(files.Index(i).Child("from"), ""))
		} else if err := relativePath(op.From); err != nil {
			errs = append(errs, field.Invalid(files.Index(i).Child("from"), op.From, err.Error()))
		}
		if op.To == "" {
			errs = append(errs, field.Required(files.Index(i).Child("to"), ""))
		} else if err := relativePath(op.To); err != nil {
			errs = append(errs, field.Invalid(files.Index(i).Child("to"), op.To, err.Error()))
		}
		if installedAs(op) == pl.Bin {
			installsBin = true
		}
	}
	if pl.Bin != "" && binErr == "" && !installsBin {
		binErr = "no files entry installs it"
	}
	if binErr != "" {
		errs = append(errs, field.Invalid(fld.Child("bin"), pl.Bin, binErr))
	}
	return errs
}

// installedAs is where a file operation of a single file puts it: To, or
// the file's own name when To is the installation directory.
func installedAs(op FileOperation) string {
	if op.To == "." {
		return path.Base(op.From)
	}
	return op.To
}

// validateSelector checks a platform's selector and returns it as a
// labels.Selector, nil when it is not valid.
func validateSelector(fld *field.Path, sel *metav1.LabelSelector) (labels.Selector, field.ErrorList) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return nil, field.ErrorList{field.Required(fld, "an empty selector would match every platform")}
	}
	var errs field.ErrorList
	for _, k := range sortedKeys(sel.MatchLabels) {
		if !selectorLabelKey[k] {
			errs = append(errs, field.NotSupported(fld.Child("matchLabels").Key(k), k, []string{"os", "arch"}))
		}
	}
	for i, e := range sel.MatchExpressions {
		if !selectorLabelKey[e.Key] {
			errs = append(errs, field.NotSupported(fld.Child("matchExpressions").Index(i).Child("key"), e.Key, []string{"os", "arch"}))
		}
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		errs = append(errs, field.Invalid(fld, sel.String(), err.Error()))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return selector, nil
}

// selectorLabel is the value the selector's matchLabels require of key, or "".
func selectorLabel(sel *metav1.LabelSelector, key string) string {
	if sel == nil {
		return ""
	}
	return sel.MatchLabels[key]
}

// relativePath refuses what krew would refuse to copy, or copy outside the
// installation directory: absolute paths, "..", unclean paths.
func relativePath(p string) error {
	switch {
	case path.IsAbs(p) || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "":
		return fmt.Errorf("must be relative")
	case strings.Contains(p, ".."):
		return fmt.Errorf("must not contain ..")
	case path.Clean(p) != p:
		return fmt.Errorf("must be a clean path (%s)", path.Clean(p))
	}
	return nil
}

func httpsURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("must be an https URL")
	}
	return nil
}

// ParseVersion parses a release version: semantic, with the "v" krew
// requires (v1.2.3, v1.2.3-rc.1).
func ParseVersion(v string) (*version.Version, error) {
	if !strings.HasPrefix(v, "v") {
		return nil, fmt.Errorf("%q must start with v (krew requires it)", v)
	}
	parsed, err := version.ParseSemantic(v)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(v) != v {
		return nil, fmt.Errorf("%q has spaces around it", v)
	}
	return parsed, nil
}

// ManifestFor checks that the manifest's entries point at the archives
// built: for each platform in sums, the entry selecting it names the
// archive in its uri and carries its sha256.
func ManifestFor(p *Plugin, sums map[Platform]string) field.ErrorList {
	var errs field.ErrorList
	for i, pl := range p.Spec.Platforms {
		fld := field.NewPath("spec", "platforms").Index(i)
		target := Platform{selectorLabel(pl.Selector, "os"), selectorLabel(pl.Selector, "arch")}
		sum, ok := sums[target]
		if !ok {
			errs = append(errs, field.Invalid(fld.Child("selector"), target.String(), "no archive was built for it"))
			continue
		}
		if path.Base(pl.URI) != target.Archive() {
			errs = append(errs, field.Invalid(fld.Child("uri"), pl.URI, "must end in /"+target.Archive()))
		}
		if pl.Sha256 != sum {
			errs = append(errs, field.Invalid(fld.Child("sha256"), pl.Sha256, "the sha256 of "+target.Archive()+" is "+sum))
		}
		if pl.Bin != target.Binary() {
			errs = append(errs, field.Invalid(fld.Child("bin"), pl.Bin, "the archive's binary is "+target.Binary()))
		}
		if !slices.ContainsFunc(pl.Files, func(op FileOperation) bool { return op.From == target.Companion() && op.To == "." }) {
			errs = append(errs, field.Required(fld.Child("files"), "crd-helm must be installed beside the plugin: from: "+target.Companion()+", to: ."))
		}
	}
	return errs
}
