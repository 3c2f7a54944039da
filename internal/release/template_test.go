package release

import (
	"strings"
	"testing"
)

func TestRenderManifest(t *testing.T) {
	const tmpl = "version: '{{ .Version }}'\nsha256: '{{ sha256 \"a.tar.gz\" }}'\n"
	got, err := RenderManifest("t.yaml", []byte(tmpl), "v1.0.0", map[string]string{"a.tar.gz": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "version: 'v1.0.0'\nsha256: 'abc'\n"; string(got) != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	for name, tc := range map[string]struct {
		tmpl string
		sums map[string]string
		want string
	}{
		"archive not built": {tmpl, map[string]string{}, "no archive a.tar.gz was built"},
		"archive not used":  {tmpl, map[string]string{"a.tar.gz": "abc", "b.tar.gz": "def"}, "no platform uses the archive b.tar.gz"},
		"unknown field":     {"{{ .Tag }}", nil, "can't evaluate field Tag"},
		"bad syntax":        {"{{ .Version ", nil, "t.yaml:1"},
	} {
		if _, err := RenderManifest("t.yaml", []byte(tc.tmpl), "v1.0.0", tc.sums); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, tc.want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, v := range []string{"v0.1.0", "v1.2.3-rc.1", "v0.1.0-3-gabcdef123456-dirty", "v0.0.0-20261122073600-7107e6a1b2c3"} {
		if _, err := ParseVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"", "1.2.3", "v1.2", "v1.2.3.4", "v01.2.3", " v1.2.3", "v1.2.3 ", "version"} {
		if _, err := ParseVersion(v); err == nil {
			t.Errorf("%q: accepted", v)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	got, err := ParsePlatforms("linux/amd64, windows/arm64")
	if err != nil || len(got) != 2 || got[1] != (Platform{"windows", "arm64"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, s := range []string{"linux/386", "linux", "linux/amd64,linux/amd64", ""} {
		if _, err := ParsePlatforms(s); err == nil {
			t.Errorf("%q: accepted", s)
		}
	}
}
