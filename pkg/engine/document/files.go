package document

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// inputExtensions are the files kubectl reads from a directory.
var inputExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Files lists the files of a path argument the way kubectl -f does: the file
// itself, or a directory's .yaml, .yml and .json files (with recursive, in
// subdirectories too).
func Files(name string, recursive bool) ([]string, error) {
	info, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("the path %q does not exist", name)
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
		if inputExtensions[strings.ToLower(filepath.Ext(p))] {
			files = append(files, p)
		}
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
