package plugin

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// minorRefusal is, in explain-structural's report, a Kubernetes minor
// whose API server refuses the CRD, and the first of its reasons.
type minorRefusal struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// addMinKubeVersion sets, with --min-kube-version, the oldest minor whose
// server accepts obj (a CRD as a create sends it) and each refusing
// minor's first reason: the engine's answer (schema.MinKubeVersion),
// which ends with the run's own minor answering again.
func (o *ExplainStructuralOptions) addMinKubeVersion(r *crdReport, obj map[string]interface{}) error {
	if !o.MinKubeVersion {
		return nil
	}
	a, err := schema.MinKubeVersion(obj, strategy.Validators{})
	if err != nil {
		return err
	}
	r.acceptance = &a
	if a.Lowest != 0 {
		r.MinKubeVersion = a.Lowest.String()
	}
	r.RefusedBy = []minorRefusal{}
	for _, m := range a.Refused {
		r.RefusedBy = append(r.RefusedBy, minorRefusal{Version: m.Minor.String(), Reason: m.Reason})
	}
	return nil
}

// acceptanceWords says which minors accept the CRD: "accepted from
// Kubernetes 1.32 on", "accepted by every Kubernetes version answered
// (1.31 to 1.37)", "refused by every ...", or the minors that accept it
// when a newer one refuses it again.
func acceptanceWords(a *schema.Acceptance) string {
	switch {
	case len(a.Refused) == 0:
		return "accepted by every Kubernetes version answered (" + kubeversion.Range() + ")"
	case a.Lowest == 0:
		return "refused by every Kubernetes version answered (" + kubeversion.Range() + ")"
	case a.From():
		return "accepted from Kubernetes " + a.Lowest.String() + " on"
	}
	var by []string
	for _, m := range a.Accepted {
		by = append(by, m.String())
	}
	return "accepted by Kubernetes " + strings.Join(by, ", ") + " only"
}

// printAcceptance prints, under a CRD's verdict, the minors that accept it
// and a line per minor that refuses it, with its first reason.
func printAcceptance(w io.Writer, r crdReport) {
	if r.acceptance == nil {
		return
	}
	printable.Fprintf(w, "  %s\n", acceptanceWords(r.acceptance))
	for _, m := range r.RefusedBy {
		printable.Fprintf(w, "    %s: %s\n", m.Version, m.Reason)
	}
}

// acceptanceFinding is, for the CI reports, which minors accept the CRD: a
// note, whatever it says (the run's own minor's refusal is the finding
// that fails the run, as without --min-kube-version).
func (r crdReport) acceptanceFinding() (finding.Finding, bool) {
	if r.acceptance == nil {
		return finding.Finding{}, false
	}
	msg := acceptanceWords(r.acceptance)
	for _, m := range r.RefusedBy {
		msg += fmt.Sprintf("; %s: %s", m.Version, m.Reason)
	}
	return finding.Finding{Severity: finding.Info, Reason: "MinKubeVersion", Message: msg}, true
}
