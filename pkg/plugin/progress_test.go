package plugin

import (
	"bytes"
	"os"
	"testing"
	"time"
)

func TestProgressOnlyOnTerminals(t *testing.T) {
	var buf bytes.Buffer
	if p := newProgress(&buf, 10000, "objects"); p.on {
		t.Error("progress on for a buffer")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if p := newProgress(w, 10000, "objects"); p.on {
		t.Error("progress on for a pipe")
	}
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, total: 500, what: "objects", on: true, started: time.Now().Add(-2 * time.Second)}
	p.step(10)
	p.step(11) // within 200ms of the last: not printed
	p.clear()
	p.clear() // nothing shown: nothing to clear
	if want := "\r\033[Kchecked 10/500 objects\r\033[K"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
