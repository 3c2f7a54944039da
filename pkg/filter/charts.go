package filter

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/internal/source"
)

// chartValues are the values files of the Helm charts of crdPaths and
// previous: ChartValuesFiles, then ChartValues written to a file of their
// own, removed by done once the charts are rendered (or by the handler of
// SIGINT and SIGTERM, safewrite.TempDir). A chart on disk and
// each file must be inside root, as crdPaths.
func (c *CRDCheck) chartValues(root string) (files []string, done func(), err error) {
	done = func() {}
	for _, p := range slices.Concat(c.CRDPaths, c.Previous) {
		if source.IsChart(p) {
			if err := inside(p, root); err != nil {
				return nil, done, err
			}
		}
	}
	for _, f := range c.ChartValuesFiles {
		if err := inside(f, root); err != nil {
			return nil, done, fmt.Errorf("chartValuesFiles: %w", err)
		}
		files = append(files, f)
	}
	if len(c.ChartValues) == 0 {
		return files, done, nil
	}
	data, err := json.Marshal(c.ChartValues)
	if err != nil {
		return nil, done, fmt.Errorf("chartValues: %w", err)
	}
	// In a directory that a signal's handler removes too.
	dir, remove, err := safewrite.TempDir("kubectl-crd-values-")
	if err != nil {
		return nil, done, err
	}
	done = func() { remove() }
	name := filepath.Join(dir, "chartValues.json")
	if err := os.WriteFile(name, data, 0o600); err != nil {
		done()
		return nil, func() {}, err
	}
	return append(files, name), done, nil
}
