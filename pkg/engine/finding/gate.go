package finding

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultFailOn are the checks whose findings fail a run unless it says
// otherwise: what the server would refuse (a non-structural CRD, an
// update, an invalid object, a CRD update), what a CRD upgrade loses of
// existing objects, and an object of a kind nothing defines, which would
// otherwise pass unchecked (a typo in its apiVersion is one). Not what
// pruning drops from a manifest, a compatible CRD change, or the server's
// warnings on a CRD.
var DefaultFailOn = []Check{NonStructural, Update, MissingCRD, Invalid, Breaking, DataLoss}

// Gate is the one rule of both front ends for what fails a run: the
// plugin's --fail-on, the KRM function's failOn.
type Gate struct {
	failOn map[Check]bool
}

// NewGate is the gate failing on the named checks (DefaultFailOn when
// names is nil); ignoreMissingCRDs leaves MissingCRD out, for repositories
// that check only some of their kinds. An unknown name is an error that
// lists the known ones.
func NewGate(names []string, ignoreMissingCRDs bool) (Gate, error) {
	g := Gate{failOn: map[Check]bool{}}
	if names == nil {
		for _, c := range DefaultFailOn {
			g.failOn[c] = true
		}
	}
	for _, name := range names {
		c := Check(name)
		if !slices.Contains(Checks, c) {
			return Gate{}, fmt.Errorf("unknown finding %q (%s)", name, CheckNames())
		}
		g.failOn[c] = true
	}
	if ignoreMissingCRDs {
		delete(g.failOn, MissingCRD)
	}
	return g, nil
}

// DefaultGate is the gate of DefaultFailOn: that of a command without
// --fail-on (explain-structural).
func DefaultGate() Gate {
	g, _ := NewGate(nil, false)
	return g
}

// TestCase is the check of kubectl crd test's results: a case whose
// outcome is not the one expected, a rule no case exercised. It is no
// name of failOn (not in Checks): a test run fails on its cases.
const TestCase Check = "TestCase"

// With is g failing on check too.
func (g Gate) With(check Check) Gate {
	out := Gate{failOn: map[Check]bool{check: true}}
	for c := range g.failOn {
		out.failOn[c] = true
	}
	return out
}

// Fails reports whether f fails the run. A finding of no check (a CRD
// defined twice, a note) never does.
func (g Gate) Fails(f Finding) bool {
	return f.Check != "" && g.failOn[f.Check]
}

// FailsOn reports whether findings of check fail the run.
func (g Gate) FailsOn(check Check) bool { return g.failOn[check] }

// Judged is a finding with the gate's verdict on it, decided once: every
// renderer (text, JSON, SARIF, JUnit, GitHub) shows Fails as it is, and
// the exit code is Failing's, so that a report's failing results and the
// exit code never disagree.
type Judged struct {
	Finding
	// Fails: the finding fails the run (exit 1).
	Fails bool
}

// Judge is the gate's verdict on each of findings (Fails).
func (g Gate) Judge(findings []Finding) []Judged {
	out := make([]Judged, len(findings))
	for i, f := range findings {
		out[i] = Judged{Finding: f, Fails: g.Fails(f)}
	}
	return out
}

// Failing reports whether one of judged fails the run.
func Failing(judged []Judged) bool {
	for _, j := range judged {
		if j.Fails {
			return true
		}
	}
	return false
}

// CheckNames are the names of Checks, comma-separated, for help and errors.
func CheckNames() string {
	names := make([]string, len(Checks))
	for i, c := range Checks {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
