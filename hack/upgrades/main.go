// Command upgrades regenerates the upgrade safety table of docs/upgrades.md
// from the corpus's release histories (see package table):
//
//	go run ./hack/upgrades -corpus ../shared/corpus -w docs/upgrades.md
//
// Without -w it prints the table.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubectl-crd/kubectl-crd/hack/upgrades/table"
)

func main() {
	dir := flag.String("corpus", os.Getenv("KUBECTL_CRD_CORPUS"), "the corpus directory (default $KUBECTL_CRD_CORPUS)")
	write := flag.String("w", "", "the page whose generated table to rewrite (docs/upgrades.md)")
	flag.Parse()
	if err := run(*dir, *write); err != nil {
		fmt.Fprintln(os.Stderr, "upgrades:", err)
		os.Exit(1)
	}
}

func run(dir, page string) error {
	if dir == "" {
		return fmt.Errorf("no corpus: -corpus DIR or KUBECTL_CRD_CORPUS")
	}
	pairs, err := table.Compute(dir)
	if err != nil {
		return err
	}
	md := table.Render(pairs)
	if page == "" {
		_, err := os.Stdout.WriteString(md)
		return err
	}
	old, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	out, err := table.Splice(string(old), md)
	if err != nil {
		return fmt.Errorf("%s: %w", page, err)
	}
	return os.WriteFile(page, []byte(out), 0o644)
}
