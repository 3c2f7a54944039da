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
		return nil, false, nil
	}
	if apiVersion != "apiextensions.k8s.io/v1" && apiVersion != "apiextensions.k8s.io/v1beta1" {
		return nil, true, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("unsupported apiVersion %q for a CustomResourceDefinition: use apiextensions.k8s.io/v1 (or the legacy v1beta1)", apiVersion)}
	}
	js, err := d.JSON()
	if err != nil {
		return nil, true, &document.InputError{Source: d.Source, Msg: err.Error()}
	}
	obj, err := schema.DecodeCRD(js)
	if err != nil {
		return nil, true, &document.InputError{Source: d.Source, Msg: "invalid CustomResourceDefinition: " + err.Error()}
	}
	if apiVersion == "apiextensions.k8s.io/v1" {
		// The server refuses a v1 CRD with a version without schema.
		for _, v := range obj.Spec.Versions {
			if !schema.HasSchema(&v) {
				return nil, true, &document.InputError{Source: d.Source, Msg: fmt.Sprintf("CustomResourceDefinition %s, version %s: no schema: apiextensions.k8s.io/v1 requires spec.versions[*].schema.openAPIV3Schema, and the API server refuses this CRD", obj.Name, v.Name)}
			}
		}
	}
	return &loadedCRD{CRD: schema.NewCRD(obj), Source: d.Source, Raw: d.Object}, true, nil
}
