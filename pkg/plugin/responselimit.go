package plugin

import (
	"fmt"
	"io"
	"net/http"
)

// maxResponseBytes bounds each response body read from the API server.
// client-go reads a body whole before decoding it, so a server that never
// ends one (or a proxy gone wrong) grew the process until it was killed
// (2.3 GB in 4 s on loopback). The largest legitimate responses are lists:
// all the CRDs of a cluster with a thousand are tens of MiB, so they are
// listed crdsPerPage at a time, and a page of the largest CRDs etcd stores
// (1.5 MiB each by default, some 2.5 MiB as JSON) stays under the bound.
// Objects are listed --chunk-size at a time (check-update). Reading up to
// the bound costs about twice as much memory (client-go's buffer grows, and
// discovery's disk cache keeps a copy).
const maxResponseBytes = 128 << 20

// responseTooLargeError is a response body past maxResponseBytes.
type responseTooLargeError struct{ limit int64 }

func (e *responseTooLargeError) Error() string {
	return fmt.Sprintf("the response is larger than %d MiB, the most kubectl crd reads of one (the CustomResourceDefinitions of a cluster with a thousand are tens of MiB); it was cut off", e.limit>>20)
}

// limitResponses wraps a transport so that each response body fails with
// a responseTooLargeError once it passes limit bytes.
func limitResponses(limit int64) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper { return &limitedTransport{rt: rt, limit: limit} }
}

type limitedTransport struct {
	rt    http.RoundTripper
	limit int64
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &limitedBody{body: resp.Body, left: t.limit, limit: t.limit}
	if resp.ContentLength > t.limit {
		// Said now: the body would be read up to the bound for nothing.
		resp.Body.(*limitedBody).left = -1
	}
	return resp, nil
}

// WrappedRoundTripper lets client-go find the transports under this one.
func (t *limitedTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }

// limitedBody is a response body that fails past limit bytes.
type limitedBody struct {
	body        io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &responseTooLargeError{b.limit}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the bound tells a body of exactly limit bytes from a longer one
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), &responseTooLargeError{b.limit}
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }
