package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// helmLegacyPlugin and helmPluginV1 mirror the fields of Helm's plugin.yaml
// forms (helm.sh/helm/v4 internal/plugin: MetadataLegacy, MetadataV1),
// read strictly as Helm 4 reads the v1 form: a field Helm does not know fails.
type helmLegacyPlugin struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Usage       string `json:"usage"`
	Description string `json:"description"`
	Command     string `json:"command"`
}

type helmPluginV1 struct {
	APIVersion    string `json:"apiVersion"`
	Type          string `json:"type"`
	Name          string `json:"name"`
	Version       string `json:"version"`
	Runtime       string `json:"runtime"`
	SourceURL     string `json:"sourceURL"`
	RuntimeConfig struct {
		PlatformCommand []struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"platformCommand"`
	} `json:"runtimeConfig"`
}

// TestRenderHelmPlugin: the Helm plugin's templates render, for each
// platform's archive, to plugin.yaml files of the forms Helm reads, naming
// the archive's binary and the release's version as a strict semantic
// version. (A real Helm installs and runs them: test/e2e TestHelmPlugin.)
func TestRenderHelmPlugin(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "..", HelmPluginDir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, p := range Platforms {
		data, err := RenderHelmPlugin("plugin.yaml", read("plugin.yaml"), "v1.2.3", p)
		if err != nil {
			t.Fatal(err)
		}
		var cli helmLegacyPlugin
		if err := yaml.UnmarshalStrict(data, &cli); err != nil {
			t.Fatalf("%s: plugin.yaml: %v", p, err)
		}
		if cli.Name != "crd-check" || cli.Version != "1.2.3" || cli.Command != "$HELM_PLUGIN_DIR/"+p.Binary()+" helm" || cli.Usage == "" {
			t.Errorf("%s: plugin.yaml: %+v", p, cli)
		}
		name := "crd-check-post-renderer/plugin.yaml"
		if data, err = RenderHelmPlugin(name, read(name), "v1.2.3", p); err != nil {
			t.Fatal(err)
		}
		var pr helmPluginV1
		if err := yaml.UnmarshalStrict(data, &pr); err != nil {
			t.Fatalf("%s: %s: %v", p, name, err)
		}
		cmds := pr.RuntimeConfig.PlatformCommand
		if pr.APIVersion != "v1" || pr.Type != "postrenderer/v1" || pr.Runtime != "subprocess" || pr.Name != "crd-check-post-renderer" || pr.Version != "1.2.3" ||
			len(cmds) != 1 || cmds[0].Command != "${HELM_PLUGIN_DIR}/../"+p.Binary() || strings.Join(cmds[0].Args, " ") != "helm post-render" {
			t.Errorf("%s: %s: %+v", p, name, pr)
		}
	}
	if _, err := RenderHelmPlugin("plugin.yaml", read("plugin.yaml"), "1.2.3", Platforms[0]); err == nil {
		t.Error("a version without its v: no error")
	}
	if _, err := RenderHelmPlugin("plugin.yaml", []byte("version: {{ .Versoin }}"), "v1.2.3", Platforms[0]); err == nil {
		t.Error("a template naming an unknown field: no error")
	}
}
