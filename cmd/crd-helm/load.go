package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// The bounds of a chart as it is loaded, its subcharts' archives
// included: Helm's loader holds every file of it in memory, and bounds
// only the size of each archive, each subchart's archive again (a
// million empty files took 1.1 GB; a hundred small archives in charts/,
// each of 100 MiB decompressed, ten GB).
var (
	// maxChartFiles bounds the entries (files and directories): some
	// 1.1 KB of memory each in Helm's loader. The largest chart of our
	// measures (every CRD of the corpus, 88 MB) has some 1,500.
	maxChartFiles = 10000
	// maxChartBytes bounds their size in all, decompressed: Helm's bound
	// of one archive (100 MiB), for the whole chart.
	maxChartBytes = archive.MaxDecompressedChartSize
	// maxFileBytes bounds one file: 64 MiB, as kubectl crd reads a
	// document of its inputs.
	maxFileBytes int64 = 64 << 20
)

// budget is what the files of a chart read so far take of its bounds.
type budget struct {
	files int
	bytes int64
}

// add counts a file (name in the chart) of size bytes, or a directory;
// an error past a bound.
func (b *budget) add(name string, size int64) error {
	b.files++
	b.bytes += size
	switch {
	case b.files > maxChartFiles:
		return fmt.Errorf("more than %d files and directories, the most a chart may hold", maxChartFiles)
	case size > maxFileBytes:
		return fmt.Errorf("%s: larger than %d MiB, the most a file of a chart may be", name, maxFileBytes>>20)
	case b.bytes > maxChartBytes:
		return fmt.Errorf("more than %d MiB decompressed, the most a chart may be", maxChartBytes>>20)
	}
	return nil
}

// isSubchartArchive says whether a chart's file (by its path in the
// chart) is an archive that Helm's loader opens as a subchart.
func isSubchartArchive(name string) bool {
	return strings.HasSuffix(name, ".tgz") && path.Base(path.Dir(name)) == "charts"
}

// archive reads an archive through, as Helm's loader will read it, its
// subcharts' archives too, and counts its entries, their names and their
// sizes: an error past a bound, before Helm holds them. An archive Helm
// cannot read is left for Helm to say so.
func (b *budget) archive(r io.Reader) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil // the end, or what Helm's loader says
		}
		// Named in the chart as Helm names it: after its first directory,
		// \ a separator in an archive made on Windows.
		_, name, _ := strings.Cut(strings.ReplaceAll(h.Name, "\\", "/"), "/")
		if err := b.add(name, int64(len(h.Name))+max(h.Size, 0)); err != nil {
			return err
		}
		if !isSubchartArchive(name) {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxFileBytes))
		if err != nil {
			return nil
		}
		if err := b.archive(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
}

// loadChart loads a chart: a directory, or an archive (Helm's loader,
// which reads it in memory: a link in it is an empty file, a name out of
// it refused), within the bounds of a chart. A directory is read by
// dirLoader, each file where its symbolic links lead; with root, each
// must lead inside root.
func loadChart(name, root string) (*chart.Chart, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if err := checkArchive(name); err != nil {
			return nil, err
		}
		return loader.LoadFile(name)
	}
	if root != "" {
		if root, err = filepath.Abs(root); err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			return nil, fmt.Errorf("--root: %w", err)
		}
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	l := &dirLoader{root: root, rules: ignore.Empty()}
	real, _, err := l.resolve(abs, "")
	if err != nil {
		return nil, err
	}
	if err := l.readIgnore(real); err != nil {
		return nil, err
	}
	l.rules.AddDefaults()
	if err := l.walk(real, ""); err != nil {
		return nil, err
	}
	return loader.LoadFiles(l.files)
}

// checkArchive reads an archive on disk through, within the bounds of a
// chart (budget.archive), before Helm's loader reads it.
func checkArchive(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return (&budget{}).archive(f)
}

// dirLoader reads the files of a chart's directory as Helm's directory
// loader does (its .helmignore and default rules, symbolic links
// followed, irregular files refused), but never a file outside root when
// root is set: the KRM function's load restriction, which a chart's link
// to /etc/passwd or a token would otherwise pass, its content then in the
// rendered CRDs by .Files.Get. The check is here, where the chart is
// read, so that what is checked is what is read.
type dirLoader struct {
	root  string // "" for no restriction
	rules *ignore.Rules
	files []*archive.BufferedFile
	budget
	open []string // the directories walked into, where they really are: a link back to one is a cycle
}

// utf8bom is dropped from the start of a file, as Helm's loader drops it.
var utf8bom = []byte{0xEF, 0xBB, 0xBF}

// resolve is the file that the chart's file at p (name in the chart, ""
// for the chart itself) really is, its links followed, and its
// information; a link that leads outside root, or nowhere, is an error
// naming it by its name in the chart (render's caller names the chart).
func (l *dirLoader) resolve(p, name string) (string, os.FileInfo, error) {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 && name != "" {
		return p, fi, err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	if !inside(real, l.root) {
		const outside = "outside the function's working directory (set loadRestrictor: LoadRestrictionsNone in the function config to read it)"
		if name == "" { // the chart itself, by a link or not
			return "", nil, fmt.Errorf("in %s, %s", real, outside)
		}
		return "", nil, fmt.Errorf("%s: a symbolic link to %s, %s", name, real, outside)
	}
	fi, err = os.Stat(real)
	return real, fi, err
}

// inside says whether real is root or below it (always, for no root).
func inside(real, root string) bool {
	if root == "" {
		return true
	}
	rel, err := filepath.Rel(root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readIgnore reads the chart's .helmignore, if it has one, into the
// rules (Helm's defaults are added after).
func (l *dirLoader) readIgnore(dir string) error {
	real, fi, err := l.resolve(filepath.Join(dir, ignore.HelmIgnore), ignore.HelmIgnore)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", ignore.HelmIgnore)
	}
	data, err := fileread.ReadLimit(real, maxFileBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", ignore.HelmIgnore, err)
	}
	rules, err := ignore.Parse(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", ignore.HelmIgnore, err)
	}
	l.rules = rules
	return nil
}

// walk reads the files of the directory dir (where it really is), name
// in the chart, in name order as Helm does.
func (l *dirLoader) walk(dir, name string) error {
	if slices.Contains(l.open, dir) {
		return fmt.Errorf("%s: a symbolic link to %s, a directory that holds it: it never ends", name, dir)
	}
	l.open = append(l.open, dir)
	defer func() { l.open = l.open[:len(l.open)-1] }()
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, n := range names {
		rel := path.Join(name, n)
		real, fi, err := l.resolve(filepath.Join(dir, n), rel)
		if err != nil {
			return err
		}
		if l.rules.Ignore(rel, fi) {
			continue
		}
		if fi.IsDir() {
			if err := l.add(rel, 0); err != nil {
				return err
			}
			if err := l.walk(real, rel); err != nil {
				return err
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", rel)
		}
		data, err := l.read(real, rel)
		if err != nil {
			return err
		}
		l.files = append(l.files, &archive.BufferedFile{Name: rel, ModTime: fi.ModTime(), Data: bytes.TrimPrefix(data, utf8bom)})
	}
	return nil
}

// read reads a file of the chart, within the chart's bounds.
func (l *dirLoader) read(real, name string) ([]byte, error) {
	data, err := fileread.ReadLimit(real, maxFileBytes)
	var tl *fileread.TooLargeError
	if errors.As(err, &tl) {
		return nil, l.add(name, maxFileBytes+1)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := l.add(name, int64(len(data))); err != nil {
		return nil, err
	}
	if isSubchartArchive(name) {
		if err := l.archive(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return data, nil
}
