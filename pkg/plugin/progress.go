package plugin

import (
	"fmt"
	"io"
	"time"

	"golang.org/x/term"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
)

// progress shows "checked N/M objects" on stderr during long runs, on one
// line that it rewrites, and only when stderr is a terminal: logs and pipes
// get no progress lines.
type progress struct {
	w       io.Writer
	total   int
	what    string
	on      bool
	shown   bool
	last    time.Time
	started time.Time
}

// progressMinimum is the number of objects from which a run shows progress.
const progressMinimum = 200

func newProgress(w io.Writer, total int, what string) *progress {
	// An *os.File, or the stream Run wraps around one.
	f, ok := w.(interface{ Fd() uintptr })
	return &progress{
		w: w, total: total, what: what,
		on:      ok && total >= progressMinimum && term.IsTerminal(int(f.Fd())),
		started: time.Now(),
	}
}

// step reports that done of total are finished; it prints at most five times a second.
func (p *progress) step(done int) {
	if !p.on || time.Since(p.last) < 200*time.Millisecond || time.Since(p.started) < time.Second {
		return
	}
	p.last = time.Now()
	// Its own CR and erase-line, on a terminal only; what it counts (a kind) escaped.
	fmt.Fprintf(p.w, "\r\033[Kchecked %d/%d %s", done, p.total, printable.Line(p.what))
	p.shown = true
}

// clear removes the progress line, before other output and at the end.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
