package crdtest

import (
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// Report is a run of suites: its JSON is "kubectl crd test -o json".
type Report struct {
	Cases []CaseReport `json:"cases"`
	// Passed, Failed: cases with an expectation; Unexpected: without one.
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	Unexpected int `json:"unexpected"`
	// Rules are every rule and marker of the suites' CRDs; Uncovered
	// those no case's object was refused by.
	Rules     []CoveredRule `json:"rules"`
	Uncovered []CoveredRule `json:"uncovered"`
}

// CaseReport is one case's verdict.
type CaseReport struct {
	Name   string          `json:"name"`
	Source document.Source `json:"source"`
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
		for _, c := range s.Cases {
			cr := CaseReport{Name: c.Case.Name, Source: c.Case.Source, CaseResult: c, Unexpected: c.Case.Expect == nil}
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
