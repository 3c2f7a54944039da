package filter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/exitcode"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/catalog"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// runStandalone runs "kubectl crd krm ARGS..." with stdin and returns its
// exit code, stdout and stderr.
func runStandalone(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand()
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	code := 0
	var coded *exitcode.Error
	if errors.As(err, &coded) {
		code = coded.Code
	} else if err != nil {
		t.Fatalf("error without an exit code: %v", err)
	}
	return code, out.String(), errOut.String()
}

// limitedEndless is stdin that never ends, as /dev/zero, but fails the
// test's read past twice the document limit instead of filling memory.
type limitedEndless struct{ n int }

func (e *limitedEndless) Read(p []byte) (int, error) {
	if e.n > 2*document.MaxDocumentBytes {
		return 0, errors.New("read on past twice the 64 MiB limit")
	}
	clear(p)
	e.n += len(p)
	return len(p), nil
}

// zeros is a file of more than 64 MiB of zero bytes and no line break, as
// much as the reader reads of /dev/zero before it stops (sparse: no disk).
func zeros(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "zeros")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(document.MaxDocumentBytes + 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return name
}

// The files of the standalone mode (config, resource files, stdin as "-")
// are read through the document reader: a document that never ends is
// refused once it passes 64 MiB, at its line, exit 2, nothing on stdout.
// kyaml's standalone mode read them whole with os.ReadFile: /dev/zero ran
// out of memory.
func TestStandaloneEndlessInputs(t *testing.T) {
	big := zeros(t)
	config := "testdata/prune/config.yaml"
	const refusal = ":1: a document of more than 64 MiB: kubectl-crd reads one document at a time and refuses larger ones"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"config", []string{big, "testdata/prune/input.yaml"}, "function config: " + big + refusal},
		{"resource file", []string{config, big}, big + refusal},
		{"resource file after others", []string{config, "testdata/prune/input.yaml", big}, big + refusal},
		{"stdin", []string{config, "-"}, "stdin" + refusal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runStandalone(t, &limitedEndless{}, tc.args...)
			if code != 2 || out != "" || !strings.HasPrefix(errOut, tc.want) {
				t.Errorf("exit %d, stdout %d bytes, stderr:\n%.300s\nwant exit 2 and\n%s", code, len(out), errOut, tc.want)
			}
		})
	}
}

// Resource files are held whole, as a ResourceList is: over 64 MiB in all,
// they are refused at the document that passes the limit.
func TestStandaloneResourcesBounded(t *testing.T) {
	dir := t.TempDir()
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: " + strings.Repeat("x", 1<<20) + "\n"
	var files []string
	for i := range 3 {
		name := filepath.Join(dir, fmt.Sprintf("f%d.yaml", i))
		if err := os.WriteFile(name, []byte(strings.Repeat(doc+"---\n", 25)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	code, out, errOut := runStandalone(t, strings.NewReader(""), append([]string{"testdata/prune/config.yaml"}, files...)...)
	want := files[2] + ":"
	if code != 2 || out != "" || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "more than 64 MiB of resources up to here") {
		t.Errorf("exit %d, stdout %d bytes, stderr:\n%.300s", code, len(out), errOut)
	}
}

// Each error of the config file says what is wrong with it, exit 2 (kyaml's
// standalone mode printed a blank line for a missing, empty or directory
// config).
func TestStandaloneConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.yaml", "")
	comments := write("comments.yaml", "# nothing\n---\n")
	two := write("two.yaml", "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\n---\napiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\n")
	invalid := write("invalid.yaml", "apiVersion: crd.kubectl.dev/v1alpha1\nkind: [CRDCheck\n")
	missing := filepath.Join(dir, "missing.yaml")
	const want = "want one document of apiVersion crd.kubectl.dev/v1alpha1, kind CRDCheck"
	for _, tc := range []struct {
		config string
		stdin  string
		files  []string
		want   string
	}{
		{config: missing, want: "function config: open " + missing + ": no such file or directory"},
		{config: empty, want: "function config: " + empty + ": empty, " + want},
		{config: comments, want: "function config: " + comments + ": empty, " + want},
		{config: "-", stdin: "", want: "function config: stdin: empty, " + want},
		{config: dir, want: "function config: " + dir + ": a directory, want a file"},
		{config: two, want: "function config: " + two + ":4: a second document, " + want},
		{config: invalid, want: "function config: " + invalid + ":2: invalid YAML"},
		{config: "-", files: []string{"-"}, want: "stdin (-) is read once: give it as the function config or as a resource file, not both"},
		{config: "testdata/prune/config.yaml", files: []string{dir}, want: "unable to read input file " + dir + ": " + dir + ": a directory, want a file"},
		{config: "testdata/prune/config.yaml", files: []string{missing}, want: "unable to read input file " + missing + ": open " + missing + ": no such file or directory"},
	} {
		t.Run(filepath.Base(tc.config), func(t *testing.T) {
			files := tc.files
			if files == nil {
				files = []string{"testdata/prune/input.yaml"}
			}
			code, out, errOut := runStandalone(t, strings.NewReader(tc.stdin), append([]string{tc.config}, files...)...)
			if code != 2 || out != "" || !strings.HasPrefix(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and\n%s", code, out, errOut, tc.want)
			}
		})
	}
	// The config from stdin, the resources from a file.
	config, err := os.ReadFile("testdata/prune/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runStandalone(t, bytes.NewReader(config), "-", "testdata/prune/input.yaml"); code != 0 || !strings.Contains(out, "# the widget of team a") {
		t.Errorf("config from stdin: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// wideObject is a Widget (testdata/prune's CRD) with n fields its schema
// does not have, which pruning removes.
func wideObject(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: wide\n  namespace: team-a\nspec:\n  size: 3\n")
	for i := range n {
		fmt.Fprintf(&b, "  f%06d: 1\n", i)
	}
	return b.Bytes()
}

// allocated is the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A pruned field costs the standalone function about what it costs the
// engine's prune, as the plugin runs it: kyaml's standalone mode marshalled
// a result per field to YAML, results it never writes unwrapped, some 40 KB
// each (3.8 GB for an object of 100,000 pruned fields).
func TestStandalonePrunedFieldCost(t *testing.T) {
	const fields = 4000
	dir := t.TempDir()
	object := wideObject(fields)
	input := filepath.Join(dir, "wide.yaml")
	if err := os.WriteFile(input, object, 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("testdata/prune/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crdText, _, _ := bytes.Cut(text, []byte("\n---\n")) // the Widget CRD
	crds, err := document.Read(bytes.NewReader(crdText), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The engine alone: read the object, check it (catalog.Check prunes
	// it, as the plugin runs it), encode the result.
	engine := allocated(func() {
		cat := catalog.New(catalog.Options{Server: strategy.Validators{}, Namespaces: catalog.Namespaces{Offline: true}})
		for _, d := range crds {
			if _, _, err := cat.AddPrepared(cat.PrepareCRD(d)); err != nil {
				t.Fatal(err)
			}
		}
		docs, err := document.Read(bytes.NewReader(object), input)
		if err != nil {
			t.Fatal(err)
		}
		v, err := cat.Check(context.Background(), docs[0], catalog.CheckOptions{})
		if err != nil || len(v.Result.Changes) != fields {
			t.Fatalf("%v, %d changes", err, len(v.Result.Changes))
		}
		if _, err := docs[0].Encode(); err != nil {
			t.Fatal(err)
		}
	})
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\ncrdPaths: ["+filepath.Join(dir, "crd.yaml")+"]\nloadRestrictor: LoadRestrictionsNone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crdText, 0o644); err != nil {
		t.Fatal(err)
	}
	var code int
	var out string
	function := allocated(func() { code, out, _ = runStandalone(t, strings.NewReader(""), config, input) })
	if code != 0 || strings.Contains(out, "f000001") {
		t.Fatalf("exit %d, stdout:\n%.300s", code, out)
	}
	t.Logf("per pruned field: the function %d bytes, the engine %d", function/fields, engine/fields)
	if function > 4*engine {
		t.Errorf("the function allocates %d bytes per pruned field, more than 4 times the engine's %d", function/fields, engine/fields)
	}
}
