package document

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// inputExtensions are the files kubectl reads from a directory.
var inputExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Files lists the files of a path argument the way kubectl -f does: the file
// itself, or a directory's .yaml, .yml and .json files (with recursive, in
// subdirectories too).
//
// Unlike kubectl, a named pipe (FIFO) found in a directory is refused: kubectl
// opens it and waits for a writer, forever in a CI job. A FIFO named itself
// is read, as kubectl reads it (-f <(...), a process substitution, is one).
func Files(name string, recursive bool) ([]string, error) {
	info, err := os.Stat(name)
	if err != nil {
		return nil, pathError(name, err)
	}
	if !info.IsDir() {
		return []string{name}, nil
	}
	var files []string
	err = filepath.WalkDir(name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != name && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if !inputExtensions[strings.ToLower(filepath.Ext(p))] {
			return nil
		}
		if !d.Type().IsRegular() {
			// A link or a special file: what kubectl would open.
			if info, err := os.Stat(p); err == nil && info.Mode()&fs.ModeNamedPipe != 0 {
				return fmt.Errorf("%s: a named pipe (FIFO) in the directory %q: reading it waits for a writer, which kubectl does forever; give it by its own name to read it", p, name)
			}
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .yaml, .yml or .json files in directory %q", name)
	}
	return files, nil
}

// pathError says why a path argument cannot be read: kubectl's words when
// it does not exist ("the path %q does not exist"), the system's otherwise
// (permission denied, a loop of symbolic links), which kubectl says when it
// opens the path.
func pathError(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(name); lerr == nil {
			return fmt.Errorf("the path %q does not exist: it is a symbolic link to %q, which does not exist", name, target)
		}
		return fmt.Errorf("the path %q does not exist", name)
	}
	why := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err.Error()
	}
	if errors.Is(err, syscall.ELOOP) {
		why += " (a loop of symbolic links)"
	}
	return fmt.Errorf("the path %q cannot be read: %s", name, why)
}
