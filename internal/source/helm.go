package source

import (
	"bytes"
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
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
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

// compareVersions orders versions as semantic versions (a leading v
// ignored; what does not parse, as a string).
func compareVersions(a, b string) int {
	pa, oka := versionParts(a)
	pb, okb := versionParts(b)
	if !oka || !okb {
		return strings.Compare(a, b)
	}
	return slices.Compare(pa, pb)
}

func versionParts(v string) ([]int, bool) {
	v = strings.TrimPrefix(v, "v")
	v, _, _ = strings.Cut(v, "+")
	var parts []int
	for _, s := range strings.Split(v, ".") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, false
		}
		parts = append(parts, n)
	}
	return parts, true
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
// directory of the run's own, removed by Close.
func (f *Fetcher) render(ctx context.Context, name, chart string) ([]File, error) {
	bin, err := FindCompanion()
	if err != nil {
		return nil, &Error{Source: name, Input: true, Err: err}
	}
	if f.renderDir == "" {
		if f.renderDir, err = os.MkdirTemp("", "kubectl-crd-charts-"); err != nil {
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
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		var ee *exec.ExitError
		return nil, &Error{Source: name, Input: errors.As(err, &ee) && ee.ExitCode() == 2, Err: fmt.Errorf("%s: %s", bin, msg)}
	}
	var res struct {
		Build string `json:"build"`
		Files []struct {
			Name, File string
		} `json:"files"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
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
