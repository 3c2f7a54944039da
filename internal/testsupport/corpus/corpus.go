// Package corpus finds the public corpus of real CRDs and custom
// resources (see ../shared/corpus/README.md beside the checkout) for tests,
// and lists its files from MANIFEST.tsv.
package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	// EnvDir names the corpus directory explicitly.
	EnvDir = "KUBECTL_CRD_CORPUS"
	// EnvRequire set to 1 turns a missing corpus from a skip into a failure
	// (for CI, where a silently skipped differential test proves nothing).
	EnvRequire = "KUBECTL_CRD_REQUIRE_CORPUS"
	// EnvAll set to 1 runs the unit tests' sweeps of the corpus over every
	// file; unset, they run over a sample (Sample), so that the README's
	// test command stays under 15 minutes on two cores. .ci/run's corpus
	// target sets it.
	EnvAll = "KUBECTL_CRD_CORPUS_ALL"

	modulePath = "github.com/kubectl-crd/kubectl-crd"
	manifest   = "MANIFEST.tsv"
)

// Dir returns the corpus directory: $KUBECTL_CRD_CORPUS, else ../shared/corpus
// beside the module root found above the working directory. Without a corpus
// the test is skipped, or fails when KUBECTL_CRD_REQUIRE_CORPUS=1.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	dir, err := find(wd, os.Getenv)
	var missing *missingError
	switch {
	case err == nil:
		return dir
	case errors.As(err, &missing) && os.Getenv(EnvRequire) != "1":
		t.Skipf("corpus: %v; set %s to the corpus directory (and %s=1 to fail instead of skipping)", err, EnvDir, EnvRequire)
	default:
		t.Fatalf("corpus: %v", err)
	}
	return ""
}

// missingError means no corpus was found where one was looked for by default.
type missingError struct{ msg string }

func (e *missingError) Error() string { return e.msg }

// find locates the corpus from start. An explicit but wrong $KUBECTL_CRD_CORPUS
// is a plain error (a misconfiguration, never skipped); a corpus missing from
// the default place is a *missingError.
func find(start string, getenv func(string) string) (string, error) {
	if d := getenv(EnvDir); d != "" {
		if !isCorpus(d) {
			return "", fmt.Errorf("%s=%s: no %s there", EnvDir, d, manifest)
		}
		return filepath.Abs(d)
	}
	root, err := moduleRoot(start)
	if err != nil {
		return "", &missingError{msg: err.Error()}
	}
	d := filepath.Join(filepath.Dir(root), "shared", "corpus")
	if !isCorpus(d) {
		return "", &missingError{msg: fmt.Sprintf("no corpus at %s (no %s)", d, manifest)}
	}
	return d, nil
}

func isCorpus(d string) bool {
	st, err := os.Stat(filepath.Join(d, manifest))
	return err == nil && st.Mode().IsRegular()
}

// moduleRoot walks up from start to the directory whose go.mod declares this
// module (a go.mod of another module, e.g. test/apiserver, is passed over).
func moduleRoot(start string) (string, error) {
	for d := start; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePathOf(b) == modulePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod of module %s above %s", modulePath, start)
		}
		d = parent
	}
}

// modulePathOf returns the path of the module directive of a go.mod file.
func modulePathOf(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			if p, err := strconv.Unquote(f[1]); err == nil {
				return p
			}
			return f[1]
		}
	}
	return ""
}

// Kinds of files in MANIFEST.tsv.
const (
	KindCRD    = "crd"
	KindCR     = "cr"
	KindCRTest = "crtest"
)

// File is one row of MANIFEST.tsv.
type File struct {
	Project      string
	Module       string
	Version      string
	PathInModule string
	// LocalPath is relative to the corpus directory:
	// crds/<project>/<set>/... or crs/<project>/<set>/...
	LocalPath string
	Kind      string
	License   string
	SHA256    string
	Bytes     int64
	// Objects summarises the documents (e.g. "apiextensions.k8s.io/v1:foos.example.com").
	Objects string
}

// Set is the directory of the module version the file comes from inside its
// project, e.g. "prometheus-operator@v0.85.0" or "old-prometheus-operator@v0.38.0".
func (f File) Set() string {
	parts := strings.Split(filepath.ToSlash(f.LocalPath), "/")
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}

// Manifest reads MANIFEST.tsv of the corpus in dir, sorted by local path.
func Manifest(t testing.TB, dir string) []File {
	t.Helper()
	files, err := readManifest(filepath.Join(dir, manifest))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	return files
}

func readManifest(name string) ([]File, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: empty", name)
	}
	header := strings.Split(lines[0], "\t")
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, h := range []string{"project", "module", "version", "path_in_module", "local_path", "kind"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: no column %q in header %q", name, h, lines[0])
		}
	}
	var files []File
	for n, line := range lines[1:] {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", name, n+2, len(f), len(header))
		}
		get := func(h string) string {
			if i, ok := col[h]; ok {
				return f[i]
			}
			return ""
		}
		size, _ := strconv.ParseInt(get("bytes"), 10, 64)
		files = append(files, File{
			Project:      get("project"),
			Module:       get("module"),
			Version:      get("version"),
			PathInModule: get("path_in_module"),
			LocalPath:    get("local_path"),
			Kind:         get("kind"),
			License:      get("license"),
			SHA256:       get("sha256"),
			Bytes:        size,
			Objects:      get("objects"),
		})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].LocalPath < files[j].LocalPath })
	return files, nil
}

// CRDFiles lists the files holding CustomResourceDefinitions.
func CRDFiles(t testing.TB, dir string) []File { return ofKind(Manifest(t, dir), KindCRD) }

// CRFiles lists the files holding sample custom resources.
func CRFiles(t testing.TB, dir string) []File { return ofKind(Manifest(t, dir), KindCR) }

func ofKind(files []File, kind string) []File {
	var out []File
	for _, f := range files {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// Read returns the content of a corpus file.
func Read(t testing.TB, dir string, f File) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.LocalPath)))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	return b
}

// sampleEvery is the share of each set's files a sample keeps: one in four.
const sampleEvery = 4

// Sample returns files whole when KUBECTL_CRD_CORPUS_ALL=1, else a part of
// them the same on every run: from each set (project and module version),
// its first file and every fourth after it, in the manifest's order, so
// that every project and release is still read. It logs which.
func Sample(t testing.TB, files []File) []File {
	t.Helper()
	if os.Getenv(EnvAll) == "1" {
		t.Logf("corpus: all %d files (%s=1)", len(files), EnvAll)
		return files
	}
	out := sample(files)
	t.Logf("corpus: a sample of %d of %d files, every set read; %s=1 for all (.ci/run's corpus target)", len(out), len(files), EnvAll)
	return out
}

func sample(files []File) []File {
	seen := map[string]int{}
	var out []File
	for _, f := range files {
		set := f.Project + "/" + f.Set()
		if seen[set]%sampleEvery == 0 {
			out = append(out, f)
		}
		seen[set]++
	}
	return out
}
