package plugin

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// inputExtensions are the files kubectl reads from a directory.
var inputExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// readInputs reads every document of the named files, directories (their
// .yaml, .yml and .json files; subdirectories with recursive) and "-" for
// stdin, in order. Errors name the file and line.
func readInputs(names []string, recursive bool, stdin io.Reader) ([]*document.Document, error) {
	var docs []*document.Document
	usedStdin := false
	for _, name := range names {
		if name == "-" {
			if usedStdin {
				return nil, usageErrorf("-f - can be given only once")
			}
			usedStdin = true
			ds, err := document.Read(stdin, "-")
			if err != nil {
				return nil, inputError(err)
			}
			docs = append(docs, ds...)
			continue
		}
		files, err := expand(name, recursive)
		if err != nil {
			return nil, inputError(err)
		}
		for _, f := range files {
			ds, err := readFile(f)
			if err != nil {
				return nil, inputError(err)
			}
			docs = append(docs, ds...)
		}
	}
	return docs, nil
}

func readFile(name string) ([]*document.Document, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return document.Read(f, name)
}

// expand lists the files of a path argument, like kubectl -f.
func expand(name string, recursive bool) ([]string, error) {
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

// loadedCRD is a CRD with where it came from.
type loadedCRD struct {
	CRD    *schema.CRD
	Source document.Source
	// Raw is the CRD as written: what the server would drop, such as the
	// mutability markers, is still there.
	Raw map[string]interface{}
}

// crdOf decodes a document that is a CustomResourceDefinition; ok is false
// for other documents.
func crdOf(d *document.Document) (*loadedCRD, bool, error) {
	apiVersion, _ := d.Object["apiVersion"].(string)
	kind, _ := d.Object["kind"].(string)
	if !schema.IsCRD(apiVersion, kind) {
		return nil, false, nil // no JSON encoding for every object
	}
	js, err := d.JSON()
	if err != nil {
		return nil, true, &document.InputError{Source: d.Source, Msg: err.Error()}
	}
	crd, ok, err := schema.FromObject(d.Object, js)
	if err != nil {
		return nil, true, &document.InputError{Source: d.Source, Msg: err.Error()}
	}
	if !ok {
		return nil, false, nil
	}
	return &loadedCRD{CRD: crd, Source: d.Source, Raw: d.Object}, true, nil
}
