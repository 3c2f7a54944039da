package source

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kubectl-crd/kubectl-crd/internal/cachedir"
	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// valuesFiles are the values files of Options.ChartValues as the
// companion is to read them, each read here first, bounded
// (fileread.Read): a file too large, or a device that never ends
// (/dev/zero), is an input error naming it, before any chart is
// rendered. A regular file is handed on by its name (the companion's
// messages then name it); anything else (a pipe, a process substitution,
// which the companion could not read again) by a copy of what was read,
// in the directory of the run's rendering. Read once per run.
func (f *Fetcher) valuesFiles(dir string) ([]string, error) {
	if f.values != nil || len(f.opts.ChartValues) == 0 {
		return f.values, nil
	}
	var files []string
	for i, v := range f.opts.ChartValues {
		data, err := fileread.Read(v)
		if err != nil {
			return nil, &Error{Source: v, Input: true, Err: withoutPath(err)}
		}
		if st, err := os.Stat(v); err == nil && st.Mode().IsRegular() {
			files = append(files, v)
			continue
		}
		copied := filepath.Join(dir, "values-"+strconv.Itoa(i)+".yaml")
		if err := os.WriteFile(copied, data, cachedir.FileMode); err != nil {
			return nil, err
		}
		files = append(files, copied)
	}
	f.values = files
	return files, nil
}

// withoutPath is an error of a file without its path, which the Error
// around it names: a TooLargeError's words alone, a PathError's
// operation and cause.
func withoutPath(err error) error {
	var tl *fileread.TooLargeError
	var pe *fs.PathError
	switch {
	case errors.As(err, &tl):
		return errors.New(tl.Error()[len(tl.Path)+2:])
	case errors.As(err, &pe):
		return errors.New(pe.Op + ": " + pe.Err.Error())
	}
	return err
}
