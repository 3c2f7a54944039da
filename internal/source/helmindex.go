package source

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v2"
)

// maxIndexBytes bounds a chart repository's index.yaml: 50 MiB, the bound
// of Flux's source-controller (its MaxIndexSize), so that an index over it
// is one Flux refuses too (fluxcd/flux2#4635: TrueCharts' 50.6 MB in
// 2024). Bitnami's, among the largest public indexes, is some 15 MB.
const maxIndexBytes = 50 << 20

// indexEntry is what we read of a chart's version in an index.yaml.
type indexEntry struct {
	Version string   `yaml:"version"`
	URLs    []string `yaml:"urls"`
	Digest  string   `yaml:"digest"`
}

type repoIndex struct {
	Entries map[string][]indexEntry `yaml:"entries"`
}

// chartEntries are the versions of chart in an index.yaml. Only those
// lines are parsed when the index is written as Helm writes one
// (chartLines): an index of tens of MB, parsed whole, takes more than ten
// times its size in memory, and seconds. Any other index is parsed
// whole, as is one whose chart's lines do not parse alone (an alias of an
// anchor elsewhere): the whole decides. (A string that runs across the
// lines of other charts, in an index a repository wrote to mislead,
// could make a chart seen that the whole does not hold, or hide one: the
// repository is the authority on its index either way, and the archive
// is checked against the digest it gives.)
func chartEntries(data []byte, chart string) ([]indexEntry, error) {
	if lines, ok := chartLines(data, chart); ok {
		var idx repoIndex
		if yaml.Unmarshal(lines, &idx) == nil {
			return idx.Entries[chart], nil
		}
	}
	var idx repoIndex
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, err
	}
	return idx.Entries[chart], nil
}

// chartLines are "entries:" and the lines of chart's versions in an
// index.yaml in block style: "entries:" a line of its own at the start,
// each chart's name at one indentation below it, a line of its own
// (`name:`), its versions below; "entries: {}" when no line names the
// chart. ok is false for an index written otherwise (flow style, a name
// quoted or of other characters than a chart's, a line at the start that
// is no `key:`, documents or directives, tabs) and for a chart named
// twice: the whole index decides.
func chartLines(data []byte, chart string) (out []byte, ok bool) {
	const (
		before = iota // the lines before entries:
		in            // the lines of entries
		after
	)
	state, indent := before, -1
	start, end, found := -1, -1, 0
	for pos := 0; pos < len(data); {
		next := bytes.IndexByte(data[pos:], '\n')
		if next < 0 {
			next = len(data)
		} else {
			next += pos + 1
		}
		line := bytes.TrimRight(data[pos:next], "\r\n")
		text := bytes.TrimLeft(line, " ")
		at := len(line) - len(text)
		lineStart := pos
		pos = next
		switch {
		case len(text) == 0 || text[0] == '#':
			continue
		case text[0] == '\t':
			return nil, false
		case at == 0:
			key, rest, isKey := bytes.Cut(text, []byte(":"))
			if !isKey || !isChartName(key) || len(rest) > 0 && rest[0] != ' ' {
				return nil, false // a document, a directive, flow style, a string's line
			}
			if state == in {
				state = after
				if start >= 0 && end < 0 {
					end = lineStart
				}
			}
			if string(key) == "entries" {
				if state != before || len(bytes.TrimSpace(rest)) > 0 && bytes.TrimSpace(rest)[0] != '#' {
					return nil, false // entries twice, entries: {...}
				}
				state = in
			}
			continue
		case state != in:
			continue
		}
		if indent < 0 {
			indent = at
		}
		switch {
		case at < indent:
			return nil, false
		case at > indent || text[0] == '-':
			continue // a line of the chart above
		}
		name, rest, isKey := bytes.Cut(text, []byte(":"))
		if !isKey || !isChartName(name) || len(rest) > 0 && rest[0] != ' ' {
			return nil, false
		}
		if start >= 0 && end < 0 {
			end = lineStart
		}
		if string(name) == chart {
			found++
			start, end = lineStart, -1
		}
	}
	switch {
	case state == before || found > 1:
		return nil, false
	case found == 0:
		return []byte("entries: {}\n"), true
	case end < 0:
		end = len(data)
	}
	return append([]byte("entries:\n"), data[start:end]...), true
}

// isChartName says whether s is a plain name of the characters of a
// chart's (Helm's are lower-case letters, digits and -; . and _ are
// seen).
func isChartName(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, r := range string(s) {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// chooseEntry is the entry of version in a chart's entries, or, when
// version is "", the newest that is not a pre-release, as Helm chooses
// it (repo.IndexFile.Get: the highest that meets the constraint "*").
func chooseEntry(entries []indexEntry, chart, version string) (indexEntry, error) {
	if len(entries) == 0 {
		return indexEntry{}, fmt.Errorf("no chart %s in the repository's index.yaml", chart)
	}
	best := -1
	var newest chartVersion
	for i, e := range entries {
		if version != "" {
			if e.Version == version || strings.TrimPrefix(e.Version, "v") == strings.TrimPrefix(version, "v") {
				best = i
			}
			continue
		}
		// As Helm: what it cannot read as a version it never picks; of
		// equal versions (build metadata orders nothing), the first.
		v, ok := parseChartVersion(e.Version)
		if ok && v.pre == "" && (best < 0 || v.compare(newest) > 0) {
			best, newest = i, v
		}
	}
	if best < 0 || len(entries[best].URLs) == 0 {
		return indexEntry{}, fmt.Errorf("no version %q of chart %s in the repository's index.yaml", version, chart)
	}
	return entries[best], nil
}

// chartVersion is a chart's version as Helm reads one in an index.yaml,
// with Masterminds/semver's NewVersion: an optional "v", one to three
// numbers (leading zeros allowed, as NewVersion coerces them; a minor or
// patch left out is 0), a pre-release after "-" (no numeric identifier
// with a leading zero), build metadata after "+", which orders nothing.
// What does not read so (1.2.3.4, latest) Helm never picks.
//
// Not k8s.io/apimachinery/pkg/util/version, although it is linked: its
// ParseSemantic refuses versions Helm reads (1.2, 1, 01.2.3), and its
// ParseGeneric reads 1.2.3.4, which Helm refuses, and orders 1.0.0-rc.1
// equal to 1.0.0 (TestChartVersionsNotApimachinery).
type chartVersion struct {
	release [3]uint64 // major, minor, patch
	pre     string
}

var chartVersionRE = regexp.MustCompile(`^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?` +
	`(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$`)

// maxChartVersionLen is NewVersion's bound on a version's length.
const maxChartVersionLen = 256

// parseChartVersion reads s as Helm does; false when Helm refuses it.
func parseChartVersion(s string) (chartVersion, bool) {
	m := chartVersionRE.FindStringSubmatch(s)
	if m == nil || len(s) > maxChartVersionLen {
		return chartVersion{}, false
	}
	v := chartVersion{pre: m[4]}
	for i, n := range m[1:4] {
		if n == "" {
			continue
		}
		var err error
		if v.release[i], err = strconv.ParseUint(n, 10, 64); err != nil {
			return chartVersion{}, false // beyond 64 bits
		}
	}
	for _, id := range strings.Split(v.pre, ".") {
		if len(id) > 1 && id[0] == '0' && strings.Trim(id, "0123456789") == "" {
			return chartVersion{}, false
		}
	}
	return v, true
}

// compare orders versions by their release numbers: chooseEntry compares
// no pre-release, so their order (semver's) is not needed here.
func (v chartVersion) compare(o chartVersion) int {
	return slices.Compare(v.release[:], o.release[:])
}
