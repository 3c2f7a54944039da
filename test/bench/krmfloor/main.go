// Command krmfloor is the floor of a KRM function in Go: kyaml's
// framework.Execute with a processor that changes nothing, reading and
// writing the ResourceList as every kyaml function does. BenchmarkMemoryKRM
// runs it beside kubectl crd krm.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

func main() {
	rw := &kio.ByteReadWriter{Reader: os.Stdin, Writer: os.Stdout, OmitReaderAnnotations: true, KeepReaderAnnotations: true}
	noop := framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })
	if err := framework.Execute(noop, rw); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
