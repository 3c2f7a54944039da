package document_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// corpusStream joins the corpus files of a kind that read without an error
// into one YAML stream, as a directory given with -f would be read.
func corpusStream(b *testing.B, kind string) []byte {
	dir := corpus.Dir(b)
	var stream bytes.Buffer
	for _, f := range corpus.Manifest(b, dir) {
		if f.Kind != kind {
			continue
		}
		text := corpus.Read(b, dir, f)
		if _, err := document.Read(bytes.NewReader(text), f.LocalPath); err != nil || bytes.HasPrefix(bytes.TrimSpace(text), []byte("{")) {
			continue
		}
		stream.WriteString("---\n")
		stream.Write(text)
		if !bytes.HasSuffix(text, []byte("\n")) {
			stream.WriteByte('\n')
		}
	}
	return stream.Bytes()
}

// readAll reads every document of in, as the commands do before any check.
func readAll(b *testing.B, in []byte) int {
	rd := document.NewReader(bytes.NewReader(in), "bench.yaml")
	n := 0
	for {
		d, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n += len(d.Objects())
	}
}

// BenchmarkReadCRs reads the corpus's sample objects as one stream: what
// prune and check-update read, nearly all of it clean.
func BenchmarkReadCRs(b *testing.B) {
	benchRead(b, corpusStream(b, corpus.KindCR))
}

// BenchmarkReadCRDs reads the corpus's CRDs as one stream: never edited.
func BenchmarkReadCRDs(b *testing.B) {
	benchRead(b, corpusStream(b, corpus.KindCRD))
}

func benchRead(b *testing.B, in []byte) {
	objs := readAll(b, in)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		readAll(b, in)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*objs), "ns/object")
}
