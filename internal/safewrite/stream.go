package safewrite

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
)

// Streams are the standard streams of the process as a command has them
// (wrapped, checked, or a test's buffers). A name that denotes one of them
// is written through it, after what was already written there: reopening
// the file behind it would truncate it, or replace it (2>>ci.log).
type Streams struct {
	In          io.Reader
	Out, ErrOut io.Writer
}

// ErrStdin is the error of a write to standard input.
var ErrStdin = errors.New("it is standard input, which is read, not written")

// Write writes what fill writes to name: through Out or ErrOut when name
// denotes standard output or error, through the descriptor itself for
// another of the process's open descriptors (/dev/fd/N), and as Write does
// otherwise. Standard input is never written (ErrStdin).
func (s Streams) Write(name string, fill func(io.Writer) error) error {
	var err error
	switch fd := s.Descriptor(name); fd {
	case -1:
		return Write(name, fill)
	case 0:
		return &fs.PathError{Op: "write", Path: name, Err: ErrStdin}
	case 1:
		err = fill(s.Out)
	case 2:
		err = fill(s.ErrOut)
	default:
		err = writeDescriptor(fd, name, fill)
	}
	if err != nil {
		return wrapWrite(name, err)
	}
	return nil
}

// Descriptor is the open descriptor of this process that name denotes, -1
// for none: by its name (/dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, or a symbolic link to one of them), or, for a regular
// file, by being the very file (device and inode) that standard output,
// error or input is.
func (s Streams) Descriptor(name string) int {
	if fd, ok := descriptorName(name); ok {
		return fd
	}
	info, err := os.Stat(name)
	if err != nil || !info.Mode().IsRegular() {
		// A device, a FIFO or a socket is written in place anyway, and
		// standard input is often /dev/null, which a report may name.
		return -1
	}
	for _, stream := range []struct {
		fd int
		s  any
	}{{1, s.Out}, {2, s.ErrOut}, {0, s.In}} {
		if f, ok := stream.s.(interface{ Fd() uintptr }); ok && isFile(f.Fd(), info) {
			return stream.fd
		}
	}
	return -1
}

// fdName matches the names of an open descriptor: /dev/fd/N (a link to
// /proc/self/fd on Linux), /proc/self/fd/N, /proc/thread-self/fd/N and
// /proc/PID/fd/N. Compiled on first use: most runs never ask.
var fdName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/(?:dev/fd|proc/(self|thread-self|[0-9]+)/fd)/([0-9]+)$`)
})

// descriptorName is the descriptor name denotes by its name, following
// symbolic links (/dev/stdout is one to /proc/self/fd/1) up to the first
// name that is one.
func descriptorName(name string) (int, bool) {
	for range 40 { // the kernel's limit of links in a path
		abs, err := filepath.Abs(name)
		if err != nil {
			return -1, false
		}
		switch abs {
		case "/dev/stdin":
			return 0, true
		case "/dev/stdout":
			return 1, true
		case "/dev/stderr":
			return 2, true
		}
		if m := fdName().FindStringSubmatch(abs); m != nil {
			if pid, err := strconv.Atoi(m[1]); err == nil && pid != os.Getpid() {
				return -1, false // another process's
			}
			if fd, err := strconv.Atoi(m[2]); err == nil {
				return fd, true
			}
		}
		info, err := os.Lstat(abs)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			return -1, false
		}
		target, err := os.Readlink(abs)
		if err != nil {
			return -1, false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		name = target
	}
	return -1, false
}
