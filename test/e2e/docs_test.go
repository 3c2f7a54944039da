package e2e

// The user docs (docs/*.md) are tested here, so that they cannot rot.
//
// A fenced block with the info string "console" is run. A line starting
// with "$ " is a command (a line ending in "\" continues it on the next
// line); the lines after it, up to the next "$ " line or the end of the
// block, are its expected output: stdout and stderr together, on one pipe,
// in the order the command writes them. A line that is exactly "..." in
// the expected output matches any number of lines. Exit codes are not
// checked apart: a page that shows one writes `; echo "exit $?"`.
//
// Each command runs in its own `bash -c`, in the order of the page, so that
// what earlier commands create (files, objects in the cluster) is there for
// later ones. The working directory is a fresh copy of the repository per
// page (everything but .git, _output and dist), so pages use paths such as
// examples/maintenance/job.yaml and may write files without touching the
// checkout. PATH: the built kubectl-crd, the built kubectl (from
// k8s.io/kubectl, test/kubectl), the built kustomize, then the system PATH.
// KUBECONFIG: the test API server's (context crd-test, namespace default;
// crd-test-other has namespace other, crd-test-denied a user refused
// everything). HOME: a temporary directory per page. The Go environment
// (GOMODCACHE, GOCACHE, GOFLAGS, ...) is passed through.
//
// Two normalizations: the test API server's address, which differs per run
// (KUBECTL_CRD_E2E_APISERVER_PORT), is printed as https://127.0.0.1:6443;
// and spaces at the end of lines are ignored, on both sides (editors strip
// them from Markdown; some server messages end in one).
//
// Cluster state: before and after each page, every CRD of the test API
// server but the legacy one it starts with (testdata/legacy-crd.yaml) is
// deleted, with the custom resources it serves; a page shows its own setup
// (kubectl apply -f examples/...). Run whole pages: with -run selecting a
// single command, the commands before it in its page do not run.
//
// Any other block whose info string is a shell's (sh, bash, shell, ...) or
// that has none but starts with "$ " must follow an HTML comment
// `<!-- not run: REASON -->`; a console block after one is not run either.
//
// go test ./test/e2e -run TestDocs -update-docs rewrites the expected output
// of every command whose output did not match, from what it printed: for
// authors, who review the diff (and put back "..." where output varies).

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/filter"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the expected output of the console blocks of docs/*.md that do not match (review the diff)")

// docsAPIServer is how the docs show the test API server's address.
const docsAPIServer = "https://127.0.0.1:6443"

// docsCommandTimeout bounds one command of a page (go build included).
const docsCommandTimeout = 3 * time.Minute

// docPage is a page of docs/ with its fenced blocks.
type docPage struct {
	name   string   // file name in docs/
	lines  []string // the file's lines, without their line ends
	blocks []*docBlock
	// problems are what makes the page untestable: unclosed fences, console
	// blocks that do not start with a command, command blocks that are
	// neither run nor explained.
	problems []string
}

// docBlock is a fenced block.
type docBlock struct {
	line   int    // 1-based line of the opening fence
	info   string // the info string's first word
	indent string // the opening fence's indentation, removed from its lines
	notRun string // the reason of a preceding <!-- not run: REASON -->
	// commands of a console block.
	commands []*docCommand
}

// run reports whether the harness runs the block.
func (b *docBlock) run() bool { return b.info == "console" && b.notRun == "" }

// docCommand is a "$ " command of a console block and its expected output.
type docCommand struct {
	line int    // 1-based line of its "$ " line
	text string // the command for bash, continuation lines joined with "\n"
	// want is the expected output, lines [wantFrom, wantTo) of the page.
	want             []string
	wantFrom, wantTo int
}

var (
	fenceRE  = regexp.MustCompile("^([ \t]*)(```+|~~~+)[ \t]*([^ \t`]*)")
	notRunRE = regexp.MustCompile(`^<!--\s*not run:\s*(.*?)\s*-->$`)
)

// shellInfo are the info strings of blocks with commands a user would type.
var shellInfo = map[string]bool{
	"sh": true, "bash": true, "shell": true, "zsh": true, "fish": true, "ksh": true, "console": true,
	"shell-session": true, "shellsession": true, "sh-session": true, "bash-session": true, "terminal": true,
	"powershell": true, "pwsh": true, "ps1": true, "posh": true, "bat": true, "batch": true, "cmd": true, "doscon": true,
}

func readDocPages(t *testing.T) []*docPage {
	t.Helper()
	dir := filepath.Join(repoRoot(), "docs")
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pages in %s (%v)", dir, err)
	}
	var pages []*docPage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, parseDocPage(filepath.Base(f), string(data)))
	}
	return pages
}

// parseDocPage finds the fenced blocks of a page and the commands of its
// console blocks.
func parseDocPage(name, text string) *docPage {
	p := &docPage{name: name, lines: strings.Split(strings.TrimSuffix(text, "\n"), "\n")}
	problem := func(line int, format string, args ...interface{}) {
		p.problems = append(p.problems, fmt.Sprintf("docs/%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	for i := 0; i < len(p.lines); i++ {
		m := fenceRE.FindStringSubmatch(p.lines[i])
		if m == nil {
			continue
		}
		b := &docBlock{line: i + 1, indent: m[1], info: strings.ToLower(m[3])}
		fence := m[2]
		// The block's lines, up to the closing fence.
		from := i + 1
		to := from
		for ; to < len(p.lines); to++ {
			l := strings.TrimPrefix(p.lines[to], b.indent)
			if strings.HasPrefix(l, fence[:1]) && strings.TrimLeft(strings.TrimSpace(l), fence[:1]) == "" && len(strings.TrimSpace(l)) >= len(fence) {
				break
			}
		}
		if to == len(p.lines) {
			problem(b.line, "the fenced block is not closed")
			return p
		}
		i = to
		for prev := b.line - 2; prev >= 0; prev-- {
			l := strings.TrimSpace(p.lines[prev])
			if l == "" {
				continue
			}
			if m := notRunRE.FindStringSubmatch(l); m != nil {
				b.notRun = m[1]
				if b.notRun == "" {
					problem(prev+1, "<!-- not run: --> without a reason")
				}
			}
			break
		}
		p.blocks = append(p.blocks, b)

		startsWithPrompt := from < to && strings.HasPrefix(strings.TrimPrefix(p.lines[from], b.indent), "$ ")
		if b.info != "console" && (shellInfo[b.info] || b.info == "" && startsWithPrompt) && b.notRun == "" {
			problem(b.line, "a block of commands (%q) that is not run: make it a console block with the output, or precede it with <!-- not run: REASON -->", b.info)
		}
		if b.info != "console" {
			continue
		}
		for j := from; j < to; j++ {
			l := strings.TrimPrefix(p.lines[j], b.indent)
			if !strings.HasPrefix(l, "$ ") {
				if len(b.commands) == 0 {
					problem(j+1, "a console block starts with a \"$ \" command")
					break
				}
				c := b.commands[len(b.commands)-1]
				c.want = append(c.want, strings.TrimRight(l, " \t"))
				c.wantTo = j + 1
				continue
			}
			c := &docCommand{line: j + 1, text: strings.TrimPrefix(l, "$ ")}
			for strings.HasSuffix(l, `\`) && j+1 < to {
				j++
				l = strings.TrimPrefix(p.lines[j], b.indent)
				c.text += "\n" + l
			}
			c.wantFrom, c.wantTo = j+1, j+1
			b.commands = append(b.commands, c)
		}
	}
	return p
}

// TestDocsBlocks: every block of commands in the docs is run or says why
// not, and every console block is well formed. (Runs with -short.)
func TestDocsBlocks(t *testing.T) {
	run := 0
	for _, p := range readDocPages(t) {
		for _, pr := range p.problems {
			t.Error(pr)
		}
		for _, b := range p.blocks {
			if b.run() {
				run += len(b.commands)
			}
		}
	}
	if run == 0 {
		t.Error("no command of docs/*.md is run")
	}
}

// TestDocsParse checks the parser on a page with every kind of block.
func TestDocsParse(t *testing.T) {
	page := strings.Join([]string{
		"# Title",
		"```console",
		"$ echo a \\",
		"  b",
		"a b  ", // spaces at the end of a line are ignored
		"$ true",
		"```",
		"<!-- not run: needs the internet -->",
		"",
		"```sh",
		"go install example.com/x@latest",
		"```",
		"```yaml",
		"a: 1",
		"```",
		"  ~~~console",
		"  $ printf 'x\\n\\ny\\n'",
		"  x",
		"",
		"  ...",
		"  ~~~",
		"```bash",
		"rm -rf /",
		"```",
		"```",
		"$ unlabeled",
		"```",
		"```console",
		"output before a command",
		"```",
	}, "\n") + "\n"
	p := parseDocPage("test.md", page)
	type cmd struct {
		Line     int
		Text     string
		Want     []string
		From, To int
	}
	var got [][]cmd
	var info []string
	for _, b := range p.blocks {
		info = append(info, fmt.Sprintf("%d %s run=%v", b.line, b.info, b.run()))
		var cs []cmd
		for _, c := range b.commands {
			cs = append(cs, cmd{c.line, c.text, c.want, c.wantFrom, c.wantTo})
		}
		got = append(got, cs)
	}
	wantInfo := []string{"2 console run=true", "10 sh run=false", "13 yaml run=false", "16 console run=true", "22 bash run=false", "25  run=false", "28 console run=true"}
	if diff := cmp.Diff(wantInfo, info); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	wantCmds := [][]cmd{
		{{3, "echo a \\\n  b", []string{"a b"}, 4, 5}, {6, "true", nil, 6, 6}},
		nil, nil,
		{{17, `printf 'x\n\ny\n'`, []string{"x", "", "..."}, 17, 20}},
		nil, nil, nil,
	}
	if diff := cmp.Diff(wantCmds, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	wantProblems := []string{
		`docs/test.md:22: a block of commands ("bash") that is not run: make it a console block with the output, or precede it with <!-- not run: REASON -->`,
		`docs/test.md:25: a block of commands ("") that is not run: make it a console block with the output, or precede it with <!-- not run: REASON -->`,
		`docs/test.md:29: a console block starts with a "$ " command`,
	}
	if diff := cmp.Diff(wantProblems, p.problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// matchOutput reports whether got matches want, where a line "..." of want
// matches any number of lines.
func matchOutput(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchOutput(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchOutput(want[1:], got[1:])
}

func TestDocsMatchOutput(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		match     bool
	}{
		{nil, nil, true},
		{nil, []string{"a"}, false},
		{[]string{"a"}, nil, false},
		{[]string{"..."}, nil, true},
		{[]string{"..."}, []string{"a", "b"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "b", "c", "d"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "d"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "b", "c"}, false},
		{[]string{"a", "..."}, []string{"b"}, false},
		{[]string{"a", "...", "b", "..."}, []string{"a", "x", "b", "y", "b"}, true},
		{[]string{"a", " ..."}, []string{"a", "b"}, false},
	} {
		if got := matchOutput(tc.want, tc.got); got != tc.match {
			t.Errorf("matchOutput(%q, %q) = %v", tc.want, tc.got, got)
		}
	}
}

// lineDiff shows want and got line by line: "-" only in want, "+" only in
// got (a longest common subsequence; "..." is compared as a line).
func lineDiff(want, got []string) string {
	// lcs[i][j]: the longest common subsequence of want[i:] and got[j:].
	lcs := make([][]int, len(want)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && want[i] == got[j]:
			fmt.Fprintf(&b, "  %s\n", want[i])
			i, j = i+1, j+1
		case i < len(want) && (j == len(got) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&b, "- %s\n", want[i])
			i++
		default:
			fmt.Fprintf(&b, "+ %s\n", got[j])
			j++
		}
	}
	return b.String()
}

func TestDocsLineDiff(t *testing.T) {
	got := lineDiff([]string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	want := "  a\n- b\n+ x\n  c\n+ d\n"
	if got != want {
		t.Errorf("lineDiff:\n%s\nwant:\n%s", got, want)
	}
}

// outputLines splits a command's output into lines; a last line without a
// line end is a line too.
func outputLines(out string) []string {
	if out == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// TestDocs runs the console blocks of every page against the test API server.
func TestDocs(t *testing.T) {
	requireOwnCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := apiextensionsclient.NewForConfigOrDie(cfg)
	keep, err := legacyCRDName()
	if err != nil {
		t.Fatal(err)
	}
	pathList := []string{binDir, filepath.Dir(kubectls[0].Path), filepath.Dir(kustomize), os.Getenv("PATH")}
	env := append(goEnv(t), "PATH="+strings.Join(pathList, string(os.PathListSeparator)), "KUBECONFIG="+cluster.kubeconfig)
	server := "https://127.0.0.1:" + strconv.Itoa(apiserverPort)

	for _, p := range readDocPages(t) {
		if len(p.problems) > 0 {
			t.Errorf("docs/%s cannot be run (see TestDocsBlocks): %s", p.name, strings.Join(p.problems, "; "))
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			if err := deleteCRDs(client, keep); err != nil {
				t.Fatalf("before the page: %v", err)
			}
			t.Cleanup(func() {
				if err := deleteCRDs(client, keep); err != nil {
					t.Errorf("after the page: %v", err)
				}
			})
			dir := copyRepo(t)
			env := append(slices.Clip(env), "HOME="+t.TempDir())
			updates := map[*docCommand][]string{}
			for _, b := range p.blocks {
				if !b.run() {
					continue
				}
				t.Run(fmt.Sprintf("line %d", b.line), func(t *testing.T) {
					for _, c := range b.commands {
						first, _, _ := strings.Cut(c.text, "\n")
						t.Run(fmt.Sprintf("%d %s", c.line, first), func(t *testing.T) {
							out := runDocCommand(t, dir, env, c.text)
							got := outputLines(strings.ReplaceAll(out, server, docsAPIServer))
							if matchOutput(c.want, got) {
								return
							}
							if *updateDocs {
								updates[c] = got
								t.Logf("docs/%s:%d: expected output rewritten", p.name, c.line)
								return
							}
							t.Errorf("docs/%s:%d: $ %s\noutput (-want +got):\n%s", p.name, c.line, c.text, lineDiff(c.want, got))
						})
					}
				})
			}
			if len(updates) > 0 {
				if err := rewriteDocPage(p, updates); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// runDocCommand runs a command with bash in dir; stdout and stderr share
// one pipe, so the output keeps the order of the writes.
func runDocCommand(t *testing.T, dir string, env []string, command string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), docsCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The whole process group goes on a timeout: pipelines leave no orphans.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("$ %s\ntimed out after %v; output so far:\n%s", command, docsCommandTimeout, out.String())
	case err != nil && !errors.As(err, &exitErr):
		t.Fatalf("$ %s\n%v", command, err)
	}
	return out.String()
}

// rewriteDocPage writes new expected output into the page's file.
func rewriteDocPage(p *docPage, updates map[*docCommand][]string) error {
	lines := slices.Clone(p.lines)
	// From the bottom up, so that the line numbers above stay right.
	var cmds []*docCommand
	for c := range updates {
		cmds = append(cmds, c)
	}
	slices.SortFunc(cmds, func(a, b *docCommand) int { return b.line - a.line })
	for _, c := range cmds {
		indent := ""
		for _, b := range p.blocks {
			if slices.Contains(b.commands, c) {
				indent = b.indent
			}
		}
		var repl []string
		for _, l := range updates[c] {
			if l != "" {
				l = indent + l
			}
			repl = append(repl, l)
		}
		lines = slices.Replace(lines, c.wantFrom, c.wantTo, repl...)
	}
	return os.WriteFile(filepath.Join(repoRoot(), "docs", p.name), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// goEnv passes the Go environment on, with the module and build caches
// named explicitly: HOME changes, and a go build in a page must not start
// from empty caches.
func goEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "CGO_") {
			env = append(env, kv)
		}
	}
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, name := range []string{"GOMODCACHE", "GOCACHE", "GOPATH", "GOROOT"} {
		if i < len(vals) {
			env = append(env, name+"="+vals[i])
		}
	}
	return env
}

// copyRepo copies the repository, without .git, _output and dist, into a
// temporary directory.
func copyRepo(t *testing.T) string {
	t.Helper()
	root := repoRoot()
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" || d.IsDir() && (rel == "_output" || rel == "dist") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copying the repository: %v", err)
	}
	return dst
}

// legacyCRDName is the CRD the test API server starts with.
func legacyCRDName() (string, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot(), "test", "e2e", "testdata", "legacy-crd.yaml"))
	if err != nil {
		return "", err
	}
	var crd struct {
		Metadata struct{ Name string }
	}
	if err := yaml.Unmarshal(data, &crd); err != nil || crd.Metadata.Name == "" {
		return "", fmt.Errorf("testdata/legacy-crd.yaml: no name (%v)", err)
	}
	return crd.Metadata.Name, nil
}

// deleteCRDs deletes every CRD but keep, and waits until they are gone.
func deleteCRDs(client apiextensionsclient.Interface, keep string) error {
	// Minutes: on a loaded machine (CI builds the release beside this suite) the server's
	// CRD finalizer can back off for a while before it removes the custom resources.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	list, err := crds.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, c := range list.Items {
		if c.Name != keep && c.DeletionTimestamp == nil {
			if err := crds.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil {
				return fmt.Errorf("deleting CRD %s: %v", c.Name, err)
			}
		}
	}
	var left []string
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := crds.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		left = left[:0]
		for _, c := range list.Items {
			if c.Name != keep {
				// The conditions say where the deletion stands (Terminating, InstanceDeletionFailed).
				var conds []string
				for _, cond := range c.Status.Conditions {
					conds = append(conds, fmt.Sprintf("%s=%s %s", cond.Type, cond.Status, cond.Message))
				}
				left = append(left, c.Name+" ["+strings.Join(conds, "; ")+"]")
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("CRDs not deleted after 5 minutes: %s", strings.Join(left, ", "))
	}
	return nil
}

// commandPages names the docs page of each command of kubectl crd; a new
// command fails TestDocsCommandPages until it has one.
var commandPages = map[string]string{
	"explain-structural": "explain-structural.md",
	"prune":              "prune.md",
	"check-update":       "check-update.md",
	"krm":                "krm-function.md",
	"lower-mutability":   "mutability.md",
	"test":               "test.md",
	"holes":              "holes.md",
	"helm":               "upgrades.md",
	"version":            "getting-started.md",
	// cobra's own commands: their --help is their page.
	"help":       "",
	"completion": "",
}

// globalFlagsPage documents the flags every command takes (the kubeconfig flags).
const globalFlagsPage = "README.md"

// TestDocsCommandPages: the page of every command names each of its flags
// (and their shorthands), as --name and -x, so that a new flag without docs
// fails, and shows the commands of its --help examples. Flags and examples
// come from the cobra command tree. (Runs with -short.)
func TestDocsCommandPages(t *testing.T) {
	root := plugin.NewCmdCRD(genericiooptions.NewTestIOStreamsDiscard())
	root.AddCommand(filter.NewCommand()) // as cmd/kubectl-crd does
	read := func(page string) (string, bool) {
		data, err := os.ReadFile(filepath.Join(repoRoot(), "docs", page))
		if errors.Is(err, fs.ErrNotExist) {
			return "", false
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(data), true
	}
	check := func(page, text string, flags *pflag.FlagSet, what string) {
		flags.VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			if !mentionsFlag(text, "--"+f.Name) {
				t.Errorf("docs/%s does not mention --%s (%s)", page, f.Name, what)
			}
			if f.Shorthand != "" && !mentionsFlag(text, "-"+f.Shorthand) {
				t.Errorf("docs/%s does not mention -%s, the shorthand of --%s (%s)", page, f.Shorthand, f.Name, what)
			}
		})
	}
	for _, cmd := range root.Commands() {
		page, ok := commandPages[cmd.Name()]
		if !ok {
			t.Errorf("kubectl crd %s has no docs page: add it to commandPages", cmd.Name())
			continue
		}
		if page == "" {
			continue
		}
		text, ok := read(page)
		if !ok {
			t.Errorf("docs/%s, the page of kubectl crd %s, does not exist", page, cmd.Name())
			continue
		}
		check(page, text, cmd.LocalNonPersistentFlags(), "kubectl crd "+cmd.Name())
		for _, l := range strings.Split(cmd.Example, "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") && !strings.Contains(text, l) {
				t.Errorf("docs/%s does not show the example of kubectl crd %s --help: %s", page, cmd.Name(), l)
			}
		}
	}
	text, ok := read(globalFlagsPage)
	if !ok {
		t.Fatalf("docs/%s does not exist", globalFlagsPage)
	}
	check(globalFlagsPage, text, root.PersistentFlags(), "a flag of every command")
}

// mentionsFlag reports whether text has flag as a word of its own: --all
// is not mentioned by --all-namespaces.
func mentionsFlag(text, flag string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], flag)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(flag)
		before := start == 0 || !isFlagByte(text[start-1])
		after := end == len(text) || !isFlagByte(text[end])
		if before && after {
			return true
		}
		i = end
	}
}

func isFlagByte(c byte) bool {
	return c == '-' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func TestDocsMentionsFlag(t *testing.T) {
	for _, tc := range []struct {
		text, flag string
		want       bool
	}{
		{"use `--all`", "--all", true},
		{"--all-namespaces", "--all", false},
		{"-f, --filename", "-f", true},
		{"--filename", "-f", false},
		{"kubectl-f", "-f", false},
		{"(-R)", "-R", true},
		{"x --all=true", "--all", true},
		{"--al", "--all", false},
	} {
		if got := mentionsFlag(tc.text, tc.flag); got != tc.want {
			t.Errorf("mentionsFlag(%q, %q) = %v", tc.text, tc.flag, got)
		}
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: docs/README.md links every page, and every relative link
// of the docs (outside fenced blocks) leads to a file that exists (and, for
// #anchors into pages, to a heading). (Runs with -short.)
func TestDocsLinks(t *testing.T) {
	pages := readDocPages(t)
	index := ""
	for _, p := range pages {
		if p.name == "README.md" {
			index = strings.Join(p.lines, "\n")
		}
	}
	if index == "" {
		t.Fatal("docs/README.md, the index of the docs, does not exist")
	}
	for _, p := range pages {
		if p.name != "README.md" && !strings.Contains(index, "]("+p.name+")") {
			t.Errorf("docs/README.md does not link %s", p.name)
		}
		inFence := false
		for i, l := range p.lines {
			if fenceRE.MatchString(l) {
				inFence = !inFence
				continue
			}
			if inFence {
				continue // code and command output, not Markdown: `[a-z]([-a-z]*)` is a regex there
			}
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := filepath.Join(repoRoot(), "docs", p.name)
				if file != "" {
					path = filepath.Join(repoRoot(), "docs", filepath.FromSlash(file))
				}
				data, err := os.ReadFile(path)
				if err != nil {
					if info, serr := os.Stat(path); serr == nil && info.IsDir() && anchor == "" {
						continue
					}
					t.Errorf("docs/%s:%d: link %s: %v", p.name, i+1, target, err)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(headingAnchors(string(data)), anchor) {
					t.Errorf("docs/%s:%d: link %s: no heading with that anchor in %s", p.name, i+1, target, filepath.Base(path))
				}
			}
		}
	}
}

// headingAnchors are the anchors GitHub makes of a page's headings:
// lower case, punctuation dropped, spaces to dashes, -1, -2 for repeats.
func headingAnchors(page string) []string {
	var anchors []string
	seen := map[string]int{}
	inFence := ""
	for _, l := range strings.Split(page, "\n") {
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			switch {
			case inFence == "":
				inFence = m[2][:1]
			case strings.HasPrefix(strings.TrimSpace(l), inFence) && m[3] == "":
				inFence = ""
			}
			continue
		}
		if inFence != "" || !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", a, n))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	}
	return anchors
}
