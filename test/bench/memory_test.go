// Package bench measures the built binary as a user runs it: peak memory
// (the kernel's ru_maxrss of the process) and throughput on generated
// streams of small objects. Run with
//
//	go test ./test/bench -run '^$' -bench Memory -benchtime 1x [-sizes 10,100,1024]
//
// Numbers go to docs/robustness.md; nothing here is a timed test.
package bench

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var sizes = flag.String("sizes", "10,100,1024", "input sizes in MiB, comma-separated")

const (
	crd = "../../examples/maintenance/crd.yaml"
	// object is a small object of the example's CRD, with a field the
	// server prunes and a comment.
	object = `apiVersion: operations.example.com/v1
kind: MaintenanceNightlyJob
metadata:
  name: job-%d
  namespace: ops
  labels:
    team: ops # who to call
spec:
  command: logrotate /etc/logrotate.conf
  machines: ["az1-worker1", "az1-worker2"]
  privileged: true # never stored
---
`
)

var (
	buildOnce sync.Once
	buildErr  error
	// built's binaries, in _output/bin as the end-to-end tests' (test/e2e
	// harness_test.go): go leaves an up-to-date binary alone, so a run
	// after the first, or after the end-to-end tests, links nothing.
	binaries = map[string]string{
		"kubectl-crd": "_output/bin/plugin/kubectl-crd",
		"krmfloor":    "_output/bin/bench/krmfloor",
	}
)

// built builds the binaries once per run: kubectl-crd, and krmfloor.
func built(b *testing.B, name string) string {
	const root = "../.."
	buildOnce.Do(func() {
		for _, pkg := range []string{"./cmd/kubectl-crd", "./test/bench/krmfloor"} {
			cmd := exec.Command("go", "build", "-o", binaries[filepath.Base(pkg)], pkg)
			cmd.Dir = root
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if buildErr = cmd.Run(); buildErr != nil {
				return
			}
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	path, err := filepath.Abs(filepath.Join(root, binaries[name]))
	if err != nil {
		b.Fatal(err)
	}
	return path
}

func sizesMiB(b *testing.B) []int64 {
	var out []int64
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			b.Fatalf("-sizes: %v", err)
		}
		out = append(out, n)
	}
	return out
}

// writeStream writes objects to w until size bytes are written; it returns
// how many.
func writeStream(w io.Writer, size int64, each func(w io.Writer, i int) (int, error)) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	n := 0
	for written < size {
		k, err := each(bw, n)
		if err != nil {
			return n, err
		}
		written += int64(k)
		n++
	}
	return n, bw.Flush()
}

// measure runs the binary b.N times and reports the largest peak RSS.
func measure(b *testing.B, size int64, stdin func() (io.Reader, error), name string, args ...string) {
	var peak int64
	bin := built(b, name)
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(bin, args...)
		in, err := stdin()
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stdin = in
		cmd.Stdout = io.Discard
		var stderr strings.Builder
		cmd.Stderr = &lastBytes{max: 4096, b: &stderr}
		err = cmd.Run()
		if c, ok := in.(io.Closer); ok {
			c.Close()
		}
		// Exit 1: findings (the pruned field), as expected.
		if cmd.ProcessState == nil || (cmd.ProcessState.ExitCode() != 0 && cmd.ProcessState.ExitCode() != 1) {
			b.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, int64(ru.Maxrss)) // KiB on Linux
		}
	}
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
}

// lastBytes keeps the end of what is written to it (stderr, for errors).
type lastBytes struct {
	max int
	b   *strings.Builder
}

func (l *lastBytes) Write(p []byte) (int, error) {
	s := l.b.String() + string(p)
	if len(s) > l.max {
		s = s[len(s)-l.max:]
	}
	l.b.Reset()
	l.b.WriteString(s)
	return len(p), nil
}

// writeObjects writes a stream of small objects of size bytes to file.
func writeObjects(b *testing.B, file string, size int64) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := writeStream(f, size, func(w io.Writer, i int) (int, error) { return fmt.Fprintf(w, object, i) }); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMemoryPrune: prune of a stream of small objects from a file
// (and from stdin, spooled), 10 MiB to 1 GiB: peak RSS stays flat, bounded
// by one document and the first pass's kept text, not by the input.
func BenchmarkMemoryPrune(b *testing.B) {
	for _, mib := range sizesMiB(b) {
		size := mib << 20
		file := filepath.Join(b.TempDir(), "stream.yaml")
		writeObjects(b, file, size)
		b.Run(fmt.Sprintf("file/%dMiB", mib), func(b *testing.B) {
			measure(b, size, func() (io.Reader, error) { return strings.NewReader(""), nil }, "kubectl-crd",
				"prune", "--offline", "--crd-file", crd, "-f", file)
		})
		b.Run(fmt.Sprintf("stdin/%dMiB", mib), func(b *testing.B) {
			measure(b, size, func() (io.Reader, error) { return os.Open(file) }, "kubectl-crd",
				"prune", "--offline", "--crd-file", crd, "-f", "-", "--report", os.DevNull)
		})
		os.Remove(file)
	}
}

// BenchmarkMemoryCheckUpdate: check-update of a stream of small objects
// against a few old ones (the first hundred: updates, the rest creates),
// text from a file and JSON from stdin: peak RSS stays flat, as prune's.
func BenchmarkMemoryCheckUpdate(b *testing.B) {
	dir := b.TempDir()
	old := filepath.Join(dir, "old.yaml")
	var olds strings.Builder
	for i := range 100 {
		fmt.Fprintf(&olds, object, i)
	}
	if err := os.WriteFile(old, []byte(olds.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mib := range sizesMiB(b) {
		size := mib << 20
		file := filepath.Join(dir, "stream.yaml")
		writeObjects(b, file, size)
		b.Run(fmt.Sprintf("file/%dMiB", mib), func(b *testing.B) {
			measure(b, size, func() (io.Reader, error) { return strings.NewReader(""), nil }, "kubectl-crd",
				"check-update", "--offline", "--crd-file", crd, "--old", old, "-f", file)
		})
		b.Run(fmt.Sprintf("stdin-json/%dMiB", mib), func(b *testing.B) {
			measure(b, size, func() (io.Reader, error) { return os.Open(file) }, "kubectl-crd",
				"check-update", "--offline", "--crd-file", crd, "--old", old, "-f", "-", "-o", "json")
		})
		os.Remove(file)
	}
}

// BenchmarkMemoryKRM: the KRM function on a ResourceList of small objects,
// which its protocol holds whole: the cost per item, beside kyaml's own
// reading and writing of the list (krmfloor).
func BenchmarkMemoryKRM(b *testing.B) {
	for _, mib := range sizesMiB(b) {
		if mib > 10 {
			continue // a ResourceList is held whole by the protocol: 10 MiB takes a GiB, in kyaml alone
		}
		size := mib << 20
		file := filepath.Join(b.TempDir(), "resourcelist.yaml")
		f, err := os.Create(file)
		if err != nil {
			b.Fatal(err)
		}
		crdText, err := os.ReadFile(crd)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
		item := strings.ReplaceAll(strings.TrimSuffix(object, "---\n"), "\n", "\n  ")
		fmt.Fprintf(f, "- %s\n", strings.ReplaceAll(strings.TrimSpace(string(crdText)), "\n", "\n  "))
		if _, err := writeStream(f, size, func(w io.Writer, i int) (int, error) {
			return fmt.Fprintf(w, "- "+strings.TrimRight(item, " ")+"\n", i)
		}); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("krm/%dMiB", mib), func(b *testing.B) {
			measure(b, size, func() (io.Reader, error) { return os.Open(file) }, "kubectl-crd", "krm")
		})
		// The floor: kyaml reading and writing the same ResourceList, changing nothing.
		b.Run(fmt.Sprintf("kyaml-noop/%dMiB", mib), func(b *testing.B) {
			measure(b, size, func() (io.Reader, error) { return os.Open(file) }, "krmfloor")
		})
		os.Remove(file)
	}
}

var (
	fieldCounts = flag.String("fields", "25000,50000,100000,200000", "pruned fields of the one object of BenchmarkMemoryKRMPrunedFields")
	depths      = flag.String("depths", "1000,2000,4000", "schema depths of BenchmarkMemoryExplainDepth")
)

func ints(b *testing.B, list string) []int {
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkMemoryKRMPrunedFields: the KRM function on one object with n
// fields its CRD does not have (13 bytes each: 200,000 is 2.6 MB, under the
// server's 3 MiB), standalone and as a ResourceList, beside prune: the
// memory per pruned field (the slope between sizes) is about prune's.
func BenchmarkMemoryKRMPrunedFields(b *testing.B) {
	dir := b.TempDir()
	crdText, err := os.ReadFile(crd)
	if err != nil {
		b.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\ncrdPaths: ["+crd+"]\nloadRestrictor: LoadRestrictionsNone\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, n := range ints(b, *fieldCounts) {
		var obj strings.Builder
		obj.WriteString("apiVersion: operations.example.com/v1\nkind: MaintenanceNightlyJob\nmetadata:\n  name: wide\n  namespace: ops\nspec:\n  command: x\n")
		for i := range n {
			fmt.Fprintf(&obj, "  f%06d: 1\n", i)
		}
		file := filepath.Join(dir, "wide.yaml")
		if err := os.WriteFile(file, []byte(obj.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		indent := func(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ") }
		list := filepath.Join(dir, "resourcelist.yaml")
		if err := os.WriteFile(list, []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- "+indent(string(crdText))+"\n- "+indent(obj.String())+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		size := int64(obj.Len())
		noStdin := func() (io.Reader, error) { return strings.NewReader(""), nil }
		b.Run(fmt.Sprintf("krm-standalone/%d", n), func(b *testing.B) {
			measure(b, size, noStdin, "kubectl-crd", "krm", config, file)
		})
		b.Run(fmt.Sprintf("krm-resourcelist/%d", n), func(b *testing.B) {
			measure(b, size, func() (io.Reader, error) { return os.Open(list) }, "kubectl-crd", "krm")
		})
		b.Run(fmt.Sprintf("prune/%d", n), func(b *testing.B) {
			measure(b, size, noStdin, "kubectl-crd", "prune", "--offline", "--crd-file", crd, "-f", file, "--report", os.DevNull)
		})
	}
}

// BenchmarkMemoryExplainDepth: explain-structural of a CRD whose schema
// nests properties d deep (37 bytes a level), beside prune --crd-file of
// the same CRD: peak RSS grows linearly with depth, as prune's.
func BenchmarkMemoryExplainDepth(b *testing.B) {
	dir := b.TempDir()
	for _, d := range ints(b, *depths) {
		inner := `{"type":"string"}`
		for range d {
			inner = `{"type":"object","properties":{"a":` + inner + `}}`
		}
		file := filepath.Join(dir, "deep.yaml")
		text := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: deeps.example.com\nspec:\n  group: example.com\n  names: {kind: Deep, plural: deeps}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {\"type\":\"object\",\"properties\":{\"spec\":" + inner + "}}\n"
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		noStdin := func() (io.Reader, error) { return strings.NewReader(""), nil }
		b.Run(fmt.Sprintf("explain/%d", d), func(b *testing.B) {
			measure(b, int64(len(text)), noStdin, "kubectl-crd", "explain-structural", "-f", file)
		})
		b.Run(fmt.Sprintf("prune/%d", d), func(b *testing.B) {
			measure(b, int64(len(text)), noStdin, "kubectl-crd", "prune", "--offline", "--crd-file", file, "-f", os.DevNull)
		})
	}
}
