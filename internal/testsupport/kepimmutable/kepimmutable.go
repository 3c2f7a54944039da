// Package kepimmutable holds the examples of KEP "Immutable fields" as test
// cases, for the engine's tests and the CLI's.
package kepimmutable

import (
	_ "embed"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed examples.yaml
var examplesYAML []byte

type example struct {
	Name      string   `json:"name"`
	Schema    string   `json:"schema"`
	Modes     []string `json:"modes"`
	ListTypes []string `json:"listTypes"`
	MapTypes  []string `json:"mapTypes"`
	Cases     []struct {
		Old     string   `json:"old"`
		New     string   `json:"new"`
		Allowed []string `json:"allowed"`
	} `json:"cases"`
}

// Case is one transition of one example in one mode, list type and map type.
type Case struct {
	Name string
	// Schema is the openAPIV3Schema as YAML (type: object at the root).
	Schema   string
	Old, New string // JSON objects
	Allowed  bool
}

// Cases expands every example into its cases.
func Cases() ([]Case, error) {
	var examples []example
	if err := yaml.UnmarshalStrict(examplesYAML, &examples); err != nil {
		return nil, fmt.Errorf("examples.yaml: %v", err)
	}
	var out []Case
	for _, ex := range examples {
		listTypes, mapTypes := ex.ListTypes, ex.MapTypes
		if len(listTypes) == 0 {
			listTypes = []string{""}
		}
		if len(mapTypes) == 0 {
			mapTypes = []string{""}
		}
		for _, mode := range ex.Modes {
			for _, lt := range listTypes {
				for _, mt := range mapTypes {
					s := strings.ReplaceAll(ex.Schema, "MODE", mode)
					s = strings.ReplaceAll(s, "LISTTYPE", typeLine("x-kubernetes-list-type", lt))
					s = strings.ReplaceAll(s, "MAPTYPE", typeLine("x-kubernetes-map-type", mt))
					for _, c := range ex.Cases {
						allowed := false
						for _, m := range c.Allowed {
							allowed = allowed || m == mode
						}
						out = append(out, Case{
							Name:   fmt.Sprintf("Example %s, %s, list type %q, map type %q: %s -> %s", ex.Name, mode, lt, mt, c.Old, c.New),
							Schema: "type: object\n" + s,
							Old:    c.Old, New: c.New, Allowed: allowed,
						})
					}
				}
			}
		}
	}
	return out, nil
}

func typeLine(key, value string) string {
	if value == "" {
		return ""
	}
	return key + ": " + value
}

//go:embed beyond.yaml
var beyondYAML []byte

// Updates are the updates between objects of one schema beyond the KEP's
// examples: every pair of distinct objects, in every mode.
type Updates struct {
	Name string
	// Schema is the openAPIV3Schema as YAML, MODE standing for the mode.
	Schema  string
	Modes   []string
	Objects []string // JSON objects
}

// Beyond reads the updates beyond the KEP's examples.
func Beyond() ([]Updates, error) {
	var out []Updates
	if err := yaml.UnmarshalStrict(beyondYAML, &out); err != nil {
		return nil, fmt.Errorf("beyond.yaml: %v", err)
	}
	for i := range out {
		if len(out[i].Modes) == 0 {
			out[i].Modes = []string{""}
		}
	}
	return out, nil
}

// SchemaFor is the schema in one mode.
func (u Updates) SchemaFor(mode string) string { return strings.ReplaceAll(u.Schema, "MODE", mode) }

// Pairs are the updates: every ordered pair of distinct objects.
func (u Updates) Pairs() [][2]string {
	var out [][2]string
	for _, old := range u.Objects {
		for _, new := range u.Objects {
			if old != new {
				out = append(out, [2]string{old, new})
			}
		}
	}
	return out
}
