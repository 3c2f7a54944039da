package plugin

import (
	"io"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// readAheadDocs is how many parsed documents a readAhead holds for its
// caller: enough to even out documents of different sizes, few enough that
// memory stays bounded by the largest documents, not by the input.
const readAheadDocs = 4

// readAhead parses the documents of a reader on another goroutine, a few
// ahead of the caller, so that parsing the next documents uses the second
// core while the caller checks this one. The documents come in their order,
// an error after the documents before it.
type readAhead struct {
	docs chan parsed
	stop chan struct{}
}

type parsed struct {
	d   *document.Document
	err error
}

func newReadAhead(r *document.Reader) *readAhead {
	ra := &readAhead{docs: make(chan parsed, readAheadDocs), stop: make(chan struct{})}
	go func() {
		defer close(ra.docs)
		for {
			d, err := r.Next()
			select {
			case ra.docs <- parsed{d, err}:
			case <-ra.stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ra
}

// Next is the next document, io.EOF after the last, as document.Reader's.
func (ra *readAhead) Next() (*document.Document, error) {
	p, ok := <-ra.docs
	if !ok {
		return nil, io.EOF
	}
	return p.d, p.err
}

// Close stops reading and returns once the reader is no longer used, so
// that its input can be closed.
func (ra *readAhead) Close() {
	close(ra.stop)
	for range ra.docs {
	}
}
