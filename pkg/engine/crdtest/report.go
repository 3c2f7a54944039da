package crdtest

import (
	"fmt"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// Report is a run of suites: its JSON is "kubectl crd test -o json".
type Report struct {
	Cases []CaseReport `json:"cases"`
	// Passed, Failed: cases with an expectation; Unexpected: without one.
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	Unexpected int `json:"unexpected"`
	// NotSelected: the cases --run did not select (not run, not in Cases).
	NotSelected int `json:"notSelected"`
	// Rules are every rule and marker of the suites' CRDs; Uncovered
	// those no case's object was refused by.
	Rules     []CoveredRule `json:"rules"`
	Uncovered []CoveredRule `json:"uncovered"`
}

// CaseReport is one case's verdict.
type CaseReport struct {
	Name   string          `json:"name"`
	Source document.Source `json:"source"`
	// KubeVersion is the Kubernetes minor asked for ("1.31"), whose
	// server answered the case; absent when none was (the linked code's).
	KubeVersion string `json:"kubeVersion,omitempty"`
	// Subresource is the subresource the case's update writes ("status"),
	// absent for a write of the object.
	Subresource string `json:"subresource,omitempty"`
	CaseResult
	// Unexpected: the case has no expectation yet.
	Unexpected bool `json:"unexpected,omitempty"`
}

// CoveredRule is a rule and whether some case exercised it.
type CoveredRule struct {
	Rule
	Exercised bool `json:"exercised"`
}

// Summarize is the report of the results of suites, in order. A rule of
// a CRD that several suites use is exercised when a case of any one
// refuses by it.
func Summarize(results []*SuiteResult) *Report {
	r := &Report{Cases: []CaseReport{}, Rules: []CoveredRule{}, Uncovered: []CoveredRule{}}
	index := map[string]int{}
	for _, s := range results {
		r.NotSelected += s.NotSelected
		for _, c := range s.Cases {
			cr := CaseReport{Name: c.Case.Name, Source: c.Case.Source, Subresource: c.Case.Subresource, CaseResult: c, Unexpected: c.Expect == nil}
			if s.Minor != 0 {
				cr.KubeVersion = s.Minor.String()
			}
			r.Cases = append(r.Cases, cr)
			switch {
			case cr.Unexpected:
				r.Unexpected++
			case c.Pass:
				r.Passed++
			default:
				r.Failed++
			}
		}
		for i, rule := range s.Rules {
			key := rule.Source.String() + "\x00" + rule.Rule
			j, ok := index[key]
			if !ok {
				j = len(r.Rules)
				index[key] = j
				r.Rules = append(r.Rules, CoveredRule{Rule: rule})
			}
			r.Rules[j].Exercised = r.Rules[j].Exercised || s.Refused[i]
		}
	}
	for _, rule := range r.Rules {
		if !rule.Exercised {
			r.Uncovered = append(r.Uncovered, rule)
		}
	}
	return r
}

// Finding is what a report says of the case (finding.TestCase), with the
// verdict on it: a case that fails its expectation fails the run, with
// what differs; a case without an expectation is a note of what it
// observed (--record writes it); a case that passes has none (ok false).
func (c CaseReport) Finding() (f finding.Judged, ok bool) {
	switch {
	case !c.Pass:
		return finding.Judged{Fails: true, Finding: finding.Finding{
			Check: finding.TestCase, Reason: "failed", Severity: finding.Error, Message: strings.Join(c.Mismatches, "\n"),
		}}, true
	case c.Unexpected:
		var result Result
		if c.Observed != nil {
			result = c.Observed.Result
		}
		return finding.Judged{Finding: finding.Finding{
			Check: finding.TestCase, Reason: "unexpected", Severity: finding.Info,
			Message: fmt.Sprintf("no expectation: observed %s (--record writes it)", result),
		}}, true
	}
	return finding.Judged{}, false
}

// Finding is a rule no case's object was refused by (finding.TestCase):
// a warning, or with failUncovered (--coverage=error) an error that
// fails the run.
func (r CoveredRule) Finding(failUncovered bool) finding.Judged {
	f := finding.Finding{Check: finding.TestCase, Reason: "uncovered", Severity: finding.Warning,
		Message: "no case's object is refused by " + r.Rule.Rule}
	if r.Field != "" {
		f.Message += " at " + r.Field
	}
	if failUncovered {
		f.Severity = finding.Error
	}
	return finding.Judged{Finding: f, Fails: failUncovered}
}

// Fails reports whether the run fails, as its findings say: a case fails,
// or, with failUncovered (--coverage=error), a rule is uncovered.
func (r *Report) Fails(failUncovered bool) bool {
	for _, c := range r.Cases {
		if f, ok := c.Finding(); ok && f.Fails {
			return true
		}
	}
	for _, rule := range r.Uncovered {
		if rule.Finding(failUncovered).Fails {
			return true
		}
	}
	return false
}
