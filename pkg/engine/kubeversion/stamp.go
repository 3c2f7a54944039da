package kubeversion

import "strconv"

// Key is the name under which every structured output records the answer:
// the member of a JSON report, the SARIF run's property, the prefix of a
// JUnit property's and a KRM result's tag names (docs/json.md).
const Key = "kubernetes"

// Stamp is the answer as the structured outputs record it, the one shape
// of all of them, whichever minor answers (the default too: a report is
// data, and says it always).
type Stamp struct {
	// Version is the minor that answered: "1.31".
	Version string `json:"version"`
	// Emulated: by the code of another release, emulating Version.
	Emulated bool `json:"emulated"`
	// By is the server code that answered: "kube-apiserver 1.37.2".
	By string `json:"by"`
	// CompatibilityVersion is the emulating server's compatibility
	// version ("1.30"): the CEL environment new expressions compile in.
	// Absent when the minor answers by its own code.
	CompatibilityVersion string `json:"compatibilityVersion,omitempty"`
	// Differences are what the real server of Version is known to answer
	// otherwise than the emulation (Answer.Differences). Absent when none.
	Differences []string `json:"differences,omitempty"`
}

// Stamp is a's record.
func (a Answer) Stamp() Stamp {
	s := Stamp{Version: a.Minor.String(), Emulated: a.Emulated(), By: "kube-apiserver " + a.Code}
	if s.Emulated {
		s.CompatibilityVersion = (a.Minor - 1).String()
	}
	s.Differences = a.Differences()
	return s
}

// Verdicts words the answer as a line of a report: "verdicts of
// kube-apiserver 1.31, emulated by kube-apiserver 1.37.2 (compatibility
// version 1.30)", or "verdicts of kube-apiserver 1.37, by kube-apiserver
// 1.37.2's own code".
func (a Answer) Verdicts() string {
	by := a.By()
	if !a.Emulated() {
		by = "by " + by
	}
	return "verdicts of kube-apiserver " + a.Minor.String() + ", " + by
}

// Property is a member of the stamp as a name and a string value.
type Property struct{ Name, Value string }

// Properties are the stamp's members, for the formats whose values are
// strings (JUnit's properties, a KRM result's tags): named by Key, a dot
// and the member's JSON name, in the order of the JSON.
func (s Stamp) Properties() []Property {
	ps := []Property{
		{Key + ".version", s.Version},
		{Key + ".emulated", strconv.FormatBool(s.Emulated)},
		{Key + ".by", s.By},
	}
	if s.CompatibilityVersion != "" {
		ps = append(ps, Property{Key + ".compatibilityVersion", s.CompatibilityVersion})
	}
	for i, d := range s.Differences {
		ps = append(ps, Property{Key + ".differences." + strconv.Itoa(i), d})
	}
	return ps
}
