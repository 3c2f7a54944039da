// Command yamlfloor is the floor of hack/bench: the least any tool reading
// Kubernetes YAML does, a bare sigs.k8s.io/yaml parse of every document of
// its files and a JSON encoding of it, written to stdout.
//
//	yamlfloor FILE|DIR...
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

func main() {
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	docs := 0
	for _, arg := range os.Args[1:] {
		err := filepath.WalkDir(arg, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			n, err := convert(path, out)
			docs += n
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "yamlfloor:", err)
			os.Exit(2)
		}
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "yamlfloor:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "%d documents\n", docs)
}

func convert(name string, out *bufio.Writer) (int, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReaderSize(f, 1<<20))
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("%s: %v", name, err)
		}
		js, err := sigsyaml.YAMLToJSON(doc)
		if err != nil {
			return n, fmt.Errorf("%s: %v", name, err)
		}
		if string(js) == "null" {
			continue
		}
		out.Write(js)
		out.WriteByte('\n')
		n++
	}
}
