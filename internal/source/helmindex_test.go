package source

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An index.yaml larger than its bound is refused, naming the bound: by
// its Content-Length before it is read, else as it is read (here with a
// fetch's bound below the index's).
func TestChartRepositoryIndexBound(t *testing.T) {
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	srv := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/large/index.yaml" {
			w.Header().Set("Content-Length", strconv.Itoa(maxIndexBytes+1))
			w.WriteHeader(http.StatusOK)
			return
		}
		chunk := []byte(strings.Repeat("# "+strings.Repeat("x", 1021)+"\n", 256))
		for range 8 { // 2 MiB, of unknown length
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	err := fetchOnce(t, Options{Insecure: true, MaxBytes: 64 << 20}, srv.URL+"/large#keda")
	inputError(t, "Content-Length", err, "larger than 50 MiB, the limit of a chart repository's index.yaml")
	err = fetchOnce(t, Options{Insecure: true, MaxBytes: 1 << 20}, srv.URL+"/streamed#keda")
	inputError(t, "streamed", err, "larger than 1 MiB, the limit of a chart repository's index.yaml")
}

// The lines of a chart in an index written as Helm writes one give the
// entries the whole index gives; an index written otherwise is read
// whole.
func TestChartEntries(t *testing.T) {
	helm := "apiVersion: v1\nentries:\n  app:\n  - name: app\n    version: 2.0.0\n    digest: aa\n    urls:\n    - app-2.0.0.tgz\n" +
		"  keda:\n  - annotations:\n      note: |\n        keda:\n        - not: this\n    name: keda\n    urls:\n    - keda-1.1.0.tgz\n    version: 1.1.0\n" +
		"  - name: keda\n    urls:\n    - https://example.com/keda-1.0.0.tgz\n    version: \"1.0.0\"\n    digest: bb\n" +
		"  zed:\n  - name: zed\n    version: 1.0.0\ngenerated: \"2024-01-01T00:00:00Z\"\n"
	want := []indexEntry{{Version: "1.1.0", URLs: []string{"keda-1.1.0.tgz"}},
		{Version: "1.0.0", URLs: []string{"https://example.com/keda-1.0.0.tgz"}, Digest: "bb"}}
	for what, c := range map[string]struct {
		index  string
		sliced bool
	}{
		"helm's":         {helm, true},
		"last":           {strings.Replace(helm, "  zed:\n  - name: zed\n    version: 1.0.0\n", "", 1), true},
		"crlf":           {strings.ReplaceAll(helm, "\n", "\r\n"), true},
		"indented items": {"entries:\n  keda:\n    - version: 1.1.0\n      urls: [keda-1.1.0.tgz]\n    - version: \"1.0.0\"\n      urls: [\"https://example.com/keda-1.0.0.tgz\"]\n      digest: bb\n", true},
		"json":           {`{"entries":{"keda":[{"version":"1.1.0","urls":["keda-1.1.0.tgz"]},{"version":"1.0.0","digest":"bb","urls":["https://example.com/keda-1.0.0.tgz"]}]}}`, false},
		"quoted name":    {strings.Replace(helm, "  keda:\n", "  \"keda\":\n", 1), false},
		"an alias":       {"x: &v\n  - version: 1.1.0\n    urls: [keda-1.1.0.tgz]\n  - version: \"1.0.0\"\n    urls: [\"https://example.com/keda-1.0.0.tgz\"]\n    digest: bb\nentries:\n  keda: *v\n", true},
	} {
		_, sliced := chartLines([]byte(c.index), "keda")
		got, err := chartEntries([]byte(c.index), "keda")
		if err != nil || sliced != c.sliced || !cmp.Equal(got, want) {
			t.Errorf("%s: sliced %v, want %v (%v)\n%s", what, sliced, c.sliced, err, cmp.Diff(want, got))
		}
	}
	for what, index := range map[string]string{
		"twice":   "entries:\n  keda:\n  - version: 1.0.0\n  keda:\n  - version: 2.0.0\n",
		"string":  "entries:\n  app:\n  - description: \"a\nb c\"\n  keda: []\n",
		"tabs":    "entries:\n\tkeda: []\n",
		"docs":    "---\nentries:\n  keda: []\n",
		"flow":    "entries: {keda: []}\n",
		"entries": "apiVersion: v1\n",
	} {
		if _, ok := chartLines([]byte(index), "keda"); ok {
			t.Errorf("%s: sliced", what)
		}
	}
	if got, ok := chartLines([]byte("entries:\n  app:\n  - version: 1.0.0\ngenerated: now\n"), "keda"); !ok || string(got) != "entries: {}\n" {
		t.Errorf("no such chart: %q %v", got, ok)
	}
	if _, err := chartEntries([]byte("entries: [\n"), "keda"); err == nil {
		t.Error("an index that does not parse: no error")
	}
}

// BenchmarkChartEntries reads a chart's entries from an index.yaml of
// some 9.5 MB written as Helm writes one (300 charts of 50 versions), the
// chart near its end: what it allocates beyond the index is the chart's
// lines (-benchmem). Parsed whole, as sigs.k8s.io/yaml did, a 48 MB index
// of the same shape took 1.4 GB at its peak, its chart's lines 53 MB.
func BenchmarkChartEntries(b *testing.B) {
	index := syntheticIndex(300)
	b.SetBytes(int64(len(index)))
	for b.Loop() {
		entries, err := chartEntries(index, "chart-290")
		if err != nil || len(entries) != 50 {
			b.Fatal(len(entries), err)
		}
	}
}

// syntheticIndex is an index.yaml of charts of 50 versions each, with
// the fields Helm writes.
func syntheticIndex(charts int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	for c := range charts {
		fmt.Fprintf(&b, "  chart-%d:\n", c)
		for v := range 50 {
			fmt.Fprintf(&b, "  - annotations:\n      category: Infrastructure\n    apiVersion: v2\n    appVersion: %d.0.0\n"+
				"    created: \"2024-01-02T03:04:05.123456789Z\"\n    dependencies:\n    - name: common\n      repository: oci://registry.example/charts\n      version: 2.x.x\n"+
				"    description: A chart of things number %d that does something useful for a cluster.\n"+
				"    digest: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"+
				"    home: https://example.com/charts/chart-%d\n    maintainers:\n    - name: Someone\n      url: https://example.com/someone\n"+
				"    name: chart-%d\n    urls:\n    - https://example.com/charts/chart-%d-%d.0.0.tgz\n    version: %d.0.0\n", v, c, c, c, c, v, v)
		}
	}
	b.WriteString("generated: \"2024-01-02T03:04:05Z\"\n")
	return []byte(b.String())
}
