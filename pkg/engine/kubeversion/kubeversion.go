// Package kubeversion is the Kubernetes minor whose API server answers:
// the engine's verdicts are those of kube-apiserver 1.N, for N from Oldest
// to Embedded.
//
// The server code this binary links is that of one release, Embedded
// (apiextensions-apiserver v0.37). It answers for an older minor as a
// kube-apiserver started with --emulated-version does (KEP-4330): its
// effective version is set to emulate the minor, with the minor before as
// its compatibility version, and its feature gates are set to the minor's
// defaults. What the server code reads from them follows: new CEL
// expressions compile in the environment of the compatibility version
// (environment.MustBaseEnvSet: the libraries a minor's server accepts are
// those written by the minor before it), the formats validated
// (supportedFormatsAtVersion), the fields a gate drops (selectableFields),
// ratcheting. Upstream guarantees emulation to three minors back from its
// own; below that, as for what emulation does not cover (a cost estimate
// changed by a new cel-go, a bug fixed in a later patch), the parity tests
// against each minor's own server say where the answers agree.
//
// The effective version and the gates are the process's (the server's
// code reads them from globals), so one minor answers at a time: Use
// switches between runs, never during one.
package kubeversion

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
)

// Minor is Kubernetes 1.Minor.
type Minor uint

const (
	// Oldest is the oldest minor answered: the first whose server code
	// has compatibility versions (k8s.io/apiserver's
	// minimumKubeEmulationVersion).
	Oldest Minor = 31
	// Embedded is the minor of the server code linked (a test keeps it in
	// step with go.mod).
	Embedded Minor = 37
)

// Supported is every minor answered, oldest first.
func Supported() []Minor {
	var out []Minor
	for m := Oldest; m <= Embedded; m++ {
		out = append(out, m)
	}
	return out
}

func (m Minor) String() string { return "1." + strconv.Itoa(int(m)) }

// Range words the minors answered: "1.31 to 1.37".
func Range() string { return Oldest.String() + " to " + Embedded.String() }

// Parse reads a minor as a user writes it: "1.31", "v1.31", or a whole
// version ("1.31.4", "v1.31.4-eks-1234"), of which the minor is what
// counts. A minor outside Range is an error that names the range.
func Parse(s string) (Minor, error) {
	v, err := version.ParseGeneric(strings.TrimSpace(s))
	if err != nil || v.Major() != 1 {
		return 0, fmt.Errorf("%q is not a Kubernetes version (1.N, as 1.31): the versions answered are %s", s, Range())
	}
	m := Minor(v.Minor())
	if m < Oldest || m > Embedded {
		return 0, fmt.Errorf("Kubernetes %s is not answered: the versions answered are %s", m, Range())
	}
	return m, nil
}

// Nearest is the supported minor nearest to a server's version as its
// /version gives it (gitVersion, or major and minor, "1", "31+" on some
// managed services); warning is set when it is not the server's own.
func Nearest(gitVersion, major, minor string) (m Minor, warning string, err error) {
	v, err := version.ParseGeneric(gitVersion)
	if err != nil || v.Major() != 1 {
		maj, err1 := strconv.Atoi(strings.TrimSuffix(major, "+"))
		min, err2 := strconv.Atoi(strings.TrimSuffix(minor, "+"))
		if err1 != nil || err2 != nil || maj != 1 || min < 0 {
			return 0, "", fmt.Errorf("the cluster's version %q (major %q, minor %q) is not a Kubernetes 1.N version: say which to answer for with --kube-version", gitVersion, major, minor)
		}
		v = version.MajorMinor(1, uint(min))
	}
	m = Minor(v.Minor())
	switch {
	case m < Oldest:
		return Oldest, fmt.Sprintf("the cluster is Kubernetes %s, older than the versions answered (%s): answered as %s", m, Range(), Oldest), nil
	case m > Embedded:
		return Embedded, fmt.Sprintf("the cluster is Kubernetes %s, newer than the versions answered (%s): answered as %s", m, Range(), Embedded), nil
	}
	return m, "", nil
}

// Answer says which server answers: the minor, and whether by the code of
// another release emulating it.
type Answer struct {
	Minor Minor
	// Code is the release of the server code linked ("1.37.2").
	Code string
}

// Emulated reports whether the minor is answered by emulation.
func (a Answer) Emulated() bool { return a.Minor != Embedded }

// By words how: "kube-apiserver 1.37.2's own code", or "emulated by
// kube-apiserver 1.37.2 (compatibility version 1.30)".
func (a Answer) By() string {
	if !a.Emulated() {
		return "kube-apiserver " + a.Code + "'s own code"
	}
	return fmt.Sprintf("emulated by kube-apiserver %s (compatibility version %s)", a.Code, a.Minor-1)
}

// String words it whole: "kube-apiserver 1.31, emulated by kube-apiserver
// 1.37.2 (compatibility version 1.30)".
func (a Answer) String() string {
	if !a.Emulated() {
		return "kube-apiserver " + a.Code
	}
	return "kube-apiserver " + a.Minor.String() + ", " + a.By()
}

var (
	mu      sync.Mutex
	current = Embedded
)

// Current is the minor that answers now.
func Current() Answer {
	mu.Lock()
	defer mu.Unlock()
	return Answer{Minor: current, Code: code()}
}

// Use makes the server code of this process answer as kube-apiserver m
// (a supported minor): its effective version emulates m with m-1 as its
// compatibility version, and its feature gates take m's defaults. It is
// process-wide: no run may be under way.
func Use(m Minor) (Answer, error) {
	if m < Oldest || m > Embedded {
		return Answer{}, fmt.Errorf("Kubernetes %s is not answered: the versions answered are %s", m, Range())
	}
	mu.Lock()
	defer mu.Unlock()
	ev, ok := compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).(basecompatibility.MutableEffectiveVersion)
	if !ok {
		return Answer{}, fmt.Errorf("the server code's effective version cannot be set")
	}
	v := version.MajorMinor(1, uint(m))
	ev.SetEmulationVersion(v)
	// Below the floor upstream keeps (three minors back), set all the same:
	// what the code reads is the version, not the floor.
	ev.SetMinCompatibilityVersion(v.SubtractMinor(1))
	// A gate queried before is said at klog's default level, which a run
	// never shows: the first Use of a run comes before any query, and
	// later ones (a test of several minors) change what the code reads
	// from the gates, as intended.
	gates, ok := utilfeature.DefaultMutableFeatureGate.(featuregate.MutableVersionedFeatureGateWithLogger)
	if !ok {
		return Answer{}, fmt.Errorf("the server code's feature gates cannot be set")
	}
	if err := gates.SetEmulationVersionAndMinCompatibilityVersionWithLogger(logr.Discard(), v, v.SubtractMinor(1)); err != nil {
		return Answer{}, fmt.Errorf("the feature gates of Kubernetes %s: %w", m, err)
	}
	current = m
	return Answer{Minor: m, Code: code()}, nil
}

// code is the release of the server code linked, from the build's
// module versions (apiextensions-apiserver v0.37.2 is Kubernetes 1.37.2).
var code = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "k8s.io/apiextensions-apiserver" {
				if d.Replace != nil {
					d = d.Replace
				}
				if v, err := version.ParseSemantic(d.Version); err == nil && v.Major() == 0 && Minor(v.Minor()) == Embedded {
					return fmt.Sprintf("1.%d.%d", v.Minor(), v.Patch())
				}
			}
		}
	}
	return Embedded.String()
})

// Each runs f as each minor of ms answers, in order, then makes the minor
// that answered before answer again, whatever f returned: a run that asks
// several minors (the lowest that accepts a CRD, a test suite per minor)
// ends as it began. It stops at f's first error. Process-wide, as Use.
func Each(ms []Minor, f func(Minor) error) (err error) {
	before := Current().Minor
	defer func() {
		if _, restore := Use(before); err == nil {
			err = restore
		}
	}()
	for _, m := range ms {
		if _, err := Use(m); err != nil {
			return err
		}
		if err := f(m); err != nil {
			return err
		}
	}
	return nil
}

// Differences are what the real server of the minor is known to answer
// otherwise than this emulation of it, in a sentence each: measured by the
// version parity tests against that minor's newest patch (test/e2e,
// testdata/versions/disagreements.txt), where the old server's code is not
// the linked one's and cannot be called. None for the linked minor.
func (a Answer) Differences() []string {
	return a.differences(func(string) bool { return true })
}

// DifferencesFor are the Differences that concern a CRD whose CEL
// expressions (rules and message expressions) are exprs: those of a
// function the expressions call.
func (a Answer) DifferencesFor(exprs []string) []string {
	return a.differences(func(call string) bool {
		for _, e := range exprs {
			if strings.Contains(e, call) {
				return true
			}
		}
		return false
	})
}

func (a Answer) differences(concerns func(call string) bool) []string {
	if !a.Emulated() {
		return nil
	}
	var out []string
	for _, d := range differences {
		if a.Minor >= d.from && a.Minor <= d.to && concerns(d.call) {
			out = append(out, d.what)
		}
	}
	return out
}

// differences: the minors, the CEL call whose answer differs (as written
// in an expression), and the difference in words.
var differences = []struct {
	from, to Minor
	call     string
	what     string
}{
	{31, 31, ".containsCIDR(", "cidr(...).containsCIDR(...) answers true for a network holding another of a different address " +
		"(10.0.0.0/16, 10.0.1.0/24), where kube-apiserver 1.31.14 answers false (fixed in 1.32 by kubernetes#130450)"},
}
