package plugin

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// kubeVersionsFlag is test's --kube-version: the Kubernetes minors whose
// API servers each run the suites, as a list ("1.31,1.37"), a range
// ("1.31-1.37") or both; none given, the linked code's minor alone, as
// before the flag.
type kubeVersionsFlag struct {
	value  string
	minors []kubeversion.Minor
}

// AddFlags registers --kube-version.
func (k *kubeVersionsFlag) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&k.value, "kube-version", "", "run the suites as the API server of each of these Kubernetes minors answers, one after the other: "+
		"a list (1.31,1.37), a range (1.31-1.37) or one ("+kubeversion.Range()+"; the default: "+kubeversion.Embedded.String()+")")
	mustRegister(cmd, "kube-version", func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
		prefix := typed[:strings.LastIndex(typed, ",")+1]
		var out []string
		for _, m := range kubeversion.Supported() {
			out = append(out, prefix+m.String())
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// Validate reads the minors; one not answered, or a range upside down,
// is a usage error (exit 2).
func (k *kubeVersionsFlag) Validate() error {
	if k.value == "" {
		return nil
	}
	minors, err := parseKubeVersions(k.value)
	if err != nil {
		return usageErrorf("--kube-version: %v", err)
	}
	k.minors = minors
	return nil
}

// parseKubeVersions reads a list of minors and ranges of them, each as
// kubeversion.Parse reads a minor: the minors, each once, oldest first.
func parseKubeVersions(s string) ([]kubeversion.Minor, error) {
	seen := map[kubeversion.Minor]bool{}
	for _, elem := range strings.Split(s, ",") {
		from, to, err := parseKubeVersionRange(strings.TrimSpace(elem))
		if err != nil {
			return nil, err
		}
		for m := from; m <= to; m++ {
			seen[m] = true
		}
	}
	var out []kubeversion.Minor
	for m := range seen {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// parseKubeVersionRange reads "1.31-1.37", or one minor (from == to). A
// version's pre-release ("1.31.4-eks-1") is no range: what follows the
// dash is no version.
func parseKubeVersionRange(elem string) (from, to kubeversion.Minor, err error) {
	if a, b, ok := strings.Cut(elem, "-"); ok && b != "" && (b[0] == 'v' || '0' <= b[0] && b[0] <= '9') {
		if from, err = kubeversion.Parse(a); err != nil {
			return 0, 0, err
		}
		if to, err = kubeversion.Parse(b); err != nil {
			return 0, 0, err
		}
		if from > to {
			return 0, 0, fmt.Errorf("the range %q goes down: write it oldest first, %s-%s", elem, to, from)
		}
		return from, to, nil
	}
	m, err := kubeversion.Parse(elem)
	return m, m, err
}

// words are the minors, "1.31, 1.37".
func (k *kubeVersionsFlag) words() string {
	var out []string
	for _, m := range k.minors {
		out = append(out, m.String())
	}
	return strings.Join(out, ", ")
}

// atMinor names the minor in an input error of a run on several minors:
// the server of one minor refuses a suite's CRD that another accepts.
func atMinor(err error, m kubeversion.Minor) error {
	var ie *document.InputError
	if errors.As(err, &ie) {
		ie.Msg += printable.Sprintf(" (on Kubernetes %s)", m)
	}
	return err
}
