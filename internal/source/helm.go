package source

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
)

// Helm charts are schema sources too (docs/sources.md): a chart directory
// (with a Chart.yaml), a .tgz on disk or at an https URL, an oci:// chart,
// or a chart of a repository (https://repo#chart@version). A remote
// chart's archive is fetched, cached and pinned as any source; then
// crd-helm, the companion binary that links the Helm SDK (kubectl-crd
// does not: its start-up work would cost every run), renders it with
// the values of Options.ChartSet and ChartValues, and the files that hold
// CRDs are handed back, each named by the source and the file in the
// chart: "oci://r.example/charts/app:1.0.0 (templates/crds.yaml)".

// CompanionEnv names the companion's path, overriding where it is looked
// for (beside the executable, then in PATH).
const CompanionEnv = "KUBECTL_CRD_HELM"

// Companion is the companion's name.
const Companion = "crd-helm"

// helmConfigMediaType is the config of an OCI Helm chart; its layer of
// the chart's archive is helmChartMediaType.
const (
	helmConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	helmChartMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// IsChart says whether a source argument is a Helm chart on disk: a
// directory with a Chart.yaml, or a .tgz file.
func IsChart(arg string) bool {
	if IsRemote(arg) {
		return false
	}
	if strings.HasSuffix(arg, ".tgz") {
		st, err := os.Stat(arg)
		return err == nil && st.Mode().IsRegular()
	}
	st, err := os.Stat(filepath.Join(arg, "Chart.yaml"))
	return err == nil && st.Mode().IsRegular()
}

// MayBeChart says whether a source argument may be a Helm chart: one on
// disk (IsChart), an https URL of a chart by its form (an archive, .tgz,
// or a repository's chart, https://repo#chart@version), or any oci://
// reference, which is a chart when its manifest's config is Helm's (a
// Set tells which it was once fetched: Set.IsChart). An https URL of a
// file (.yaml, .yml, .json, or any other name) is no chart.
func MayBeChart(arg string) bool {
	if !IsRemote(arg) {
		return IsChart(arg)
	}
	u, _, err := parseSource(arg)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "oci":
		return true
	case "https", "http":
		return isChartURL(u)
	}
	return false
}

// isChartURL says whether an https source is a chart: an archive (.tgz),
// or a repository's chart named by the fragment (of a URL that is no
// file's, isFileURL).
func isChartURL(u *url.URL) bool {
	return strings.HasSuffix(u.Path, ".tgz") || u.Fragment != "" && !isFileURL(u)
}

// helmArchiveKind is a chart's archive at an https URL: fetched as a file,
// rendered as a chart.
type helmArchiveKind struct{}

func (helmArchiveKind) fetch(ctx context.Context, f *Fetcher, arg, name string) (Pin, []File, error) {
	pin, files, err := httpsKind{}.fetch(ctx, f, arg, name)
	return pin, asCharts(files), err
}

func (helmArchiveKind) cached(c *blobs, name, digest string) ([]File, bool) {
	files, ok := httpsKind{}.cached(c, name, digest)
	return asCharts(files), ok
}

func asCharts(files []File) []File {
	for i := range files {
		files[i].chart = true
	}
	return files
}

// helmRepoKind is a chart of a chart repository: https://repo#chart@version
// (the newest version that is not a pre-release without @version). The
// repository's index.yaml names the archive and its digest; the lock pins
// the version it resolved to and the archive's digest.
type helmRepoKind struct{}

// repoChart parses https://repo#chart@version: the repository's URL,
// without its user information (returned apart).
func repoChart(arg string) (repo *url.URL, user *url.Userinfo, chart, version string, err error) {
	u, user, err := parseSource(arg)
	if err != nil {
		return nil, nil, "", "", err
	}
	chart, version, _ = strings.Cut(u.Fragment, "@")
	if chart == "" {
		return nil, nil, "", "", errors.New("a chart repository's source names the chart: https://repo#chart@version")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, user, chart, version, nil
}

// fetch reads the repository's index.yaml (at most maxIndexBytes) with
// the repository's credentials, and the archive it names for the version
// with the same credentials when it is of the same origin, else none
// (pass_credentials_all: to another https origin too); an archive by
// plain http (but on loopback, with --source-plain-http) or without a
// digest in the index is refused, and the archive's digest must be the
// index's.
func (helmRepoKind) fetch(ctx context.Context, f *Fetcher, arg, name string) (Pin, []File, error) {
	repo, user, chart, version, err := repoChart(arg)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	if version == "" && f.opts.Lock != nil && !f.opts.Update {
		if p := f.opts.Lock.Find(name); p != nil {
			version = p.Version
		}
	}
	c, user, passAll, err := f.repoClient(repo, user)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	cr := creds{origin: originOf(repo), user: user, passAll: passAll}
	base := *repo
	base.Path = strings.TrimSuffix(base.Path, "/") + "/"
	base.RawPath = ""
	data, _, err := c.getAtMost(ctx, base.JoinPath("index.yaml"), cr, name, min(maxIndexBytes, c.maxBytes), "the limit of a chart repository's index.yaml")
	if err != nil {
		return Pin{}, nil, err
	}
	entries, err := chartEntries(data, chart)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: fmt.Errorf("the repository's index.yaml: %w", err)}
	}
	e, err := chooseEntry(entries, chart, version)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	chartURL, want, err := archiveOf(c, &base, chart, e)
	if err != nil {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: err}
	}
	archive, final, err := c.get(ctx, chartURL, cr, name)
	if err != nil {
		return Pin{}, nil, err
	}
	digest, p, err := f.cache.put(archive)
	if err != nil {
		return Pin{}, nil, err
	}
	if digest != want {
		return Pin{}, nil, &Error{Source: name, Input: true, Err: fmt.Errorf("%s: digest %s, not the %s of the repository's index.yaml", final, digest, want)}
	}
	return Pin{Source: name, Resolved: final, Version: e.Version, Digest: digest}, []File{{Path: p, Name: name, chart: true}}, nil
}

// archiveOf is the URL of an entry's archive (the first of its urls,
// relative to the repository, its own user information dropped: the
// index's words give no credentials) and the digest it must have, "sha256:"
// and the index's; an error for an entry without a sha256 digest, and
// for an archive a redirect could not go to either (plain http, another
// scheme, no host).
func archiveOf(c *client, base *url.URL, chart string, e indexEntry) (*url.URL, string, error) {
	hexd := strings.ToLower(strings.TrimPrefix(e.Digest, "sha256:"))
	if e.Digest == "" {
		return nil, "", fmt.Errorf("the repository's index.yaml gives no digest of chart %s %s: its archive could not be verified", chart, e.Version)
	}
	if len(hexd) != 64 || strings.Trim(hexd, "0123456789abcdef") != "" {
		return nil, "", fmt.Errorf("the repository's index.yaml gives chart %s %s a digest that is no sha256", chart, e.Version)
	}
	u, err := base.Parse(e.URLs[0])
	if err != nil {
		return nil, "", fmt.Errorf("the repository's index.yaml gives chart %s %s a URL that does not parse", chart, e.Version)
	}
	u.User = nil
	if err := c.followable(u); err != nil {
		var re *redirectError
		if errors.As(err, &re) {
			return nil, "", fmt.Errorf("the repository's index.yaml names the archive of chart %s %s by %s: %s", chart, e.Version, re.Target, re.Why)
		}
		return nil, "", err
	}
	return u, "sha256:" + hexd, nil
}

func (helmRepoKind) cached(c *blobs, name, digest string) ([]File, bool) {
	return helmArchiveKind{}.cached(c, name, digest)
}

// renderCharts replaces the charts among a source's files by the files of
// their CRDs, rendered by the companion.
func (f *Fetcher) renderCharts(ctx context.Context, name string, files []File) ([]File, error) {
	var out []File
	for _, file := range files {
		if !file.chart {
			out = append(out, file)
			continue
		}
		rendered, err := f.render(ctx, name, file.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, rendered...)
	}
	return out, nil
}

// render runs the companion on a chart (a directory or an archive) into a
// directory of the run's own, removed by Close, or by the handler of
// SIGINT and SIGTERM (safewrite.TempDir).
func (f *Fetcher) render(ctx context.Context, name, chart string) ([]File, error) {
	bin, err := FindCompanion()
	if err != nil {
		return nil, &Error{Source: name, Input: true, Err: err}
	}
	if f.renderDir == "" {
		if f.renderDir, f.removeRenderDir, err = safewrite.TempDir("kubectl-crd-charts-"); err != nil {
			return nil, err
		}
	}
	out, err := os.MkdirTemp(f.renderDir, "")
	if err != nil {
		return nil, err
	}
	values, err := f.valuesFiles(f.renderDir)
	if err != nil {
		return nil, err
	}
	build := buildinfo.Version()
	args := []string{"render", "--build", build, "--chart", chart, "--out", out}
	for _, v := range values {
		args = append(args, "--values", v)
	}
	for _, s := range f.opts.ChartSet {
		args = append(args, "--set", s)
	}
	if f.opts.ChartRoot != "" {
		args = append(args, "--root", f.opts.ChartRoot)
	}
	memory, err := chartMemory()
	if err != nil {
		return nil, &Error{Source: name, Input: true, Err: err}
	}
	args = append(args, "--max-memory", strconv.FormatInt(memory, 10))
	rctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, args...)
	ownProcessGroup(cmd)
	// Stopped, it is given a second to let go of its output.
	cmd.WaitDelay = time.Second
	stdout, stderr := &headBuffer{max: maxCompanionStdout}, &headBuffer{max: maxCompanionStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := runStoppedOnSignal(cmd); err != nil {
		err = renderError(rctx, bin, err, stderr.String(), f.opts.Timeout, memory)
		var c *crash
		return nil, &Error{Source: name, Input: !errors.As(err, &c), Err: err}
	}
	if stdout.cut {
		return nil, &Error{Source: name, Err: fmt.Errorf("%s: its answer is more than %d MiB", bin, maxCompanionStdout>>20)}
	}
	var res struct {
		Build string `json:"build"`
		Files []struct {
			Name, File string
		} `json:"files"`
	}
	if err := json.Unmarshal(stdout.buf, &res); err != nil {
		return nil, &Error{Source: name, Err: fmt.Errorf("%s: its output: %w", bin, err)}
	}
	if res.Build != build {
		return nil, &Error{Source: name, Input: true, Err: fmt.Errorf("%s is of build %s, kubectl-crd of build %s: install both from the same release", bin, res.Build, build)}
	}
	var files []File
	for _, r := range res.Files {
		if r.File != path.Base(r.File) {
			return nil, &Error{Source: name, Err: fmt.Errorf("%s: a file %q outside its output", bin, r.File)}
		}
		files = append(files, File{Path: filepath.Join(out, r.File), Name: name + " (" + r.Name + ")"})
	}
	return files, nil
}

// runStoppedOnSignal runs cmd, and stops it when SIGINT or SIGTERM ends
// kubectl-crd (safewrite's handler, which then removes the directory it
// writes into): crd-helm, in a process group of its own, is not sent the
// terminal's ^C, and went on alone. The handler waits for it to end, a
// moment at most, so that it writes nothing after its directory is gone.
func runStoppedOnSignal(cmd *exec.Cmd) error {
	var mu sync.Mutex
	stopping := false
	ended := make(chan struct{})
	done := safewrite.AtSignal(func() {
		mu.Lock()
		stopping = true
		started := cmd.Process != nil
		mu.Unlock()
		if !started {
			return
		}
		if cmd.Cancel != nil {
			_ = cmd.Cancel()
		} else {
			_ = cmd.Process.Kill()
		}
		select {
		case <-ended:
		case <-time.After(2 * time.Second):
		}
	})
	mu.Lock()
	if stopping {
		mu.Unlock()
		done() // never returns: the process dies of the signal
	}
	err := cmd.Start()
	mu.Unlock()
	if err == nil {
		err = cmd.Wait()
	}
	close(ended)
	done()
	return err
}

// The most of crd-helm's output that kubectl-crd keeps: its answer (the
// names of the files of a chart of 10,000 at most), and the start of what
// it writes on stderr (its message, one line, or the first lines of the
// runtime's trace), so that a chart's message of a gigabyte (its fail)
// does not fill the memory, nor the user's terminal.
const (
	maxCompanionStdout = 16 << 20
	maxCompanionStderr = 64 << 10
)

// headBuffer keeps the first max bytes written to it, and drops the rest,
// noting it (cut): it never stops the writer, and never holds more. Not a
// bytes.Buffer, whose ReadFrom, which io.Copy prefers, would pass the
// bound.
type headBuffer struct {
	buf []byte
	max int
	cut bool
}

func (b *headBuffer) Write(p []byte) (int, error) {
	n := min(len(p), b.max-len(b.buf))
	b.buf = append(b.buf, p[:n]...)
	b.cut = b.cut || n < len(p)
	return len(p), nil
}

// String is what was kept, and a note of what was not.
func (b *headBuffer) String() string {
	if b.cut {
		return string(b.buf) + fmt.Sprintf(" ... (cut: more than %d KiB)", b.max>>10)
	}
	return string(b.buf)
}

// ChartMemoryEnv names the bound of the memory that rendering a chart
// may use, in MiB (DefaultChartMemory when it is not set).
const ChartMemoryEnv = "KUBECTL_CRD_HELM_MEMORY"

// DefaultChartMemory bounds the memory of rendering a chart, in MiB: four
// times what the largest chart Helm loads needs (every CRD of the corpus
// in crds/ and in templates/, 88 MB: within 256 MiB).
const DefaultChartMemory = 1024

// chartMemory is the bound of the memory of rendering a chart, in MiB.
func chartMemory() (int64, error) {
	v := os.Getenv(ChartMemoryEnv)
	if v == "" {
		return DefaultChartMemory, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > 1<<30 {
		return 0, fmt.Errorf("$%s=%s: want a number of MiB (%d unless set)", ChartMemoryEnv, v, DefaultChartMemory)
	}
	return n, nil
}

// renderError is why crd-helm failed, in our words: past the bound of
// time or of memory (the chart's fault, as every error but a crash), or
// crd-helm's own message about the chart, one line. What Go's runtime
// writes when a process dies of a fatal error or a panic (a goroutine's
// trace, lines of it) is never handed on: a crash is an internal error,
// exit 3, named by its first line.
func renderError(ctx context.Context, bin string, err error, stderr string, timeout time.Duration, memory int64) error {
	first, died := runtimeDeath(stderr)
	// The watchdog's line, with the trace of an allocation that failed
	// as it wrote it, is out of memory too.
	outOfMemory := strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "of memory, the bound: it was stopped")
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("rendering the chart took longer than %v, the bound: it was stopped", timeout)
	case died && outOfMemory:
		return fmt.Errorf("rendering the chart used more than %d MiB of memory, the bound: it was stopped", memory)
	case died:
		return &crash{fmt.Errorf("%s crashed: %s", bin, first)}
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		return &crash{fmt.Errorf("%s: %s", bin, cmp.Or(strings.TrimSpace(stderr), err.Error()))}
	}
	if strings.HasPrefix(stderr, "flag provided but not defined: ") {
		// One of a release before this one's flags, which checked its build after them.
		return fmt.Errorf("%s does not know the flags of kubectl-crd of build %s (%s): install both from the same release", bin, buildinfo.Version(), strings.TrimPrefix(strings.SplitN(stderr, "\n", 2)[0], "flag provided but not defined: "))
	}
	// The chart's error, in crd-helm's words: about the chart, which the
	// source names.
	return errors.New(cmp.Or(strings.TrimSpace(stderr), err.Error()))
}

// crash is crd-helm's failure that is not the chart's.
type crash struct{ error }

func (c *crash) Unwrap() error { return c.error }

// runtimeDeath is the first line of what Go's runtime wrote of a process
// that died of a fatal error or a panic ("fatal error: out of memory",
// "panic: ...", the trace of a goroutine after it), and whether it did.
// crd-helm writes its own errors on one line each, so that no chart's
// message can pass for a trace.
func runtimeDeath(stderr string) (string, bool) {
	lines := strings.Split(stderr, "\n")
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "goroutine "); ok && strings.Contains(rest, " [") {
			for _, first := range lines {
				if first = strings.TrimSpace(first); first != "" {
					return first, true
				}
			}
		}
	}
	return "", false
}

// FindCompanion is the path of crd-helm: $KUBECTL_CRD_HELM, else beside
// the executable (its symbolic links resolved), else in PATH; the error
// names where it looked.
func FindCompanion() (string, error) {
	if p := os.Getenv(CompanionEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("a Helm chart is rendered by %s, and $%s names %s: %w", Companion, CompanionEnv, p, err)
		}
		return p, nil
	}
	bin := Companion
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), bin)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
			looked = append(looked, p)
		}
	}
	if p, err := exec.LookPath(bin); err == nil {
		return p, nil
	}
	looked = append(looked, "PATH")
	return "", fmt.Errorf("a Helm chart is rendered by %s, kubectl-crd's companion of the same release, and it is not at %s (or set $%s)", Companion, strings.Join(looked, " nor in "), CompanionEnv)
}
