// Command upstreamprune is the upstream-only reference of hack/bench: what
// the API server does to custom resources sent to it, decode + prune +
// encode, with the apiextensions-apiserver code alone (hack/bench/serverpath)
// and nothing of kubectl-crd's. It reads the CRDs of -crds (files or
// directories), then the objects of -f, splitting and converting documents
// as kubectl does, and writes each object as the server would store it as
// YAML on stdout; a summary line goes to stderr.
//
//	upstreamprune -crds DIR -f objects.yaml [-validate=false] [-defaults]
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/hack/bench/serverpath"
)

func main() {
	crds := flag.String("crds", "", "CRD files or directories, comma-separated")
	file := flag.String("f", "", "the objects")
	validate := flag.Bool("validate", true, "run the server's create validation (schema, CEL rules, metadata) as kubectl crd prune does")
	defaults := flag.Bool("defaults", false, "apply the schemas' defaults")
	flag.Parse()
	if err := run(*crds, *file, *validate, *defaults); err != nil {
		fmt.Fprintln(os.Stderr, "upstreamprune:", err)
		os.Exit(2)
	}
}

func run(crdPaths, file string, validate, defaults bool) error {
	byGK := map[runtimeschema.GroupKind]*serverpath.CRD{}
	for _, p := range strings.Split(crdPaths, ",") {
		if p == "" {
			continue
		}
		files, err := yamlFiles(p)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := eachDocument(f, func(js []byte) error {
				crd, err := serverpath.DecodeCRD(js)
				if err != nil {
					return fmt.Errorf("%s: %v", f, err)
				}
				byGK[crd.GroupKind()] = crd
				return nil
			}); err != nil {
				return err
			}
		}
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	var objects, unknownFields, refused, noCRD int
	err := eachDocument(file, func(js []byte) error {
		var obj map[string]interface{}
		if err := utiljson.Unmarshal(js, &obj); err != nil {
			return err
		}
		objects++
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		gv, err := runtimeschema.ParseGroupVersion(apiVersion)
		if err != nil {
			return err
		}
		crd, ok := byGK[runtimeschema.GroupKind{Group: gv.Group, Kind: kind}]
		if !ok || !crd.Served(gv.Version) {
			noCRD++
		} else {
			unknown, err := crd.Coerce(obj, defaults)
			if err != nil {
				refused++
			}
			unknownFields += len(unknown)
			if validate && err == nil {
				errs, err := crd.ValidateCreate(obj, "default")
				if err != nil {
					return err
				}
				if len(errs) > 0 {
					refused++
				}
			}
		}
		y, err := sigsyaml.Marshal(obj)
		if err != nil {
			return err
		}
		out.WriteString("---\n")
		out.Write(y)
		return nil
	})
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d CRDs, %d objects: %d unknown fields pruned, %d refused, %d without a CRD\n", len(byGK), objects, unknownFields, refused, noCRD)
	return nil
}

// yamlFiles lists p, or the .yaml, .yml and .json files of the directory p.
func yamlFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				out = append(out, path)
			}
		}
		return nil
	})
	return out, err
}

// eachDocument splits a file as kubectl's resource builder does and calls
// fn with each non-empty document as JSON.
func eachDocument(name string, fn func(js []byte) error) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	d := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReaderSize(f, 1<<20), 4096)
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %v", name, err)
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		if err := fn(raw); err != nil {
			return err
		}
	}
}
