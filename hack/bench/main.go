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
//   - kubectl crd prune --offline (with the cache of CRD indexes warm, cold
//     and off), check-update --offline (old: the same objects, a label
//     changed), krm (the CRDs and objects as a ResourceList), prune of the
//     first object of each kind (the CRD load), prune with zero objects (the
//     index alone) and --help (start-up);
//
//   - yaml-floor: a bare sigs.k8s.io/yaml parse + JSON encode of the same files;
//
//   - upstream: the apiextensions-apiserver code alone, decode + prune + encode
//     (hack/bench/upstreamprune), with and without the server's validation;
//
//   - kubectl-validate and kubeconform (given JSON schemas of the CRDs), from
//     the Go module proxy with go install; skipped with a note when they do
//     not install;
//
//   - the small run, in a table of its own: one object of the set (a
//     ServiceMonitor, -small-kind) against every CRD and against its own
//     CRD's file alone, by prune --offline --crd-file and by the KRM function
//     standalone (crdPaths), each with the cache cold (an empty directory a
//     run), warm (filled by a first run, not timed) and off, -small-runs
//     runs a round, and the ratio to the own CRD's row;
//
//   - with -before REV, kubectl crd built at that revision of the repository
//     (git archive), in rows of its own, the small run's included.
//
//     go run ./hack/bench [-rounds 3] [-objects 10000] [-skip kubectl-validate,...] [-before REV] [-keep DIR]
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
	flag.StringVar(&o.smallKind, "small-kind", smallKindDefault, "the kind of the small run's object (Kind.group; the kind with the most samples when the input set has none)")
	flag.IntVar(&o.smallRuns, "small-runs", 5, "runs a round of each small-run row (they take well under a second)")
	flag.StringVar(&o.before, "before", "", "a git revision of this repository: its kubectl-crd is timed too, in rows of its own (\"\": none)")
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
	smallKind, before                    string
	smallRuns                            int
}

// tool is one command timed.
type tool struct {
	name string
	argv []string
	// stdin is a file to read from ("": none).
	stdin string
	// dir is the working directory ("": the benchmark's).
	dir string
	// cache is how KUBECTL_CRD_CACHE_DIR is set for kubectl crd: cacheWarm
	// (cacheDir, filled by a first run that is not timed), cacheCold (an
	// empty directory of its own for each run) or cacheOff; "": not set.
	cache    string
	cacheDir string
	// repeat runs it this many times a round (start-up: short runs).
	repeat int
	note   string
	// small is a row of the small run; own is the row it is compared
	// with there (nil: it is the own CRD's row).
	small  bool
	own    *tool
	runs   []measured
	failed error
}

const (
	cacheWarm = "warm"
	cacheCold = "cold"
	cacheOff  = "off"
)

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
	if o.krmObjects > 0 && o.krmObjects != o.objects {
		other, err := childInputs(o, corpusDir, filepath.Join(work, "inputs-krm"), o.krmObjects)
		if err != nil {
			return err
		}
		in.krmList = other.ResourceList
	}

	fmt.Fprintf(os.Stderr, "bench: building\n")
	for _, pkg := range []string{"./cmd/kubectl-crd", "./hack/bench/upstreamprune", "./hack/bench/yamlfloor"} {
		if err := goCmd(root, nil, "build", "-o", filepath.Join(bin, filepath.Base(pkg)), pkg); err != nil {
			return err
		}
	}
	before := ""
	if o.before != "" {
		fmt.Fprintf(os.Stderr, "bench: building kubectl-crd at %s\n", o.before)
		before = filepath.Join(bin, "kubectl-crd-before")
		if err := buildAt(root, o.before, filepath.Join(work, "before-src"), before); err != nil {
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

	tools := mainTools(o, in, bin, work, before, kv, kc)
	tools = append(tools, smallTools(o, in, filepath.Join(bin, "kubectl-crd"), "", work, []string{cacheCold, cacheWarm, cacheOff})...)
	if before != "" {
		tools = append(tools, smallTools(o, in, before, "before: ", work, []string{""})...)
	}
	var kept []*tool
	for _, t := range tools {
		if !skip[t.name] {
			kept = append(kept, t)
		}
	}
	tools = kept

	// A warm cache is filled by a run that is not timed.
	warmed := map[string]bool{}
	for _, t := range tools {
		if t.cache != cacheWarm || warmed[t.cacheDir] {
			continue
		}
		warmed[t.cacheDir] = true
		fmt.Fprintf(os.Stderr, "bench: filling the cache %s: %s\n", filepath.Base(t.cacheDir), t.name)
		if _, err := measure(t, filepath.Join(logs, logName(t.name)+".warm.stderr")); err != nil {
			t.failed = err
			notes = append(notes, fmt.Sprintf("%s failed: %v", t.name, err))
		}
	}

	for r := 1; r <= o.rounds; r++ {
		for _, t := range tools {
			if t.failed != nil {
				continue
			}
			fmt.Fprintf(os.Stderr, "bench: round %d/%d: %s\n", r, o.rounds, t.name)
			for range max(t.repeat, 1) {
				s, err := measure(t, filepath.Join(logs, logName(t.name)+".stderr"))
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

// mainTools are the rows of the input set's run. kubectl crd reads the
// CRD files through a warm cache of their indexes (one for all the rows,
// filled by the first run), but for the rows that say otherwise. before
// is the binary of -before ("": none); kv and kc the peers ("": skipped).
func mainTools(o options, in *inputSet, bin, work, before, kv, kc string) []*tool {
	crd := filepath.Join(bin, "kubectl-crd")
	cache := filepath.Join(work, "cache")
	warm := func(name string, argv ...string) *tool {
		return &tool{name: name, argv: argv, cache: cacheWarm, cacheDir: cache}
	}
	prune := []string{"prune", "--offline", "--crd-file", in.CRDDir, "-f", in.Objects}
	checkUpdate := []string{"check-update", "--offline", "--crd-file", in.CRDDir, "--old", in.Old, "-f", in.Objects}
	load := []string{"prune", "--offline", "--crd-file", in.CRDDir, "-f", in.PerKind}
	krmNote := ""
	if o.krmObjects > 0 && o.krmObjects != o.objects {
		krmNote = fmt.Sprintf("%d objects", o.krmObjects)
	}
	krmList := in.ResourceList
	if in.krmList != "" {
		krmList = in.krmList
	}
	tools := []*tool{
		warm("kubectl crd prune", append([]string{crd}, prune...)...),
		{name: "kubectl crd prune, cold cache", argv: append([]string{crd}, prune...), cache: cacheCold, cacheDir: filepath.Join(work, "cold")},
		{name: "kubectl crd prune, no cache", argv: append([]string{crd}, prune...), cache: cacheOff},
		warm("kubectl crd check-update", append([]string{crd}, checkUpdate...)...),
		{name: "kubectl crd krm", argv: []string{crd, "krm"}, stdin: krmList, note: krmNote, cache: cacheOff},
		{name: "yaml floor (sigs.k8s.io/yaml)", argv: []string{filepath.Join(bin, "yamlfloor"), in.CRDDir, in.Objects}},
		{name: "upstream decode+prune+encode", argv: []string{filepath.Join(bin, "upstreamprune"), "-validate=false", "-crds", in.CRDDir, "-f", in.Objects}},
		{name: "upstream + server validation", argv: []string{filepath.Join(bin, "upstreamprune"), "-crds", in.CRDDir, "-f", in.Objects}},
	}
	tools[0].note = "warm cache"
	tools[3].note = "warm cache"
	if kv != "" {
		tools = append(tools, &tool{name: "kubectl-validate", argv: []string{kv, in.Objects, "--local-crds", in.CRDDir, "--version", "1.30"}, note: o.kubectlValidate})
	}
	if kc != "" {
		tools = append(tools, &tool{name: "kubeconform -strict", argv: []string{kc, "-strict", "-summary",
			"-schema-location", filepath.Join(in.SchemaDir, "{{ .Group }}", "{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"), in.Objects}, note: o.kubeconform})
	}
	tools = append(tools,
		warm("kubectl crd: CRD load", append([]string{crd}, load...)...),
		&tool{name: "upstream: CRD load", argv: []string{filepath.Join(bin, "upstreamprune"), "-crds", in.CRDDir, "-f", in.PerKind}},
		warm("kubectl crd: index alone", crd, "prune", "--offline", "--crd-file", in.CRDDir, "-f", in.Empty),
		&tool{name: "kubectl crd --help", argv: []string{crd, "--help"}, repeat: 5, cache: cacheOff},
	)
	for _, t := range tools[len(tools)-4:] {
		switch t.name {
		case "kubectl crd: CRD load", "upstream: CRD load":
			t.note = fmt.Sprintf("%d objects, one a kind", in.Kinds)
		case "kubectl crd: index alone":
			t.note = "no objects, warm cache"
		}
	}
	if before != "" {
		// The binary before has no cache: the variable is set, and unread.
		for _, b := range []*tool{
			{name: "before: kubectl crd prune", argv: append([]string{before}, prune...)},
			{name: "before: kubectl crd check-update", argv: append([]string{before}, checkUpdate...)},
			{name: "before: kubectl crd krm", argv: []string{before, "krm"}, stdin: krmList, note: krmNote},
			{name: "before: kubectl crd: CRD load", argv: append([]string{before}, load...), note: fmt.Sprintf("%d objects, one a kind", in.Kinds)},
			{name: "before: kubectl crd --help", argv: []string{before, "--help"}, repeat: 5},
		} {
			b.cache = cacheOff
			b.note = strings.TrimPrefix(b.note+", "+o.before, ", ")
			tools = append(tools, b)
		}
	}
	return tools
}

// smallTools are the rows of the small run of binary crd: its object
// checked by prune and by the KRM function (standalone, in the input
// set's directory, crdPaths relative to it), against every CRD and
// against its own CRD's file alone, with the cache of each of modes ("":
// not set). Each row is run o.smallRuns times a round.
func smallTools(o options, in *inputSet, crd, prefix, work string, modes []string) []*tool {
	sm := in.Small
	objectRel, err := filepath.Rel(in.Dir, sm.Object)
	if err != nil {
		objectRel = sm.Object
	}
	type command struct {
		name     string
		all, own []string
	}
	commands := []command{
		{"prune",
			[]string{crd, "prune", "--offline", "--crd-file", in.CRDDir, "-f", sm.Object},
			[]string{crd, "prune", "--offline", "--crd-file", sm.OwnCRD, "-f", sm.Object}},
		{"krm",
			[]string{crd, "krm", sm.KRMAll, objectRel},
			[]string{crd, "krm", sm.KRMOwn, objectRel}},
	}
	var tools []*tool
	for _, c := range commands {
		for _, mode := range modes {
			suffix := ""
			switch mode {
			case cacheWarm:
				suffix = ", warm cache"
			case cacheCold:
				suffix = ", cold cache"
			case cacheOff:
				suffix = ", no cache"
			}
			own := &tool{name: fmt.Sprintf("%s%s, own CRD%s", prefix, c.name, suffix), argv: c.own}
			all := &tool{name: fmt.Sprintf("%s%s, %d CRDs%s", prefix, c.name, in.CRDs, suffix), argv: c.all, own: own}
			for _, t := range []*tool{own, all} {
				t.small, t.dir, t.repeat, t.cache = true, in.Dir, max(o.smallRuns, 1), mode
				switch mode {
				case cacheWarm:
					t.cacheDir = filepath.Join(work, "cache-"+logName(t.name))
				case cacheCold:
					t.cacheDir = filepath.Join(work, "cold")
				case "":
					t.cache = cacheOff // a binary without the cache
				}
				tools = append(tools, t)
			}
		}
	}
	return tools
}

// logName is a file name made of a row's name.
func logName(name string) string {
	return strings.NewReplacer(" ", "_", "/", "_", "+", "_", ",", "", ":", "", "(", "", ")", "").Replace(name)
}

// buildAt builds ./cmd/kubectl-crd of revision rev of the repository at
// root into out: the revision's tree written to src by git archive, which
// leaves the repository as it is.
func buildAt(root, rev, src, out string) error {
	tarball, err := exec.Command("git", "-C", root, "archive", "--format=tar", rev).Output()
	if err != nil {
		return fmt.Errorf("git archive %s: %v", rev, err)
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	untar := exec.Command("tar", "-x", "-C", src)
	untar.Stdin = bytes.NewReader(tarball)
	if b, err := untar.CombinedOutput(); err != nil {
		return fmt.Errorf("tar -x: %v: %s", err, b)
	}
	return goCmd(src, nil, "build", "-o", out, "./cmd/kubectl-crd")
}

// childInputs runs this program with -write-inputs and reads its summary.
func childInputs(o options, corpusDir, dir string, n int) (*inputSet, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-write-inputs", dir, "-corpus", corpusDir, "-objects", fmt.Sprint(n),
		"-max-crds", fmt.Sprint(o.maxCRDs), "-projects", o.projects, "-small-kind", o.smallKind)
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
	in, err := writeInputs(c, dir, o.objects, o.smallKind)
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
	cmd.Dir = t.dir
	switch t.cache {
	case cacheWarm:
		cmd.Env = append(os.Environ(), "KUBECTL_CRD_CACHE_DIR="+t.cacheDir)
	case cacheCold:
		if err := os.MkdirAll(t.cacheDir, 0o755); err != nil {
			return measured{}, err
		}
		dir, err := os.MkdirTemp(t.cacheDir, "run-")
		if err != nil {
			return measured{}, err
		}
		defer os.RemoveAll(dir)
		cmd.Env = append(os.Environ(), "KUBECTL_CRD_CACHE_DIR="+dir)
	case cacheOff:
		cmd.Env = append(os.Environ(), "KUBECTL_CRD_CACHE_DIR=off")
	}
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
	header(w, "tool", 32)
	byName := map[string]*tool{}
	for _, t := range tools {
		byName[t.name] = t
		if len(t.runs) == 0 || t.small {
			continue
		}
		wall, cpu, _ := t.stats()
		ratio, cpuRatio := "-", "-"
		// Start-up is compared with its target, not with a run.
		if base > 0 && baseCPU > 0 && t.repeat <= 1 {
			ratio = fmt.Sprintf("%.2f", float64(wall)/float64(base))
			cpuRatio = fmt.Sprintf("%.2f", float64(cpu)/float64(baseCPU))
		}
		row(w, t, 32, ratio, cpuRatio)
	}
	// CPU per object: the run's minus the CRD load's (the first object of
	// each kind), over the objects beyond those.
	perObject := func(run, load string) string {
		r, l := byName[run], byName[load]
		if r == nil || l == nil || len(r.runs) == 0 || len(l.runs) == 0 || in.N <= in.Kinds {
			return "n/a"
		}
		_, rc, _ := r.stats()
		_, lc, _ := l.stats()
		return fmt.Sprintf("%.0f µs", float64(rc-lc)/float64(time.Microsecond)/float64(in.N-in.Kinds))
	}
	fmt.Fprintf(w, "\nCPU per object (the run's user+sys minus the CRD load's, over the %d objects beyond one a kind): kubectl crd prune %s, upstream + server validation %s, upstream decode+prune+encode %s\n",
		in.N-in.Kinds,
		perObject("kubectl crd prune", "kubectl crd: CRD load"),
		perObject("upstream + server validation", "upstream: CRD load"),
		perObject("upstream decode+prune+encode", "upstream: CRD load"))
	smallReport(w, o, in, tools)
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// smallReport prints the small run's table: each row's ratio is to the
// row of the same command and cache against the object's own CRD alone.
func smallReport(w io.Writer, o options, in *inputSet, tools []*tool) {
	width := 0
	for _, t := range tools {
		if t.small && len(t.runs) > 0 {
			width = max(width, len(t.name))
		}
	}
	if width == 0 {
		return
	}
	fmt.Fprintf(w, "\nsmall run: one object, %s (%s), against the %d CRDs of %s and against its own CRD's file alone (%s); %d runs a round, medians; × own: to the row of its own CRD\n\n",
		in.Small.Kind, filepath.Base(in.Small.Object), in.CRDs, filepath.Base(in.CRDDir), filepath.Base(in.Small.OwnCRD), max(o.smallRuns, 1))
	header(w, "small run", width)
	for _, t := range tools {
		if !t.small || len(t.runs) == 0 {
			continue
		}
		ratio, cpuRatio := "1.00", "1.00"
		if t.own != nil {
			ratio, cpuRatio = "-", "-"
			if len(t.own.runs) > 0 {
				wall, cpu, _ := t.stats()
				ownWall, ownCPU, _ := t.own.stats()
				if ownWall > 0 && ownCPU > 0 {
					ratio = fmt.Sprintf("%.2f", float64(wall)/float64(ownWall))
					cpuRatio = fmt.Sprintf("%.2f", float64(cpu)/float64(ownCPU))
				}
			}
		}
		row(w, t, width, ratio, cpuRatio)
	}
}

func header(w io.Writer, first string, width int) {
	fmt.Fprintf(w, "| %-*s | %9s | %9s | %9s | %9s | %9s | %s\n", width, first, "wall", "user+sys", "peak RSS", "wall ×", "CPU ×", "runs")
	fmt.Fprintf(w, "|%s|%s|%s|%s|%s|%s|%s\n", strings.Repeat("-", width+2), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), "-----")
}

func row(w io.Writer, t *tool, width int, ratio, cpuRatio string) {
	wall, cpu, rss := t.stats()
	runs := fmt.Sprint(len(t.runs))
	if t.note != "" {
		runs += " (" + t.note + ")"
	}
	fmt.Fprintf(w, "| %-*s | %9s | %9s | %6.1f MiB | %9s | %9s | %s\n", width, t.name, round(wall), round(cpu), rss, ratio, cpuRatio, runs)
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
