package crdtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
)

const gatewayCRD = "crds/gateway-api/gateway-api@v1.7.0/config/crd/standard/gateway.networking.k8s.io_gateways.yaml"

// gatewaySuite puts testdata/gateway.test.yaml beside the corpus's Gateway
// CRD, with edit applied to the CRD's text.
func gatewaySuite(t *testing.T, edit func(string) string) string {
	crd, err := os.ReadFile(filepath.Join(corpus.Dir(t), gatewayCRD))
	if err != nil {
		t.Skipf("no Gateway CRD in the corpus: %v", err)
	}
	suite, err := os.ReadFile("testdata/gateway.test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(edit(string(crd))), 0o644); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "gateway.test.yaml")
	if err := os.WriteFile(name, suite, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func failures(results []*SuiteResult) []string {
	var out []string
	for _, s := range results {
		for _, c := range s.Cases {
			if !c.Pass || c.Case.Expect == nil {
				out = append(out, c.Case.Name)
			}
		}
	}
	return out
}

// TestGatewaySuite: a suite of our own for the rules of a real project's
// CRD passes, and fails when one of its rules is weakened (a mutation:
// each rule below rewritten to allow everything in a copy of the CRD).
func TestGatewaySuite(t *testing.T) {
	name := gatewaySuite(t, func(s string) string { return s })
	if f := failures(runFile(t, name, false)); len(f) > 0 {
		t.Fatalf("the suite fails on the CRD as published: %v", f)
	}
	for _, m := range []struct{ rule, weakened, fails string }{
		{`!has(l.tls) : true)'`, `true : true)'`, "tls on an HTTP listener"},
		{`(l.tls.mode
                    == '''' || l.tls.mode == ''Terminate'') : true)'`, `true : true)'`, "HTTPS with tls passthrough"},
		{`(!has(l.hostname)
                    || l.hostname == '''') : true)'`, `true : true)'`, "a hostname on a TCP listener"},
	} {
		name := gatewaySuite(t, func(s string) string {
			if !strings.Contains(s, m.rule) {
				t.Fatalf("the CRD has no rule %q", m.rule)
			}
			return strings.Replace(s, m.rule, m.weakened, 1) // v1, the version the cases use
		})
		f := failures(runFile(t, name, false))
		if len(f) != 1 || f[0] != m.fails {
			t.Errorf("rule %q weakened: failing cases %v, want [%s]", m.rule, f, m.fails)
		}
	}
}
