package e2e

// The pre-commit hooks (.pre-commit-hooks.yaml at the repository root) are
// run here as pre-commit runs them: the entry split as Python's shlex
// splits it, then the hook's args, then the files it selected, from the
// repository's root, with the built kubectl-crd on PATH (where pre-commit's
// golang environment or the user's PATH has it).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// preCommitHook is a hook of .pre-commit-hooks.yaml, with the fields
// pre-commit's manifest has that the hooks use or that would change what
// they run on.
type preCommitHook struct {
	ID                      string   `json:"id"`
	Name                    string   `json:"name"`
	Description             string   `json:"description"`
	Language                string   `json:"language"`
	Entry                   string   `json:"entry"`
	Args                    []string `json:"args"`
	Files                   string   `json:"files"`
	Exclude                 string   `json:"exclude"`
	Types                   []string `json:"types"`
	TypesOr                 []string `json:"types_or"`
	PassFilenames           *bool    `json:"pass_filenames"`
	RequireSerial           *bool    `json:"require_serial"`
	MinimumPreCommitVersion string   `json:"minimum_pre_commit_version"`
}

func readPreCommitHooks(t *testing.T) map[string]preCommitHook {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []preCommitHook
	if err := yaml.UnmarshalStrict(b, &hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	byID := map[string]preCommitHook{}
	for _, h := range hooks {
		if _, dup := byID[h.ID]; dup {
			t.Errorf("hook %s twice", h.ID)
		}
		byID[h.ID] = h
	}
	return byID
}

// TestPreCommitHooksFile checks each hook's fields: prune and
// explain-structural, built from the repository (golang) or from PATH
// (system) with the same entry; YAML and JSON files, passed to the entry;
// prune's files in one run, so that CRDs among them check the objects.
// (Runs with -short.)
func TestPreCommitHooksFile(t *testing.T) {
	hooks := readPreCommitHooks(t)
	var ids []string
	for id := range hooks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	want := []string{"kubectl-crd-explain-structural", "kubectl-crd-explain-structural-system", "kubectl-crd-prune", "kubectl-crd-prune-system"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Fatalf("hooks (-want +got):\n%s", diff)
	}
	for _, id := range ids {
		h := hooks[id]
		base, system := strings.CutSuffix(id, "-system")
		command := strings.TrimPrefix(base, "kubectl-crd-")
		if h.Name != "kubectl crd "+command || h.Description == "" {
			t.Errorf("%s: name %q, description %q", id, h.Name, h.Description)
		}
		if lang := map[bool]string{true: "system", false: "golang"}[system]; h.Language != lang {
			t.Errorf("%s: language %s, want %s", id, h.Language, lang)
		}
		if system && h.Entry != hooks[base].Entry {
			t.Errorf("%s: its entry is not %s's", id, base)
		}
		words, err := shlexSplit(h.Entry)
		if err != nil || len(words) < 3 || words[0] != "sh" || words[1] != "-c" || !strings.Contains(words[2], "kubectl-crd "+command+" ") {
			t.Errorf("%s: entry %q (%v): want sh -c running kubectl-crd %s", id, words, err, command)
		}
		if !cmp.Equal(h.TypesOr, []string{"yaml", "json"}) || h.Types != nil || h.Files != "" || h.Exclude != "" || h.Args != nil {
			t.Errorf("%s: types_or %q, types %q, files %q, exclude %q, args %q; want YAML and JSON files, no args", id, h.TypesOr, h.Types, h.Files, h.Exclude, h.Args)
		}
		if h.PassFilenames == nil || !*h.PassFilenames || h.RequireSerial == nil || *h.RequireSerial != (command == "prune") {
			t.Errorf("%s: pass_filenames %v, require_serial %v", id, h.PassFilenames, h.RequireSerial)
		}
		if h.MinimumPreCommitVersion != "2.9.0" { // types_or
			t.Errorf("%s: minimum_pre_commit_version %q", id, h.MinimumPreCommitVersion)
		}
	}
}

// TestPreCommitHooks runs each hook on example files: exit 0 when nothing
// is found, 1 on a finding, files that are not Kubernetes objects (or, for
// explain-structural, not CRDs) left alone, args before the files.
func TestPreCommitHooks(t *testing.T) {
	hooks := readPreCommitHooks(t)
	for _, tc := range []struct {
		hook  string
		args  []string
		files []string
		code  int
		want  string // in the output
	}{
		{"prune", nil, []string{"examples/immutable/crd.yaml", "examples/immutable/database.yaml"}, 0, ""},
		{"prune", nil, []string{"examples/maintenance/crd.yaml", "examples/maintenance/job.yaml"}, 1,
			`Error: MaintenanceNightlyJob ops/backdoor-check: pruned unknown field "spec.privileged" (examples/maintenance/job.yaml:17)`},
		{"prune", []string{"--crd-file=examples/maintenance/crd.yaml"}, []string{"examples/maintenance/job.yaml"}, 1, `pruned unknown field "spec.privileged"`},
		{"prune", nil, []string{"examples/maintenance/job.yaml"}, 1, "no CustomResourceDefinition for operations.example.com/v1"},
		{"prune", []string{"--crd-file=examples/refused/crd.yaml"}, []string{"examples/refused/backups.yaml"}, 1, "the server would refuse it"},
		{"prune", nil, []string{"examples/krm/kustomization.yaml", "examples/immutable/crd.yaml", "examples/immutable/database.yaml"}, 0, ""},
		{"prune", nil, []string{"examples/krm/kustomization.yaml", ".pre-commit-hooks.yaml"}, 0, ""},
		{"explain-structural", nil, []string{"examples/maintenance/crd.yaml"}, 0, ""},
		{"explain-structural", nil, []string{"examples/non-structural/crd.yaml"}, 1, "NOT structural"},
		{"explain-structural", nil, []string{"examples/maintenance/crd.yaml", "examples/maintenance/job.yaml", "examples/non-structural/crd.yaml"}, 1, "NOT structural"},
		{"explain-structural", nil, []string{"examples/maintenance/job.yaml", "examples/krm/kustomization.yaml"}, 0, ""},
	} {
		for _, suffix := range []string{"", "-system"} {
			id := "kubectl-crd-" + tc.hook + suffix
			h := hooks[id]
			t.Run(fmt.Sprintf("%s %s %s", id, strings.Join(tc.args, " "), strings.Join(tc.files, " ")), func(t *testing.T) {
				for _, f := range tc.files {
					if !preCommitSelects(h, f) {
						t.Fatalf("%s does not select %s", id, f)
					}
				}
				words, err := shlexSplit(h.Entry)
				if err != nil {
					t.Fatal(err)
				}
				args := append(append(words[1:], tc.args...), tc.files...)
				r := NewTest(t).WithEnv("KUBECONFIG="+filepath.Join(t.TempDir(), "none")).Run(words[0], args...)
				out := r.Stdout + r.Stderr
				if r.Code != tc.code || !strings.Contains(out, tc.want) {
					t.Errorf("exit %d, want %d and an output with %q:\n%s", r.Code, tc.code, tc.want, out)
				}
				if tc.hook == "prune" && strings.Contains(r.Stdout, "apiVersion:") {
					t.Errorf("the objects printed:\n%s", r.Stdout)
				}
			})
		}
	}
}

// preCommitSelects reports whether pre-commit gives the hook the file:
// files and exclude are Python regular expressions searched in the path
// (the hooks' are also Go's); types and types_or are identify's tags, of
// which the hooks use yaml and json, given by the extension.
func preCommitSelects(h preCommitHook, file string) bool {
	if h.Files != "" && !regexp.MustCompile(h.Files).MatchString(file) {
		return false
	}
	if h.Exclude != "" && regexp.MustCompile(h.Exclude).MatchString(file) {
		return false
	}
	tags := map[string][]string{".yaml": {"yaml"}, ".yml": {"yaml"}, ".json": {"json"}}[filepath.Ext(file)]
	for _, tag := range h.Types {
		if !slices.Contains(tags, tag) {
			return false
		}
	}
	return len(h.TypesOr) == 0 || slices.ContainsFunc(h.TypesOr, func(tag string) bool { return slices.Contains(tags, tag) })
}

// shlexSplit splits a command line as Python's shlex.split does (POSIX
// mode), which pre-commit applies to an entry: words split at blanks,
// single quotes literal, double quotes with \ escaping \ and ", a
// backslash outside quotes escaping the next character.
func shlexSplit(s string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("no closing quotation")
			}
			word.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				word.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf("no closing quotation")
			}
			inWord = true
		case c == '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("no escaped character")
			}
			i++
			word.WriteByte(s[i])
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// TestShlexSplit checks the splitter on what Python's shlex.split gives.
// (Runs with -short.)
func TestShlexSplit(t *testing.T) {
	for in, want := range map[string][]string{
		`sh -c 'a "b" \c' --`:     {"sh", "-c", `a "b" \c`, "--"},
		`a  "b \" \\ \x" c\ d`:    {"a", `b " \ \x`, "c d"},
		"x\n y\t''":               {"x", "y", ""},
		`a'b'"c"`:                 {"abc"},
		`grep "k\"?[[:space:]]:"`: {"grep", `k"?[[:space:]]:`},
	} {
		got, err := shlexSplit(in)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("shlexSplit(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`'a`, `"a`, `a\`} {
		if _, err := shlexSplit(in); err == nil {
			t.Errorf("shlexSplit(%q): no error", in)
		}
	}
}

// TestPreCommitHookFileNames runs each hook, with args and without, on
// committed files whose names a flag parser or -f's comma-separated list
// would misread: a file named --report=values.yaml is checked, not taken
// for the flag (which overwrote values.yaml); names with a comma, quotes,
// blanks, a leading dash and a line break reach kubectl-crd intact, each
// named in its findings.
func TestPreCommitHookFileNames(t *testing.T) {
	hooks := readPreCommitHooks(t)
	crd, err := os.ReadFile(filepath.Join(repoRoot(), "examples/maintenance/crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	job, err := os.ReadFile(filepath.Join(repoRoot(), "examples/maintenance/job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"--report=values.yaml", "a,b.yaml", `say "x".yaml`, "it's here.yaml", "-f.yaml", "two\nlines.yaml", `a,"b",c.yaml`, "-.yaml"}
	for _, tc := range []struct {
		hook  string
		args  []string
		crds  bool // the files are CRDs, else jobs beside crd.yaml
		names []string
		code  int
	}{
		{"prune", nil, false, []string{"--report=values.yaml"}, 1},
		{"prune", nil, false, all, 1},
		{"prune", []string{"--crd-file=crd.yaml", "--ignore-missing-crds"}, false, all, 1},
		{"explain-structural", nil, true, all, 0},
		{"explain-structural", []string{"--version=v1"}, true, all, 0},
	} {
		names := tc.names
		for _, suffix := range []string{"", "-system"} {
			id := "kubectl-crd-" + tc.hook + suffix
			t.Run(fmt.Sprintf("%s %q %d files", id, tc.args, len(names)), func(t *testing.T) {
				dir := t.TempDir()
				files := []string{}
				write := func(name string, data []byte) {
					if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				write("values.yaml", []byte("keep: me\n"))
				if !tc.crds && tc.args == nil {
					write("crd.yaml", crd)
					files = append(files, "crd.yaml")
				} else if !tc.crds {
					write("crd.yaml", crd)
				}
				for _, name := range names {
					if !preCommitSelects(hooks[id], name) {
						t.Fatalf("%s does not select %q", id, name)
					}
					if tc.crds {
						write(name, crd)
					} else {
						write(name, job)
					}
					files = append(files, name)
				}
				words, err := shlexSplit(hooks[id].Entry)
				if err != nil {
					t.Fatal(err)
				}
				args := append(append(words[1:], tc.args...), files...)
				r := NewTest(t).WithDir(dir).WithEnv("KUBECONFIG="+filepath.Join(t.TempDir(), "none")).Run(words[0], args...)
				out := r.Stdout + r.Stderr
				if r.Code != tc.code {
					t.Errorf("exit %d, want %d:\n%s", r.Code, tc.code, out)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "values.yaml")); string(b) != "keep: me\n" {
					t.Errorf("values.yaml was overwritten:\n%s", b)
				}
				for _, name := range names {
					shown := strings.ReplaceAll(name, "\n", `\n`)
					if tc.hook == "prune" && !strings.Contains(out, `pruned unknown field "spec.privileged" (`+shown+":17)") {
						t.Errorf("%q is not checked:\n%s", name, out)
					}
					if tc.hook == "explain-structural" && !strings.Contains(out, shown) {
						t.Errorf("%q is not checked:\n%s", name, out)
					}
				}
			})
		}
	}
}
