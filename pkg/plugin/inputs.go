package plugin

import (
	"fmt"
	"io"
	"os"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

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
		files, err := document.Files(name, recursive)
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
	crd, ok, err := schema.FromObject(d.Object)
	if err != nil {
		return nil, true, &document.InputError{Source: d.Source, Msg: err.Error()}
	}
	if !ok {
		return nil, false, nil
	}
	return &loadedCRD{CRD: crd, Source: d.Source, Raw: d.Object}, true, nil
}

// objectsOf are the objects kubectl sends for docs: the items of Lists, one
// by one, and the other documents.
func objectsOf(docs []*document.Document) []*document.Document {
	var out []*document.Document
	for _, d := range docs {
		out = append(out, d.Objects()...)
	}
	return out
}

// warnInputs prints what kubectl would pass in silence, such as duplicate keys.
func warnInputs(w io.Writer, docs []*document.Document) {
	for _, d := range docs {
		for _, x := range d.Warnings {
			fmt.Fprintf(w, "Warning: %s: %s (%s)\n", prune.Ref(d.Object), x.Msg, x.Source)
		}
	}
}
