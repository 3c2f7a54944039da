package crdtest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/kepimmutable"
)

var updateKEP = flag.Bool("update-kep", false, "write examples/kep-immutable from the KEP's examples (internal/testsupport/kepimmutable)")

const (
	kepDir   = "../../../examples/kep-immutable"
	kepGroup = "kep.immutable.example.com"
)

// kepSchema is one schema of the KEP's examples (in one mode, list type
// and map type) and its transitions.
type kepSchema struct {
	name   string
	schema string
	cases  []kepimmutable.Case
}

func kepSchemas(t *testing.T) []kepSchema {
	cases, err := kepimmutable.Cases()
	if err != nil {
		t.Fatal(err)
	}
	var out []kepSchema
	index := map[string]int{}
	for _, c := range cases {
		i, ok := index[c.Schema]
		if !ok {
			i = len(out)
			index[c.Schema] = i
			name := kepCaseName(c.Name)
			out = append(out, kepSchema{name: name[:strings.Index(name, ": {")], schema: c.Schema})
		}
		out[i].cases = append(out[i].cases, c)
	}
	return out
}

// kepBound gives every list, map and string a size the examples fit in,
// so that the rules lower-mutability writes stay within the server's cost
// budget (--lower).
func kepBound(s map[string]interface{}) {
	switch {
	case s["type"] == "array":
		s["maxItems"] = 8
	case s["type"] == "string":
		s["maxLength"] = 16
	case s["type"] == "object" && s["additionalProperties"] != nil:
		s["maxProperties"] = 8
	}
	if props, ok := s["properties"].(map[string]interface{}); ok {
		for _, p := range props {
			kepBound(p.(map[string]interface{}))
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := s[k].(map[string]interface{}); ok {
			kepBound(c)
		}
	}
}

func kepCRD(n int, ks kepSchema) (string, error) {
	var s map[string]interface{}
	if err := yaml.Unmarshal([]byte(ks.schema), &s); err != nil {
		return "", err
	}
	kepBound(s)
	crd := map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]interface{}{"name": fmt.Sprintf("kep%ds.%s", n, kepGroup)},
		"spec": map[string]interface{}{
			"group": kepGroup,
			"names": map[string]interface{}{"kind": fmt.Sprintf("Kep%d", n), "plural": fmt.Sprintf("kep%ds", n)},
			"scope": "Namespaced",
			"versions": []interface{}{map[string]interface{}{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]interface{}{"openAPIV3Schema": s},
			}},
		},
	}
	b, err := yaml.Marshal(crd)
	return fmt.Sprintf("# %s\n%s", ks.name, b), err
}

// kepObject is an object of kind KepN with the example's fields, as a
// YAML flow mapping.
func kepObject(n int, fields string) string {
	head := fmt.Sprintf(`{apiVersion: %s/v1, kind: Kep%d, metadata: {name: example}`, kepGroup, n)
	body := strings.TrimSuffix(strings.TrimPrefix(fields, "{"), "}")
	if body == "" {
		return head + "}"
	}
	return head + ", " + body + "}"
}

// kepCaseName is the fixture's name of a case without the list and map
// types it does not name, quoted for YAML.
func kepCaseName(name string) string {
	name = strings.NewReplacer(`, list type ""`, "", `, map type ""`, "").Replace(name)
	return strings.ReplaceAll(name, "'", "''")
}

// kepFiles are the suite of the KEP's examples: the CRDs, and a case per
// transition whose expectation is the KEP's (allowed in the modes it names).
func kepFiles(t *testing.T) (crds, suite []byte) {
	var c, s bytes.Buffer
	s.WriteString(`# The examples of KEP "Immutable fields": each example's schema in each mode,
# list type and map type it is about (crds.yaml, one CRD each, its lists, maps and
# strings bounded for the server's cost budget), and each transition the KEP
# shows, allowed or refused as the KEP says. Generated from
# internal/testsupport/kepimmutable by go test ./pkg/engine/crdtest -run TestKEPSuite -update-kep.
crds: crds.yaml
cases:
`)
	for i, ks := range kepSchemas(t) {
		n := i + 1
		text, err := kepCRD(n, ks)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			c.WriteString("---\n")
		}
		c.WriteString(text)
		for _, kc := range ks.cases {
			expect := Refused
			if kc.Allowed {
				expect = Allowed
			}
			fmt.Fprintf(&s, "- name: '%s'\n  oldObject: %s\n  object: %s\n  expect: %s\n",
				kepCaseName(kc.Name), kepObject(n, kc.Old), kepObject(n, kc.New), expect)
		}
	}
	return c.Bytes(), s.Bytes()
}

// TestKEPSuite: examples/kep-immutable is the suite of the KEP's examples
// as the fixtures hold them (-update-kep writes it).
func TestKEPSuite(t *testing.T) {
	crds, suite := kepFiles(t)
	files := map[string][]byte{"crds.yaml": crds, "kep.test.yaml": suite}
	for name, want := range files {
		path := filepath.Join(kepDir, name)
		if *updateKEP {
			if err := os.MkdirAll(kepDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what the KEP's examples give (go test -run TestKEPSuite -update-kep): %v", path, err)
		}
	}
}
