// Command bench times kubectl crd against its peers on one realistic input
// set, alternately in one run, and prints a table: wall time (the median of
// the rounds), user+sys CPU and peak RSS (the kernel's rusage of each
// process) and the ratio to kubectl crd prune. docs/performance.md gives
// the method and the numbers.
//
// The input set is made from the public corpus (../shared/corpus, or
// $KUBECTL_CRD_CORPUS): every CRD of the corpus that a sample the server
// accepts uses, and -objects objects made from those samples, the kinds in
// turn, each with its own name, one in ten with an unknown field.
//
// Timed, in turn, each round (A B C ... A B C ...):
//
//   - kubectl crd prune --offline, check-update --offline (old: the same
//     objects, a label changed), krm (the CRDs and objects as a ResourceList),
//     prune with zero objects (CRD load alone) and --help (start-up);
//
//   - yaml-floor: a bare sigs.k8s.io/yaml parse + JSON encode of the same files;
//
//   - upstream: the apiextensions-apiserver code alone, decode + prune + encode
//     (hack/bench/upstreamprune), with and without the server's validation;
//
//   - kubectl-validate and kubeconform (given JSON schemas of the CRDs), from
//     the Go module proxy with go install; skipped with a note when they do
//     not install.
//
//     go run ./hack/bench [-rounds 3] [-objects 10000] [-skip kubectl-validate,...] [-keep DIR]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 3, "rounds: every tool runs once per round, in turn")
	flag.IntVar(&o.objects, "objects", 10000, "objects in the input set")
	flag.IntVar(&o.krmObjects, "krm-objects", 0, "objects in the ResourceList of krm (a ResourceList is held whole); 0: -objects")
	flag.StringVar(&o.corpus, "corpus", "", "the corpus directory (default $KUBECTL_CRD_CORPUS, else ../shared/corpus beside the module)")
	flag.StringVar(&o.skip, "skip", "", "tools not to run, comma-separated (e.g. kubectl-validate)")
	flag.StringVar(&o.keep, "keep", "", "write the inputs, binaries and logs to this directory and keep them")
	flag.StringVar(&o.kubectlValidate, "kubectl-validate", "sigs.k8s.io/kubectl-validate@v0.0.4", "module@version to go install (\"\": skip)")
	flag.StringVar(&o.kubeconform, "kubeconform", "github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0", "package@version to go install (\"\": skip)")
	flag.IntVar(&o.maxCRDs, "max-crds", 127, "CRDs at most: the kinds with the most samples (0: every kind with a sample, 277)")
	flag.StringVar(&o.projects, "projects", "", "corpus projects to read, comma-separated (default all)")
	writeOnly := flag.String("write-inputs", "", "only write the input set to this directory, with summary.json (what a run does in a child process)")
	flag.Parse()
	if *writeOnly != "" {
		if err := writeInputsOnly(o, *writeOnly); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	rounds, objects, krmObjects, maxCRDs int
	corpus, skip, keep, projects         string
	kubectlValidate, kubeconform         string
}

// tool is one command timed.
type tool struct {
	name string
	argv []string
	// stdin is a file to read from ("": none).
	stdin string
	// repeat runs it this many times a round (start-up: short runs).
	repeat int
	note   string
	runs   []measured
	failed error
}

// measured is one run.
type measured struct {
	wall, cpu time.Duration
	rssKiB    int64
}

func run(o options, w io.Writer) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	corpusDir := corpusOf(o, root)
	work := o.keep
	if work == "" {
		if work, err = os.MkdirTemp("", "kubectl-crd-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	logs := filepath.Join(work, "logs")
	bin := filepath.Join(work, "bin")
	for _, d := range []string{logs, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	// The inputs are written by a child process: the kernel counts the
	// memory of the process that starts a command in the command's peak RSS
	// (Go starts it with vfork), so this one stays small.
	fmt.Fprintf(os.Stderr, "bench: writing the inputs from the corpus %s\n", corpusDir)
	in, err := childInputs(o, corpusDir, filepath.Join(work, "inputs"), o.objects)
	if err != nil {
		return err
	}
	krmList := in.ResourceList
	if o.krmObjects > 0 && o.krmObjects != o.objects {
		small, err := childInputs(o, corpusDir, filepath.Join(work, "inputs-krm"), o.krmObjects)
		if err != nil {
			return err
		}
		krmList = small.ResourceList
	}

	fmt.Fprintf(os.Stderr, "bench: building\n")
	for _, pkg := range []string{"./cmd/kubectl-crd", "./hack/bench/upstreamprune", "./hack/bench/yamlfloor"} {
		if err := goCmd(root, nil, "build", "-o", filepath.Join(bin, filepath.Base(pkg)), pkg); err != nil {
			return err
		}
	}
	skip := map[string]bool{}
	for _, s := range strings.Split(o.skip, ",") {
		skip[strings.TrimSpace(s)] = true
	}
	var notes []string
	peer := func(name, pkg string) string {
		if pkg == "" || skip[name] {
			return ""
		}
		fmt.Fprintf(os.Stderr, "bench: go install %s\n", pkg)
		// Outside the module: the peer's own go.mod decides its dependencies.
		if err := goCmd(os.TempDir(), []string{"GOBIN=" + bin}, "install", pkg); err != nil {
			notes = append(notes, fmt.Sprintf("%s skipped: go install %s failed: %v", name, pkg, err))
			return ""
		}
		return filepath.Join(bin, name)
	}
	kv := peer("kubectl-validate", o.kubectlValidate)
	kc := peer("kubeconform", o.kubeconform)

	crd := filepath.Join(bin, "kubectl-crd")
	tools := []*tool{
		{name: "kubectl crd prune", argv: []string{crd, "prune", "--offline", "--crd-file", in.CRDDir, "-f", in.Objects}},
		{name: "kubectl crd check-update", argv: []string{crd, "check-update", "--offline", "--crd-file", in.CRDDir, "--old", in.Old, "-f", in.Objects}},
		{name: "kubectl crd krm", argv: []string{crd, "krm"}, stdin: krmList, note: fmt.Sprintf("%d objects", o.krmObjects)},
		{name: "yaml floor (sigs.k8s.io/yaml)", argv: []string{filepath.Join(bin, "yamlfloor"), in.CRDDir, in.Objects}},
		{name: "upstream decode+prune+encode", argv: []string{filepath.Join(bin, "upstreamprune"), "-validate=false", "-crds", in.CRDDir, "-f", in.Objects}},
		{name: "upstream + server validation", argv: []string{filepath.Join(bin, "upstreamprune"), "-crds", in.CRDDir, "-f", in.Objects}},
	}
	if o.krmObjects <= 0 || o.krmObjects == o.objects {
		tools[2].note = ""
	}
	if kv != "" {
		tools = append(tools, &tool{name: "kubectl-validate", argv: []string{kv, in.Objects, "--local-crds", in.CRDDir, "--version", "1.30"}, note: o.kubectlValidate})
	}
	if kc != "" {
		tools = append(tools, &tool{name: "kubeconform -strict", argv: []string{kc, "-strict", "-summary",
			"-schema-location", filepath.Join(in.SchemaDir, "{{ .Group }}", "{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"), in.Objects}, note: o.kubeconform})
	}
	tools = append(tools,
		&tool{name: "kubectl crd: CRD load alone", argv: []string{crd, "prune", "--offline", "--crd-file", in.CRDDir, "-f", in.Empty}},
		&tool{name: "upstream: CRD load alone", argv: []string{filepath.Join(bin, "upstreamprune"), "-crds", in.CRDDir, "-f", in.Empty}},
		&tool{name: "kubectl crd --help", argv: []string{crd, "--help"}, repeat: 5},
	)
	var kept []*tool
	for _, t := range tools {
		if !skip[t.name] {
			kept = append(kept, t)
		}
	}
	tools = kept

	for r := 1; r <= o.rounds; r++ {
		for _, t := range tools {
			if t.failed != nil {
				continue
			}
			fmt.Fprintf(os.Stderr, "bench: round %d/%d: %s\n", r, o.rounds, t.name)
			for range max(t.repeat, 1) {
				s, err := measure(t, filepath.Join(logs, strings.NewReplacer(" ", "_", "/", "_", "+", "_").Replace(t.name)+".stderr"))
				if err != nil {
					t.failed = err
					notes = append(notes, fmt.Sprintf("%s failed: %v", t.name, err))
					break
				}
				t.runs = append(t.runs, s)
			}
		}
	}
	report(w, o, in, tools, notes)
	return nil
}

// childInputs runs this program with -write-inputs and reads its summary.
func childInputs(o options, corpusDir, dir string, n int) (*inputSet, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-write-inputs", dir, "-corpus", corpusDir, "-objects", fmt.Sprint(n),
		"-max-crds", fmt.Sprint(o.maxCRDs), "-projects", o.projects)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("writing the inputs: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, err
	}
	in := &inputSet{}
	return in, json.Unmarshal(b, in)
}

// corpusOf is the corpus directory: -corpus, else $KUBECTL_CRD_CORPUS,
// else ../shared/corpus beside the module at root.
func corpusOf(o options, root string) string {
	if o.corpus != "" {
		return o.corpus
	}
	if dir := os.Getenv("KUBECTL_CRD_CORPUS"); dir != "" {
		return dir
	}
	return filepath.Join(filepath.Dir(root), "shared", "corpus")
}

// writeInputsOnly is the child of childInputs, and -write-inputs.
func writeInputsOnly(o options, dir string) error {
	if o.corpus == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		o.corpus = corpusOf(o, root)
	}
	var projects []string
	if o.projects != "" {
		projects = strings.Split(o.projects, ",")
	}
	c, err := loadCorpus(o.corpus, projects, o.maxCRDs)
	if err != nil {
		return err
	}
	in, err := writeInputs(c, dir, o.objects)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644)
}

// measure runs t once: exit 0 or 1 (findings) is a run, anything else an
// error with the end of its stderr.
func measure(t *tool, stderrFile string) (measured, error) {
	cmd := exec.Command(t.argv[0], t.argv[1:]...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return measured{}, err
	}
	defer devnull.Close()
	cmd.Stdout = devnull
	errf, err := os.Create(stderrFile)
	if err != nil {
		return measured{}, err
	}
	defer errf.Close()
	cmd.Stderr = errf
	if t.stdin != "" {
		f, err := os.Open(t.stdin)
		if err != nil {
			return measured{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() > 1 || cmd.ProcessState.ExitCode() < 0 {
		tail, _ := os.ReadFile(stderrFile)
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return measured{}, fmt.Errorf("%v: %s", err, bytes.TrimSpace(tail))
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := measured{wall: wall}
	if ru != nil {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.rssKiB = ru.Maxrss // KiB on Linux
	}
	return s, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// stats are a tool's medians and its largest peak RSS.
func (t *tool) stats() (wall, cpu time.Duration, rssMiB float64) {
	var walls, cpus []time.Duration
	var rss int64
	for _, s := range t.runs {
		walls = append(walls, s.wall)
		cpus = append(cpus, s.cpu)
		rss = max(rss, s.rssKiB)
	}
	return median(walls), median(cpus), float64(rss) / 1024
}

func report(w io.Writer, o options, in *inputSet, tools []*tool, notes []string) {
	fmt.Fprintf(w, "machine: %d CPUs (%s), %s %s/%s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "input: %d CRDs (%d kinds, %.1f MiB of YAML); %d objects (%.1f MiB), %d with an unknown field; %d rounds, medians\n\n",
		in.CRDs, in.Kinds, float64(in.CRDBytes)/(1<<20), in.N, float64(in.Bytes)/(1<<20), in.Unknown, o.rounds)
	// Ratios are to kubectl crd prune: of the wall times, and of the CPU
	// times, steadier on a shared machine.
	var base, baseCPU time.Duration
	for _, t := range tools {
		if t.name == "kubectl crd prune" && len(t.runs) > 0 {
			base, baseCPU, _ = t.stats()
		}
	}
	fmt.Fprintf(w, "| %-32s | %9s | %9s | %9s | %9s | %9s | %s\n", "tool", "wall", "user+sys", "peak RSS", "wall ×", "CPU ×", "runs")
	fmt.Fprintf(w, "|%s|%s|%s|%s|%s|%s|%s\n", strings.Repeat("-", 34), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), "-----")
	byName := map[string]*tool{}
	for _, t := range tools {
		byName[t.name] = t
		if len(t.runs) == 0 {
			continue
		}
		wall, cpu, rss := t.stats()
		ratio, cpuRatio := "-", "-"
		// Start-up is compared with its target, not with a run.
		if base > 0 && baseCPU > 0 && t.repeat <= 1 {
			ratio = fmt.Sprintf("%.2f", float64(wall)/float64(base))
			cpuRatio = fmt.Sprintf("%.2f", float64(cpu)/float64(baseCPU))
		}
		runs := fmt.Sprint(len(t.runs))
		if t.note != "" {
			runs += " (" + t.note + ")"
		}
		fmt.Fprintf(w, "| %-32s | %9s | %9s | %6.0f MiB | %9s | %9s | %s\n", t.name, round(wall), round(cpu), rss, ratio, cpuRatio, runs)
	}
	// CPU per object: the run's minus the CRD load's, over the objects.
	perObject := func(run, load string) string {
		r, l := byName[run], byName[load]
		if r == nil || l == nil || len(r.runs) == 0 || len(l.runs) == 0 || in.N == 0 {
			return "n/a"
		}
		_, rc, _ := r.stats()
		_, lc, _ := l.stats()
		return fmt.Sprintf("%.0f µs", float64(rc-lc)/float64(time.Microsecond)/float64(in.N))
	}
	fmt.Fprintf(w, "\nCPU per object (the run's user+sys minus the CRD load's): kubectl crd prune %s, upstream + server validation %s, upstream decode+prune+encode %s\n",
		perObject("kubectl crd prune", "kubectl crd: CRD load alone"),
		perObject("upstream + server validation", "upstream: CRD load alone"),
		perObject("upstream decode+prune+encode", "upstream: CRD load alone"))
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// goCmd runs the go command in dir, with the local toolchain.
func goCmd(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOTOOLCHAIN=local"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tail := out.Bytes()
		if len(tail) > 1500 {
			tail = tail[len(tail)-1500:]
		}
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, tail)
	}
	return nil
}

// moduleRoot is the directory of this module's go.mod, above the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run from inside the kubectl-crd module")
	}
	return filepath.Dir(gomod), nil
}
