package corpus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	// <tmp>/work/main is the checkout, <tmp>/work/main/test/apiserver a nested
	// module, <tmp>/work/shared/corpus the corpus.
	tmp := t.TempDir()
	checkout := filepath.Join(tmp, "work", "main")
	write(t, filepath.Join(checkout, "go.mod"), "// the plugin\nmodule github.com/kubectl-crd/kubectl-crd // trailing\n\ngo 1.26.0\n")
	write(t, filepath.Join(checkout, "test", "apiserver", "go.mod"), "module github.com/kubectl-crd/kubectl-crd/test/apiserver\n")
	nested := filepath.Join(checkout, "test", "apiserver", "deep")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(tmp, "work", "shared", "corpus")
	other := filepath.Join(tmp, "elsewhere")
	write(t, filepath.Join(other, "MANIFEST.tsv"), "project\n")
	noEnv := func(string) string { return "" }
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvDir {
				return v
			}
			return ""
		}
	}

	// Before the corpus exists: a missing corpus, from anywhere below.
	for _, start := range []string{checkout, nested} {
		_, err := find(start, noEnv)
		var missing *missingError
		if !errors.As(err, &missing) {
			t.Errorf("find(%s) without corpus: got %v, want a missingError", start, err)
		}
	}
	write(t, filepath.Join(corpus, "MANIFEST.tsv"), "project\n")

	tests := []struct {
		name    string
		start   string
		getenv  func(string) string
		want    string
		missing bool
		wantErr bool
	}{
		{name: "from the checkout", start: checkout, getenv: noEnv, want: corpus},
		{name: "from a nested module's directory", start: nested, getenv: noEnv, want: corpus},
		{name: "env wins", start: checkout, getenv: env(other), want: other},
		{name: "env wrong is an error, not a skip", start: checkout, getenv: env(filepath.Join(tmp, "nope")), wantErr: true},
		{name: "outside the module", start: tmp, getenv: noEnv, missing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := find(tt.start, tt.getenv)
			var missing *missingError
			isMissing := errors.As(err, &missing)
			switch {
			case tt.missing || tt.wantErr:
				if err == nil || isMissing != tt.missing {
					t.Fatalf("find: got (%q, %v), want missing=%v error", got, err, tt.missing)
				}
			case err != nil:
				t.Fatalf("find: %v", err)
			case got != tt.want:
				t.Errorf("find: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestModulePathOf(t *testing.T) {
	for in, want := range map[string]string{
		"module a/b\n":                      "a/b",
		"// c\nmodule \"a/b\" // x\ngo 1\n": "a/b",
		"go 1.2\n":                          "",
		"modules x\n":                       "",
	} {
		if got := modulePathOf([]byte(in)); got != want {
			t.Errorf("modulePathOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadManifest(t *testing.T) {
	name := filepath.Join(t.TempDir(), "MANIFEST.tsv")
	write(t, name, "project\tmodule\tversion\tpath_in_module\tlocal_path\tkind\tlicense\tsha256\tbytes\tobjects\tmodule_h1\n"+
		"p\tm\tv1\tb.yaml\tcrs/p/m@v1/b.yaml\tcr\tMIT\tab\t12\tg/v1/Kx1\th1\n"+
		"p\tm\tv1\ta.yaml\tcrds/p/m@v1/a.yaml\tcrd\tMIT\tcd\t34\tapiextensions.k8s.io/v1:ks.g\th1\n")
	got, err := readManifest(name)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Project: "p", Module: "m", Version: "v1", PathInModule: "a.yaml", LocalPath: "crds/p/m@v1/a.yaml", Kind: KindCRD, License: "MIT", SHA256: "cd", Bytes: 34, Objects: "apiextensions.k8s.io/v1:ks.g"},
		{Project: "p", Module: "m", Version: "v1", PathInModule: "b.yaml", LocalPath: "crs/p/m@v1/b.yaml", Kind: KindCR, License: "MIT", SHA256: "ab", Bytes: 12, Objects: "g/v1/Kx1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readManifest (-want +got):\n%s", diff)
	}
	if s := got[0].Set(); s != "m@v1" {
		t.Errorf("Set() = %q, want m@v1", s)
	}
	if got := ofKind(got, KindCR); len(got) != 1 || got[0].PathInModule != "b.yaml" {
		t.Errorf("ofKind(cr) = %+v", got)
	}

	write(t, name, "project\tmodule\n")
	if _, err := readManifest(name); err == nil {
		t.Error("readManifest without the needed columns: no error")
	}
}

// TestDir runs against the real corpus when there is one.
func TestDir(t *testing.T) {
	dir := Dir(t)
	crds, crs := CRDFiles(t, dir), CRFiles(t, dir)
	if len(crds) == 0 || len(crs) == 0 {
		t.Fatalf("corpus %s: %d CRD files, %d CR files", dir, len(crds), len(crs))
	}
	for _, f := range []File{crds[0], crs[0]} {
		if len(Read(t, dir, f)) == 0 {
			t.Errorf("%s: empty", f.LocalPath)
		}
	}
}

// TestSample: every set keeps its first file and every fourth after it;
// KUBECTL_CRD_CORPUS_ALL=1 keeps them all.
func TestSample(t *testing.T) {
	var files []File
	for _, set := range []string{"a@v1", "a@v2", "b@v1"} {
		n := map[string]int{"a@v1": 9, "a@v2": 1, "b@v1": 4}[set]
		for i := range n {
			files = append(files, File{Project: set[:1], LocalPath: fmt.Sprintf("crds/%s/%s/%d.yaml", set[:1], set, i)})
		}
	}
	var got []string
	for _, f := range sample(files) {
		got = append(got, f.LocalPath)
	}
	want := []string{"crds/a/a@v1/0.yaml", "crds/a/a@v1/4.yaml", "crds/a/a@v1/8.yaml", "crds/a/a@v2/0.yaml", "crds/b/b@v1/0.yaml"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sample: %q, want %q", got, want)
	}
	t.Setenv(EnvAll, "")
	if n := len(Sample(t, files)); n != len(want) {
		t.Errorf("Sample without %s: %d files, want %d", EnvAll, n, len(want))
	}
	t.Setenv(EnvAll, "1")
	if n := len(Sample(t, files)); n != len(files) {
		t.Errorf("Sample with %s=1: %d files, want all %d", EnvAll, n, len(files))
	}
}
