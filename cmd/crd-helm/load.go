package main

import (
	"bytes"
	"errors"
	"fmt"
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
)

// loadChart loads a chart: a directory, or an archive (Helm's loader,
// which reads it in memory: a link in it is an empty file, a name out of
// it refused). A directory is read by dirLoader, each file where its
// symbolic links lead; with root, each must lead inside root.
func loadChart(name, root string) (*chart.Chart, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return loader.LoadFile(name)
	}
	if root != "" {
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return nil, fmt.Errorf("--root: %w", err)
		}
	}
	l := &dirLoader{root: root, rules: ignore.Empty()}
	real, _, err := l.resolve(name, "")
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
	open  []string // the directories walked into, where they really are: a link back to one is a cycle
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
	data, err := l.read(real, ignore.HelmIgnore, fi)
	if err != nil {
		return err
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
			if err := l.walk(real, rel); err != nil {
				return err
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", rel)
		}
		data, err := l.read(real, rel, fi)
		if err != nil {
			return err
		}
		l.files = append(l.files, &archive.BufferedFile{Name: rel, ModTime: fi.ModTime(), Data: bytes.TrimPrefix(data, utf8bom)})
	}
	return nil
}

// read reads a file of the chart.
func (l *dirLoader) read(real, name string, fi os.FileInfo) ([]byte, error) {
	data, err := os.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}
