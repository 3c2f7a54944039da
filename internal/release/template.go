package release

import (
	"bytes"
	"fmt"
	"text/template"
)

// ManifestTemplate is the file, at the repository root, that dist/crd.yaml
// is rendered from.
const ManifestTemplate = "krew-manifest.yaml"

// RenderManifest fills in a manifest template (Go text/template): {{ .Version }}
// is the release version, {{ sha256 "ARCHIVE" }} the sha256 of the archive
// of that file name, from sums. An archive missing from sums, or a sum never
// used, is an error: the manifest and the archives built must agree.
func RenderManifest(name string, tmpl []byte, version string, sums map[string]string) ([]byte, error) {
	used := map[string]bool{}
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"sha256": func(archive string) (string, error) {
			sum, ok := sums[archive]
			if !ok {
				return "", fmt.Errorf("no archive %s was built", archive)
			}
			used[archive] = true
			return sum, nil
		},
	}).Parse(string(tmpl))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, struct{ Version string }{version}); err != nil {
		return nil, err
	}
	for _, archive := range sortedKeys(sums) {
		if !used[archive] {
			return nil, fmt.Errorf("%s: no platform uses the archive %s", name, archive)
		}
	}
	return out.Bytes(), nil
}
