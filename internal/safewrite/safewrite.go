// Package safewrite writes the files a user names on the command line
// without ever destroying what is there: a regular file is replaced
// atomically, with its mode kept, and anything else (a device, a FIFO, a
// process substitution) is written in place, never replaced.
package safewrite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TempPrefix starts the names of the temporary files, hidden, so that an
// editor or a glob does not pick one up while it exists.
const TempPrefix = ".kubectl-crd-"

// WriteFile writes data to name as Write does.
func WriteFile(name string, data []byte) error {
	return Write(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write writes what fill writes to name. A regular file, or a symlink to
// one (the link is kept, its target written), is written to a temporary
// file in the same directory, synced and renamed over it, so that a reader
// never sees half of it; its mode (and owner, when allowed) is kept, and a
// new file gets 0666 minus the umask, as os.Create gives it. The temporary
// file is removed on any failure, and on SIGINT or SIGTERM during the
// write. Anything else (a character or block device, a FIFO, a
// /proc/self/fd path) is opened and written in place. Every error is
// returned, named with the path.
func Write(name string, fill func(io.Writer) error) error {
	target, info, err := resolve(name)
	if err != nil {
		return err
	}
	if info != nil && !info.Mode().IsRegular() {
		return writeInPlace(name, fill)
	}
	return writeAtomic(target, info, fill)
}

// resolve follows symlinks: target is the file name finally names, and
// info its stat, nil when it does not exist yet.
func resolve(name string) (target string, info fs.FileInfo, err error) {
	info, err = os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A dangling symlink is written through, as the shell's ">" would:
		// replacing the link by a file would lose it.
		if l, lerr := os.Lstat(name); lerr == nil && l.Mode()&fs.ModeSymlink != 0 {
			return name, l, nil
		}
		return name, nil, nil
	case err != nil:
		return "", nil, err
	case !info.Mode().IsRegular():
		// Written in place, through the links: a /proc/self/fd link to a
		// pipe (bash's >(...)) names no path EvalSymlinks could follow.
		return name, info, nil
	}
	target, err = filepath.EvalSymlinks(name)
	if err != nil {
		return "", nil, err
	}
	return target, info, nil
}

func writeInPlace(name string, fill func(io.Writer) error) error {
	// O_TRUNC empties a regular file behind a dangling link's new target; a
	// device or a FIFO ignores it. No O_CREATE but for the dangling link.
	flags := os.O_WRONLY | os.O_TRUNC
	if l, err := os.Lstat(name); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
			flags |= os.O_CREATE
		}
	}
	f, err := os.OpenFile(name, flags, 0o666)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return wrapWrite(name, err)
	}
	return f.Close()
}

// wrapWrite names the file in an error of fill, which writes to an
// io.Writer and may not.
func wrapWrite(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("write %s: %w", name, err)
}

func writeAtomic(name string, old fs.FileInfo, fill func(io.Writer) error) (err error) {
	// Errors name the file the user named, not the temporary one.
	defer func() { err = named(err, name) }()
	tmp, err := createTemp(filepath.Dir(name), "")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			removeTemp(tmp.Name())
		}
	}()
	if old != nil {
		// Chmod is not subject to the umask: the mode is the old file's.
		if err := tmp.Chmod(old.Mode().Perm()); err != nil {
			return err
		}
		keepOwner(tmp, old)
	}
	if err := fill(tmp); err != nil {
		return wrapWrite(name, err)
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := renameTemp(tmp.Name(), name); err != nil {
		return err
	}
	syncDir(filepath.Dir(name))
	return nil
}

// named is err about the file name rather than its temporary file.
func named(err error, name string) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe) && strings.HasPrefix(filepath.Base(pe.Path), TempPrefix):
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	case errors.As(err, &le):
		return &fs.PathError{Op: le.Op, Path: name, Err: le.Err}
	}
	return err
}

// createTemp creates an empty file of a new name in dir with 0666 minus
// the umask, the mode os.Create gives (os.CreateTemp gives 0600), and
// registers it, to be removed on SIGINT or SIGTERM until renameTemp or
// removeTemp. Creating and registering are one step under temps' lock: a
// signal finds the file registered, or stops it from being created.
func createTemp(dir, prefix string) (*os.File, error) {
	temps.Lock()
	defer temps.Unlock()
	temps.watch.Do(watchSignals)
	if temps.interrupted {
		return nil, errInterrupted
	}
	for range 100 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, TempPrefix+prefix+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			temps.names[name] = true
		}
		return f, err
	}
	return nil, fmt.Errorf("create a temporary file in %s: too many attempts", dir)
}

// renameTemp renames a temporary file over name; a signal handler then has
// nothing left to remove.
func renameTemp(tmp, name string) error {
	temps.Lock()
	defer temps.Unlock()
	err := os.Rename(tmp, name)
	if err == nil {
		delete(temps.names, tmp)
	}
	return err
}

// removeTemp removes a temporary file; one that cannot be removed yet (an
// open file elsewhere than on Unix) stays registered.
func removeTemp(tmp string) error {
	temps.Lock()
	defer temps.Unlock()
	err := os.Remove(tmp)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		delete(temps.names, tmp)
		return nil
	}
	return err
}

// syncDir makes the rename durable; a file system that cannot sync a
// directory has made it as durable as it can.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// TempDir creates a directory of a new name in the system's temporary
// directory (os.MkdirTemp's pattern) and registers it, to be removed with
// what it holds on SIGINT or SIGTERM until remove removes it: a run's
// scratch space (the charts it renders) that no way of ending leaves
// behind. Creating and registering are one step under temps' lock.
func TempDir(pattern string) (dir string, remove func() error, err error) {
	temps.Lock()
	defer temps.Unlock()
	temps.watch.Do(watchSignals)
	if temps.interrupted {
		return "", nil, errInterrupted
	}
	dir, err = os.MkdirTemp("", pattern)
	if err != nil {
		return "", nil, err
	}
	temps.dirs[dir] = true
	return dir, func() error {
		temps.Lock()
		defer temps.Unlock()
		delete(temps.dirs, dir)
		return os.RemoveAll(dir)
	}, nil
}

// AtSignal registers cleanup to run when SIGINT or SIGTERM ends the
// process, before the temporary files and directories are removed (the
// last registered first), until done is called: to stop a child process
// that writes into a temporary directory. A cleanup must end soon, and
// must not call into this package. Once the handler has begun, AtSignal
// and done never return: the goroutine that calls them does not go on to
// print or exit with a code of its own while the process dies of the
// signal.
func AtSignal(cleanup func()) (done func()) {
	temps.Lock()
	defer temps.Unlock()
	temps.watch.Do(watchSignals)
	id := temps.next
	temps.next++
	temps.cleanups[id] = cleanup
	return func() {
		temps.Lock()
		defer temps.Unlock()
		delete(temps.cleanups, id)
	}
}

// DieOf ends the process by sig, as the signal ends it (the status a
// shell reports as 130 for SIGINT, 143 for SIGTERM), once the cleanups
// have run and the temporary files and directories are removed: for a run
// whose SignalContext a signal cancelled (cmd/kubectl-crd), after its work
// has stopped. Should the handler be at work already (a second signal),
// DieOf waits for it, and it ends the process. Never returns.
func DieOf(sig os.Signal) {
	temps.Lock() // never unlocked: the handler, at work, keeps it too
	cleanUp()
	dieOf(sig)
}

// temps are the temporary files and directories that exist, and the
// cleanups, for the signal handler. One handler for the process,
// installed with the first of them and never stopped: a handler per
// write, stopped when the write ended, could take a signal late, after
// the next write had begun, and race with that write's handler (a
// temporary file left, or the process hung, sending itself a signal that
// the next handler caught).
var temps = struct {
	sync.Mutex
	names    map[string]bool
	dirs     map[string]bool
	cleanups map[int]func()
	next     int
	watch    sync.Once
	// cancel is SignalContext's: nil for none, or once called; then
	// interrupted, and no temporary file or directory is created.
	cancel      context.CancelCauseFunc
	interrupted bool
}{names: map[string]bool{}, dirs: map[string]bool{}, cleanups: map[int]func(){}}

// watchSignals runs the cleanups, last registered first, and removes every
// temporary file and directory on SIGINT or SIGTERM, then dies of the same
// signal, so that the exit status is the one the signal gives (130, 143
// in a shell). It keeps temps locked: nothing is created, renamed or
// registered after it. A signal the process ignores (nohup, a background
// job) stays ignored. Called with temps locked.
//
// With a SignalContext and nothing to remove or stop, the first signal
// cancels the context instead, and the run ends by DieOf; a second one
// ends it here. One handler decides, so that the run does not go on,
// woken by its context, while the handler removes its files: it
// re-created a directory the handler had just removed.
func watchSignals() {
	sigs := make(chan os.Signal, 1)
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	go func() {
		for sig := range sigs {
			temps.Lock()
			if temps.cancel != nil && len(temps.names)+len(temps.dirs)+len(temps.cleanups) == 0 {
				temps.cancel(Interrupted{sig})
				temps.cancel, temps.interrupted = nil, true
				temps.Unlock()
				// What does not stop by its context is ended here.
				time.AfterFunc(interruptGrace, func() {
					temps.Lock()
					cleanUp()
					dieOf(sig)
				})
				continue
			}
			cleanUp()
			dieOf(sig)
		}
	}()
}

// interruptGrace is how long a run whose SignalContext a signal cancelled
// has to end (DieOf) before the handler ends it: its fetches and requests
// stop at once, a loop that does not look at the context may not.
const interruptGrace = 2 * time.Second

// errInterrupted refuses a temporary file or directory once a signal has
// cancelled the SignalContext: no write begins after it (a run of
// --in-place stops before its next file).
var errInterrupted = errors.New("interrupted")

// Interrupted is the cause of a SignalContext's cancellation.
type Interrupted struct{ Signal os.Signal }

func (i Interrupted) Error() string { return "interrupted by " + i.Signal.String() }

// SignalContext is a run's context, cancelled by SIGINT or SIGTERM while
// the run has no temporary file, directory or cleanup registered (a fetch,
// a request of the cluster, a credential plugin): the run stops its work,
// creates no temporary file after it (no write begins), and its main ends
// by DieOf, within interruptGrace or by the handler. With some registered
// (a chart rendering, a write), the signal ends the process at once, as
// without a SignalContext (watchSignals). interrupted is the signal that
// cancelled it, nil for none.
func SignalContext(parent context.Context) (ctx context.Context, interrupted func() os.Signal) {
	ctx, cancel := context.WithCancelCause(parent)
	temps.Lock()
	defer temps.Unlock()
	temps.cancel = cancel
	temps.watch.Do(watchSignals)
	return ctx, func() os.Signal {
		var i Interrupted
		if errors.As(context.Cause(ctx), &i) {
			return i.Signal
		}
		return nil
	}
}

// cleanUp runs the cleanups, last registered first, and removes every
// temporary file and directory. Called with temps locked, for good.
func cleanUp() {
	for _, id := range slices.Backward(slices.Sorted(maps.Keys(temps.cleanups))) {
		temps.cleanups[id]()
	}
	for name := range temps.names {
		os.Remove(name)
	}
	for dir := range temps.dirs {
		os.RemoveAll(dir)
	}
}
