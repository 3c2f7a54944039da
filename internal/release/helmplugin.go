package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// HelmPluginDir holds, relative to the repository root, the templates of
// the Helm plugin crd-check's files, each at its path in the archives:
// plugin.yaml at the top, beside the binary, so that the unpacked archive
// is the plugin's directory; the post-renderer plugin of Helm 4 in a
// directory of its own, which runs its parent's binary.
const HelmPluginDir = "helm-plugin"

// HelmPluginFiles are the Helm plugin's files, by their path in an archive
// (and under HelmPluginDir).
var HelmPluginFiles = []string{"plugin.yaml", "crd-check-post-renderer/plugin.yaml"}

// RenderHelmPlugin fills in a template of the Helm plugin (Go
// text/template) for the archive of platform p: {{ .Version }} is the
// release version without its "v" (Helm wants a strict semantic version),
// {{ .Binary }} the name of the plugin's executable there.
func RenderHelmPlugin(name string, tmpl []byte, version string, p Platform) ([]byte, error) {
	if _, err := ParseVersion(version); err != nil {
		return nil, fmt.Errorf("version: %v", err)
	}
	t, err := template.New(filepath.Base(name)).Option("missingkey=error").Parse(string(tmpl))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = t.Execute(&out, struct{ Version, Binary string }{strings.TrimPrefix(version, "v"), p.Binary()})
	return out.Bytes(), err
}

// helmPluginFiles renders the Helm plugin's files for p's archive into dir.
func helmPluginFiles(root, dir, version string, p Platform) ([]ArchiveFile, error) {
	var files []ArchiveFile
	for _, name := range HelmPluginFiles {
		tmpl, err := os.ReadFile(filepath.Join(root, HelmPluginDir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		data, err := RenderHelmPlugin(name, tmpl, version, p)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %v", HelmPluginDir, name, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := writeFileAll(path, data); err != nil {
			return nil, err
		}
		files = append(files, ArchiveFile{Name: name, Source: path, Mode: 0o644})
	}
	return files, nil
}

// writeFileAll writes data to path, its directory made first.
func writeFileAll(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
