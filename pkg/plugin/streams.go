package plugin

import (
	"io"
	"os"
)

// checkedWriter remembers the first failed write to a stream (a full disk,
// a closed pipe), so that Run reports it and exits 3 whatever the command
// printed: output that is lost must never look like success.
type checkedWriter struct {
	w   io.Writer
	err error
}

func newCheckedWriter(w io.Writer) *checkedWriter { return &checkedWriter{w: w} }

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err // the stream is broken: nothing more reaches it
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

// Fd is the wrapped file's descriptor, for the terminal checks (progress);
// ^uintptr(0), no descriptor, when the stream is not a file.
func (c *checkedWriter) Fd() uintptr {
	if f, ok := c.w.(*os.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
