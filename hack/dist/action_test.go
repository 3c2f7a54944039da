package main

// The GitHub Action (action.yml at the repository root) is tested here,
// where the release it installs is built: its steps run as GitHub's runner
// runs a composite action's bash steps, against a local directory of
// releases made by make dist's program for the host's platform.

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/release"
)

// actionFile is the part of action.yml's schema the action uses.
type actionFile struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Author      string `json:"author"`
	Branding    struct {
		Icon  string `json:"icon"`
		Color string `json:"color"`
	} `json:"branding"`
	Inputs map[string]struct {
		Description string `json:"description"`
		Required    bool   `json:"required"`
		Default     string `json:"default"`
	} `json:"inputs"`
	Outputs map[string]struct {
		Description string `json:"description"`
		Value       string `json:"value"`
	} `json:"outputs"`
	Runs struct {
		Using string       `json:"using"`
		Steps []actionStep `json:"steps"`
	} `json:"runs"`
}

type actionStep struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Shell            string            `json:"shell"`
	WorkingDirectory string            `json:"working-directory"`
	Env              map[string]string `json:"env"`
	Run              string            `json:"run"`
}

func readAction(t *testing.T) *actionFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.UnmarshalStrict(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return &a
}

// expressionRE is a GitHub expression, ${{ ... }}.
var expressionRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// TestActionFile checks action.yml's inputs, outputs and steps: a composite
// action of bash steps, inputs reaching the scripts only through env (an
// expression in a script is pasted into it before bash reads it: script
// injection), expressions only of inputs and of earlier steps' outputs.
// (Runs with -short.)
func TestActionFile(t *testing.T) {
	a := readAction(t)
	if a.Name == "" || a.Description == "" || a.Runs.Using != "composite" {
		t.Errorf("name %q, description %q, runs.using %q; want a named composite action", a.Name, a.Description, a.Runs.Using)
	}
	for name, required := range map[string]bool{"version": true, "checksum": false, "args": false, "working-directory": false, "output-file": false, "release-url": false} {
		in, ok := a.Inputs[name]
		if !ok || in.Required != required || in.Description == "" {
			t.Errorf("input %s: %+v; want one with a description, required=%v", name, in, required)
		}
	}
	if len(a.Inputs) != 6 {
		t.Errorf("%d inputs, want the 6 the test knows", len(a.Inputs))
	}
	if !strings.HasPrefix(a.Inputs["release-url"].Default, release.Homepage+"/releases/download") {
		t.Errorf("release-url defaults to %s, not the releases of %s", a.Inputs["release-url"].Default, release.Homepage)
	}
	for _, name := range []string{"path", "exit-code"} {
		if o := a.Outputs[name]; o.Description == "" || o.Value == "" {
			t.Errorf("output %s: %+v", name, o)
		}
	}
	ids := map[string]bool{}
	for i, s := range a.Runs.Steps {
		if s.Shell != "bash" || s.ID == "" || s.Run == "" {
			t.Errorf("step %d: shell %q, id %q; want an identified bash step", i, s.Shell, s.ID)
		}
		if expressionRE.MatchString(s.Run) {
			t.Errorf("step %s: an expression in run: pass it through env", s.ID)
		}
		check := func(where, text string) {
			for _, m := range expressionRE.FindAllStringSubmatch(text, -1) {
				if rest, ok := strings.CutPrefix(m[1], "steps."); ok {
					if id, _, _ := strings.Cut(rest, "."); !ids[id] {
						t.Errorf("step %s, %s: %s is not an earlier step", s.ID, where, id)
					}
				} else if _, err := evalExpression(m[1], a, nil, nil); err != nil {
					t.Errorf("step %s, %s: %v", s.ID, where, err)
				}
			}
		}
		check("working-directory", s.WorkingDirectory)
		for k, v := range s.Env {
			check("env "+k, v)
		}
		ids[s.ID] = true
	}
}

// evalExpression evaluates the expressions the action may use:
// inputs.NAME (its value, else its default) and steps.ID.outputs.NAME.
func evalExpression(expr string, a *actionFile, inputs map[string]string, outputs map[string]map[string]string) (string, error) {
	if name, ok := strings.CutPrefix(expr, "inputs."); ok {
		in, declared := a.Inputs[name]
		if !declared {
			return "", fmt.Errorf("${{ %s }}: no input %s", expr, name)
		}
		if v, ok := inputs[name]; ok {
			return v, nil
		}
		return in.Default, nil
	}
	if rest, ok := strings.CutPrefix(expr, "steps."); ok {
		if id, name, ok := strings.Cut(rest, ".outputs."); ok {
			return outputs[id][name], nil
		}
	}
	return "", fmt.Errorf("${{ %s }}: an expression the test does not evaluate", expr)
}

// actionRun is a run of the action.
type actionRun struct {
	outputs map[string]string
	log     string
	// failed is the id of the step that failed, "" when none did.
	failed string
	// temp is RUNNER_TEMP.
	temp string
}

// runOptions are where a run happens: the workspace (GITHUB_WORKSPACE),
// and directories of stand-in tools before PATH, or instead of it.
type runOptions struct {
	workspace string
	pathFirst string
	pathOnly  bool
}

// runAction runs the action's steps as GitHub's runner runs a composite
// action: each step's expressions substituted, its script in a file run by
// `bash --noprofile --norc -eo pipefail FILE` (the runner's bash), the
// runner's files for outputs and PATH between steps; the first step that
// fails ends the run.
func runAction(t *testing.T, a *actionFile, inputs map[string]string, o runOptions) *actionRun {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for name := range inputs {
		if _, ok := a.Inputs[name]; !ok {
			t.Fatalf("input %s is not declared", name)
		}
	}
	for name, in := range a.Inputs {
		if _, ok := inputs[name]; in.Required && !ok {
			t.Fatalf("input %s is required", name)
		}
	}
	runner := t.TempDir()
	r := &actionRun{temp: filepath.Join(runner, "temp"), outputs: map[string]string{}}
	if err := os.Mkdir(r.temp, 0o755); err != nil {
		t.Fatal(err)
	}
	githubPath := filepath.Join(runner, "path")
	var log strings.Builder
	stepOutputs := map[string]map[string]string{}
	subst := func(text string) string {
		return expressionRE.ReplaceAllStringFunc(text, func(m string) string {
			v, err := evalExpression(expressionRE.FindStringSubmatch(m)[1], a, inputs, stepOutputs)
			if err != nil {
				t.Fatal(err)
			}
			return v
		})
	}
	for _, s := range a.Runs.Steps {
		script := filepath.Join(runner, s.ID+".sh")
		if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
			t.Fatal(err)
		}
		outFile := filepath.Join(runner, s.ID+".out")
		if err := os.WriteFile(outFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		path := os.Getenv("PATH")
		if o.pathOnly {
			path = o.pathFirst
		} else if o.pathFirst != "" {
			path = o.pathFirst + string(os.PathListSeparator) + path
		}
		for _, dir := range readLines(t, githubPath) {
			path = dir + string(os.PathListSeparator) + path
		}
		cmd := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = filepath.Join(o.workspace, subst(s.WorkingDirectory))
		cmd.Env = []string{"PATH=" + path, "HOME=" + runner, "RUNNER_TEMP=" + r.temp, "GITHUB_WORKSPACE=" + o.workspace,
			"GITHUB_OUTPUT=" + outFile, "GITHUB_PATH=" + githubPath, "GITHUB_ENV=" + filepath.Join(runner, "env"),
			"KUBECTL_CRD_CACHE_DIR=off"}
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+subst(v))
		}
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(&log, "== %s\n%s", s.ID, out)
		stepOutputs[s.ID] = readOutputs(t, outFile)
		if err != nil {
			r.failed = s.ID
			break
		}
	}
	for name, o := range a.Outputs {
		r.outputs[name] = subst(o.Value)
	}
	r.log = log.String()
	return r
}

// readOutputs reads a step's GITHUB_OUTPUT: NAME=VALUE lines, and
// NAME<<DELIMITER ... DELIMITER for values of several lines.
func readOutputs(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := readLines(t, file)
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var value []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				value = append(value, lines[i])
			}
			out[name] = strings.Join(value, "\n")
		} else if name, value, ok := strings.Cut(lines[i], "="); ok {
			out[name] = value
		} else {
			t.Errorf("GITHUB_OUTPUT: %q", lines[i])
		}
	}
	return out
}

func readLines(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines
}

// releases makes a directory of releases, RELEASES/VERSION/, holding the
// host's archive and SHA256SUMS of the host's release; change edits them
// first (nil: copied as they are).
func releases(t *testing.T, change func(name string, data []byte) []byte) string {
	t.Helper()
	host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	dir := filepath.Join(t.TempDir(), "releases")
	if err := os.MkdirAll(filepath.Join(dir, testVersion), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{host.Archive(), release.SumsFile} {
		b, err := os.ReadFile(filepath.Join(hostDist, name))
		if err != nil {
			t.Fatal(err)
		}
		if change != nil {
			b = change(name, b)
		}
		if err := os.WriteFile(filepath.Join(dir, testVersion, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAction installs the host's release with the action and runs
// commands with it; a release whose archive or SHA256SUMS do not match,
// or that the checksum input does not pin, installs nothing.
func TestAction(t *testing.T) {
	skipShort(t)
	if hostDist == "" {
		t.Skipf("no release for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	a := readAction(t)
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	good := "file://" + releases(t, nil)
	sums, err := os.ReadFile(filepath.Join(hostDist, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	sumsSHA := sha256.Sum256(sums)

	// installed reports whether the run left a binary in RUNNER_TEMP.
	installed := func(r *actionRun) bool {
		_, err := os.Stat(filepath.Join(r.temp, "kubectl-crd-"+testVersion, "kubectl-crd"))
		return err == nil
	}
	t.Run("version", func(t *testing.T) {
		r := runAction(t, a, map[string]string{"version": testVersion, "release-url": good, "args": "version"}, runOptions{workspace: repo})
		_, ran, _ := strings.Cut(r.log, "== run\n")
		// Its stdout is the log: between ::stop-commands::TOKEN and ::TOKEN::.
		ran = regexp.MustCompile(`(?m)^::(stop-commands::[0-9a-f]{32}|[0-9a-f]{32}::)\n`).ReplaceAllString(ran, "")
		if r.failed != "" || !strings.HasPrefix(ran, "kubectl-crd "+testVersion+"\n") || r.outputs["exit-code"] != "0" ||
			r.outputs["path"] != filepath.Join(r.temp, "kubectl-crd-"+testVersion, "kubectl-crd") {
			t.Errorf("failed %q, outputs %q:\n%s", r.failed, r.outputs, r.log)
		}
	})
	t.Run("a gate, quoted words, an output file, a working directory", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "stored.yaml")
		r := runAction(t, a, map[string]string{
			"version": testVersion, "release-url": good, "checksum": strings.ToUpper(hex.EncodeToString(sumsSHA[:])),
			"working-directory": "examples/maintenance", "output-file": out,
			"args": `prune --offline --crd-file "crd.yaml" -f 'job.yaml' --fail-on-prune`,
		}, runOptions{workspace: repo})
		stored, _ := os.ReadFile(out)
		if r.failed != "run" || r.outputs["exit-code"] != "1" || !strings.Contains(r.log, `pruned unknown field "spec.privileged" (job.yaml:17)`) ||
			!strings.Contains(string(stored), "kind: MaintenanceNightlyJob") || strings.Contains(r.log, "kind: MaintenanceNightlyJob") {
			t.Errorf("failed %q, outputs %q, output file:\n%s\nlog:\n%s", r.failed, r.outputs, stored, r.log)
		}
	})
	t.Run("args that do not split", func(t *testing.T) {
		r := runAction(t, a, map[string]string{"version": testVersion, "release-url": good, "args": `prune -f "job.yaml`}, runOptions{workspace: repo})
		if r.failed != "run" || r.outputs["exit-code"] != "2" || !strings.Contains(r.log, "::error title=kubectl-crd::args: a double quote is not closed: prune -f \"job.yaml") {
			t.Errorf("failed %q, outputs %q:\n%s", r.failed, r.outputs, r.log)
		}
	})
	t.Run("install only", func(t *testing.T) {
		r := runAction(t, a, map[string]string{"version": testVersion, "release-url": good + "/"}, runOptions{workspace: repo})
		if r.failed != "" || !installed(r) || r.outputs["exit-code"] != "" {
			t.Errorf("failed %q, outputs %q:\n%s", r.failed, r.outputs, r.log)
		}
		// crd-helm beside it, for Helm chart sources.
		if _, err := os.Stat(filepath.Join(r.temp, "kubectl-crd-"+testVersion, "crd-helm")); err != nil {
			t.Errorf("crd-helm not installed: %v", err)
		}
	})

	flip := func(b []byte, i int) []byte {
		b[i] ^= 1
		return b
	}
	for name, tc := range map[string]struct {
		inputs map[string]string
		want   string
	}{
		"SHA256SUMS corrupted": {map[string]string{"release-url": "file://" + releases(t, func(name string, b []byte) []byte {
			if name != release.SumsFile {
				return b
			}
			i := strings.Index(string(b), "  "+host.Archive()) - 1 // the last hex digit of the host's sum
			b[i] = map[bool]byte{true: '1', false: '0'}[b[i] == '0']
			return b
		})}, host.Archive() + " has sha256 "},
		"archive corrupted": {map[string]string{"release-url": "file://" + releases(t, func(name string, b []byte) []byte {
			if name == release.SumsFile {
				return b
			}
			return flip(b, len(b)/2)
		})}, host.Archive() + " has sha256 "},
		"checksum pin": {map[string]string{"release-url": good, "checksum": strings.Repeat("0", 64)}, "SHA256SUMS of " + testVersion + " has sha256 " + hex.EncodeToString(sumsSHA[:]) + ", but the checksum input is "},
		"no line":      {map[string]string{"release-url": "file://" + releases(t, func(name string, b []byte) []byte { return []byte{} })}, "SHA256SUMS of " + testVersion + " has no sha256 for " + host.Archive()},
		"not a tag":    {map[string]string{"release-url": good, "version": "latest"}, `version "latest" is not a release tag`},
		"no release":   {map[string]string{"release-url": good, "version": "v9.9.9"}, "cannot download " + good + "/v9.9.9/SHA256SUMS"},
	} {
		t.Run(name, func(t *testing.T) {
			inputs := map[string]string{"version": testVersion, "args": "version"}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			r := runAction(t, a, inputs, runOptions{workspace: repo})
			if r.failed != "install" || installed(r) || !strings.Contains(r.log, "::error title=kubectl-crd install::"+tc.want) {
				t.Errorf("failed %q, installed %v; want the install to fail with %q:\n%s", r.failed, installed(r), tc.want, r.log)
			}
		})
	}
}

// TestActionPlatforms runs the install step under a stand-in uname: each
// runner platform asks for its archive (only the host's is in the local
// releases), and other systems and architectures are refused by name.
func TestActionPlatforms(t *testing.T) {
	skipShort(t)
	if hostDist == "" {
		t.Skipf("no release for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	a := readAction(t)
	good := "file://" + releases(t, nil)
	host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	for _, tc := range []struct{ system, machine, want string }{
		{"Linux", "x86_64", "kubectl_crd_linux_amd64"},
		{"Linux", "aarch64", "kubectl_crd_linux_arm64"},
		{"Darwin", "arm64", "kubectl_crd_darwin_arm64"},
		{"Darwin", "x86_64", "kubectl_crd_darwin_amd64"},
		{"MINGW64_NT-10.0", "x86_64", "no release for the runner's system MINGW64_NT-10.0"},
		{"Linux", "riscv64", "no release for the runner's architecture riscv64"},
	} {
		t.Run(tc.system+"/"+tc.machine, func(t *testing.T) {
			bin := t.TempDir()
			uname := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in -s) echo %s ;; -m) echo %s ;; *) exit 2 ;; esac\n", tc.system, tc.machine)
			if err := os.WriteFile(filepath.Join(bin, "uname"), []byte(uname), 0o755); err != nil {
				t.Fatal(err)
			}
			r := runAction(t, a, map[string]string{"version": testVersion, "release-url": good}, runOptions{workspace: t.TempDir(), pathFirst: bin})
			want := strings.ReplaceAll(tc.want, "kubectl_crd", "kubectl-crd")
			switch {
			case want == strings.TrimSuffix(host.Archive(), ".tar.gz"):
				if r.failed != "" {
					t.Errorf("the host's platform failed:\n%s", r.log)
				}
			case strings.HasPrefix(want, "kubectl-crd_"):
				if r.failed != "install" || !strings.Contains(r.log, "cannot download "+good+"/"+testVersion+"/"+want+".tar.gz") {
					t.Errorf("want a download of %s.tar.gz:\n%s", want, r.log)
				}
			default:
				if r.failed != "install" || !strings.Contains(r.log, "::error title=kubectl-crd install::"+want) {
					t.Errorf("want %q:\n%s", want, r.log)
				}
			}
		})
	}
}

// TestActionShasum: on a runner without sha256sum (macOS has shasum), the
// install checks the archive with shasum -a 256. PATH holds only the tools
// the step uses.
func TestActionShasum(t *testing.T) {
	skipShort(t)
	if hostDist == "" {
		t.Skipf("no release for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	bin := t.TempDir()
	for _, tool := range []string{"curl", "tar", "gzip", "awk", "cut", "tr", "mkdir", "rm", "uname", "shasum", "perl"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("no %s", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	a := readAction(t)
	a.Runs.Steps = slices.DeleteFunc(a.Runs.Steps, func(s actionStep) bool { return s.ID != "install" })
	o := runOptions{workspace: t.TempDir(), pathFirst: bin, pathOnly: true}
	r := runAction(t, a, map[string]string{"version": testVersion, "release-url": "file://" + releases(t, nil)}, o)
	if r.failed != "" || !strings.Contains(r.log, "kubectl-crd "+testVersion+"\n") {
		t.Errorf("failed %q:\n%s", r.failed, r.log)
	}
	bad := releases(t, func(name string, b []byte) []byte {
		if name != release.SumsFile {
			b[len(b)/2] ^= 1
		}
		return b
	})
	r = runAction(t, a, map[string]string{"version": testVersion, "release-url": "file://" + bad}, o)
	if r.failed != "install" || !strings.Contains(r.log, " has sha256 ") {
		t.Errorf("a corrupted archive: failed %q:\n%s", r.failed, r.log)
	}
}

// workflowCommand is a command the runner reads from a step's log.
type workflowCommand struct{ name, properties, data string }

// readCommands reads log as GitHub's runner reads a step's output: a
// line ends at LF, CR or CR LF (.NET's ReadLine); its leading white space
// trimmed, a line "::NAME PROPERTIES::DATA" is a command, unless commands
// are stopped (::stop-commands::TOKEN) until "::TOKEN::".
func readCommands(log string) []workflowCommand {
	var cmds []workflowCommand
	stop := ""
	for _, line := range regexp.MustCompile(`\r\n|\r|\n`).Split(log, -1) {
		line = strings.TrimLeftFunc(line, unicode.IsSpace)
		if stop != "" {
			if line == "::"+stop+"::" {
				stop = ""
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, "::")
		if !ok {
			continue
		}
		info, data, ok := strings.Cut(rest, "::")
		if !ok {
			continue
		}
		name, props, _ := strings.Cut(info, " ")
		if name == "stop-commands" {
			stop = data
		}
		cmds = append(cmds, workflowCommand{name, props, data})
	}
	return cmds
}

// standIn is a kubectl-crd that prints its arguments, each on a line
// "arg:" and its bytes in hexadecimal, then $PRINT, and exits with $EXIT.
const standIn = `#!/bin/sh
for a; do printf 'arg:'; printf '%s' "$a" | od -An -v -tx1 | tr -d ' \n'; echo; done
printf '%s' "$PRINT"
exit "${EXIT:-0}"
`

// runStep runs the action's run step alone, as runAction does, its
// kubectl-crd the stand-in, in a workspace of its own; the arguments the
// stand-in was given are returned.
func runStep(t *testing.T, a *actionFile, inputs map[string]string, env ...string) (*actionRun, []string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "kubectl-crd")
	if err := os.WriteFile(bin, []byte(standIn), 0o755); err != nil {
		t.Fatal(err)
	}
	step := *a
	step.Runs.Steps = slices.DeleteFunc(slices.Clone(a.Runs.Steps), func(s actionStep) bool { return s.ID != "run" })
	step.Runs.Steps[0].Env = maps.Clone(step.Runs.Steps[0].Env)
	step.Runs.Steps[0].Env["KUBECTL_CRD"] = bin
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		step.Runs.Steps[0].Env[k] = v
	}
	inputs = maps.Clone(inputs)
	inputs["version"] = testVersion
	workspace := filepath.Join(dir, "workspace")
	if err := os.Mkdir(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runAction(t, &step, inputs, runOptions{workspace: workspace})
	var args []string
	for _, line := range strings.Split(r.log, "\n") {
		if h, ok := strings.CutPrefix(line, "arg:"); ok {
			b, err := hex.DecodeString(h)
			if err != nil {
				t.Fatalf("the stand-in printed %q", line)
			}
			args = append(args, string(b))
		}
	}
	return r, args
}

// TestActionSplitArgs: args is split into words as a shell splits them,
// with nothing evaluated: no command substitution, variable, glob or
// tilde; ; | & are characters of a word; quotes that are not closed fail
// the step with exit-code 2. (Runs with -short: the run step alone, its
// kubectl-crd a stand-in that prints its arguments.)
func TestActionSplitArgs(t *testing.T) {
	for _, tool := range []string{"od", "tr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	a := readAction(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	for args, want := range map[string][]string{
		`prune --offline -f deploy/`:                          {"prune", "--offline", "-f", "deploy/"},
		"  a\tb\n c  ":                                        {"a", "b", "c"},
		`-f 'my dir/' -f "their dir/" -f our\ dir/`:           {"-f", "my dir/", "-f", "their dir/", "-f", "our dir/"},
		`a'b'"c"d ''  ""`:                                     {"abcd", "", ""},
		`"a \" \\ \$ \` + "`" + ` \x" 'a \" b'`:               {`a " \ $ ` + "` \\x", `a \" b`},
		"a\\\nb \"c\\\nd\" e\\ \\'":                           {"ab", "cd", "e '"},
		`$(touch ` + marker + `) ` + "`touch " + marker + "`": {"$(touch", marker + ")", "`touch", marker + "`"},
		`"$(touch ` + marker + `)"; touch ` + marker + `; "$HOME" ${HOME} ~ * ?`: {"$(touch " + marker + ");", "touch", marker + ";", "$HOME", "${HOME}", "~", "*", "?"},
		`x; id | cat & y > z < w (v)`:                                            {"x;", "id", "|", "cat", "&", "y", ">", "z", "<", "w", "(v)"},
		"\"\n::error::pwned\" '\r::warning::pwned'":                              {"\n::error::pwned", "\r::warning::pwned"},
		"-f\u2028::error::x über 日本":                                             {"-f\u2028::error::x", "über", "日本"},
	} {
		r, got := runStep(t, a, map[string]string{"args": args})
		if r.failed != "" || r.outputs["exit-code"] != "0" || !slices.Equal(got, want) {
			t.Errorf("args %q: failed %q, exit-code %q, words\n%q\nwant\n%q\nlog:\n%s", args, r.failed, r.outputs["exit-code"], got, want, r.log)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("args %q ran a command", args)
		}
	}
	for args, why := range map[string]string{
		`prune -f "job.yaml`:             "a double quote is not closed",
		`prune -f 'job.yaml`:             "a single quote is not closed",
		`prune -f job.yaml\`:             "a backslash ends it",
		"prune -f '\n::error::pwned":     "a single quote is not closed",
		"prune -f \"%0A::error::pwned\r": "a double quote is not closed",
	} {
		r, got := runStep(t, a, map[string]string{"args": args})
		cmds := readCommands(r.log)
		want := workflowCommand{"error", "title=kubectl-crd", "args: " + why + ": " + strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(args)}
		if r.failed != "run" || r.outputs["exit-code"] != "2" || got != nil || len(cmds) != 1 || cmds[0] != want {
			t.Errorf("args %q: failed %q, exit-code %q, ran with %q, commands %q; want exit 2 and %q\n%s", args, r.failed, r.outputs["exit-code"], got, cmds, want, r.log)
		}
	}
	// The stand-in's exit code is the step's.
	if r, _ := runStep(t, a, map[string]string{"args": "prune"}, "EXIT=3"); r.failed != "run" || r.outputs["exit-code"] != "3" {
		t.Errorf("exit 3: failed %q, exit-code %q", r.failed, r.outputs["exit-code"])
	}
}

// TestActionStopsCommands: a command whose stdout is the step's log, and
// not -o github's commands, runs between ::stop-commands:: and its token:
// the documents it prints are data (a YAML key or a block's line may begin
// with "::"), from which the runner reads no command. With -o github (in
// each of the ways pflag reads it) the commands are read; with an output
// file nothing of stdout is in the log. (Runs with -short.)
func TestActionStopsCommands(t *testing.T) {
	for _, tool := range []string{"od", "tr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	a := readAction(t)
	documents := "kind: Widget\n::error::pwned: 1\ndata: |\n  ::add-mask::pwned\n"
	github := "::error file=w.yaml,line=1,title=Prune%3A Widget w::pruned\n"
	for _, c := range []struct {
		args, print, outputFile string
		want                    []workflowCommand
	}{
		{"prune -f w.yaml", documents, "", []workflowCommand{{"stop-commands", "", ""}}},
		{"prune -f w.yaml -o yaml", documents, "", []workflowCommand{{"stop-commands", "", ""}}},
		{"prune -f w.yaml -o github", github, "", []workflowCommand{{"error", "file=w.yaml,line=1,title=Prune%3A Widget w", "pruned"}}},
		{"prune -f w.yaml --output github", github, "", []workflowCommand{{"error", "file=w.yaml,line=1,title=Prune%3A Widget w", "pruned"}}},
		{"prune -f w.yaml --output=github", github, "", []workflowCommand{{"error", "file=w.yaml,line=1,title=Prune%3A Widget w", "pruned"}}},
		{"prune -ogithub -f w.yaml", github, "", []workflowCommand{{"error", "file=w.yaml,line=1,title=Prune%3A Widget w", "pruned"}}},
		{"prune -f w.yaml -Ro github", github, "", []workflowCommand{{"error", "file=w.yaml,line=1,title=Prune%3A Widget w", "pruned"}}},
		{"prune -f w.yaml", documents, "out.yaml", nil},
	} {
		r, _ := runStep(t, a, map[string]string{"args": c.args, "output-file": c.outputFile}, "PRINT="+c.print)
		cmds := readCommands(r.log)
		for i := range cmds {
			if cmds[i].name == "stop-commands" {
				if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(cmds[i].data) || !strings.Contains(r.log, "\n::"+cmds[i].data+"::\n") {
					t.Errorf("%q: stop-commands %q, not a token of 32 hexadecimal digits, or commands not resumed:\n%s", c.args, cmds[i].data, r.log)
				}
				cmds[i].data = ""
			}
		}
		if r.failed != "" || r.outputs["exit-code"] != "0" || !slices.Equal(cmds, c.want) {
			t.Errorf("%q: failed %q, exit-code %q, commands %q, want %q:\n%s", c.args, r.failed, r.outputs["exit-code"], cmds, c.want, r.log)
		}
	}
}

// TestActionInjection gives every input strings that a shell would run or
// a runner read as a workflow command: nothing runs, the only commands
// the runner reads are the action's own annotations (their data escaped:
// what was given shows in them), and the step that refuses the input
// fails with the right exit code.
func TestActionInjection(t *testing.T) {
	skipShort(t)
	if hostDist == "" {
		t.Skipf("no release for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	a := readAction(t)
	good := "file://" + releases(t, nil)
	marker := filepath.Join(t.TempDir(), "pwned")
	payloads := []string{"$(touch " + marker + ")", "`touch " + marker + "`", `"; touch ` + marker + `; "`, `'; touch ` + marker + `; '`,
		"\n::error::pwned", "\r::error::pwned", "\r\n::warning file=x::pwned", "%0A::error::pwned"}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	for _, input := range []string{"version", "checksum", "args", "working-directory", "output-file", "release-url"} {
		for _, payload := range payloads {
			inputs := map[string]string{"version": testVersion, "release-url": good, "args": "version"}
			// failed and code: the step that fails and its exit-code output.
			failed, code := "install", ""
			switch input {
			case "version":
				inputs[input] = testVersion + payload
			case "release-url":
				inputs[input] = good + payload
			case "checksum":
				inputs[input] = payload
			case "args":
				inputs[input] = "version " + payload
				failed, code = "run", "2" // unknown command "..." for "kubectl crd version"
			case "working-directory":
				inputs[input] = payload
				failed = "run" // no such directory: the runner does not start the step
			case "output-file":
				inputs[input] = payload
				failed, code = "", "0"
				if strings.Contains(payload, "/") { // in directories that do not exist
					failed, code = "run", "2"
				}
			}
			t.Run(fmt.Sprintf("%s %q", input, payload), func(t *testing.T) {
				workspace := t.TempDir()
				r := runAction(t, a, inputs, runOptions{workspace: workspace})
				if _, err := os.Stat(marker); err == nil {
					os.Remove(marker)
					t.Errorf("a command ran:\n%s", r.log)
				}
				if r.failed != failed || r.outputs["exit-code"] != code {
					t.Errorf("failed %q, exit-code %q; want %q, %q:\n%s", r.failed, r.outputs["exit-code"], failed, code, r.log)
				}
				for _, c := range readCommands(r.log) {
					switch {
					case c.name == "stop-commands":
					case c.name != "error" || (c.properties != "title=kubectl-crd install" && c.properties != "title=kubectl-crd"):
						t.Errorf("the runner reads a command the action does not mean: %q\n%s", c, r.log)
					case input != "working-directory" && input != "args" && !strings.Contains(unescape.Replace(c.data), payload):
						t.Errorf("the annotation %q does not show the input %q", c.data, payload)
					}
				}
				if input == "output-file" && code == "0" {
					if out, err := os.ReadFile(filepath.Join(workspace, payload)); err != nil || !strings.HasPrefix(string(out), "kubectl-crd "+testVersion+"\n") {
						t.Errorf("output file %q: %q, %v", payload, out, err)
					}
				}
			})
		}
	}
}
