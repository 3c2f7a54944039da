package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// SARIF 2.1.0 (OASIS), the format GitHub code scanning and other scanners
// read: one run, its tool with every rule, a result per finding.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool sarifTool `json:"tool"`
	// Properties say which Kubernetes minor answered, and how
	// (kubeversion.Stamp, under kubeversion.Key).
	Properties map[string]kubeversion.Stamp `json:"properties"`
	// Results are written from the spool, in place of this member.
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	ShortDescription     sarifText         `json:"shortDescription"`
	FullDescription      sarifText         `json:"fullDescription"`
	Help                 sarifText         `json:"help"`
	HelpURI              string            `json:"helpUri"`
	DefaultConfiguration sarifRuleDefaults `json:"defaultConfiguration"`
}

type sarifRuleDefaults struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties sarifProperties `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifProperties are the finding's own fields, for programs.
type sarifProperties struct {
	Object   interface{} `json:"object"`
	Reason   string      `json:"reason,omitempty"`
	Path     string      `json:"path,omitempty"`
	Version  string      `json:"version,omitempty"`
	Severity string      `json:"severity"`
	Fails    bool        `json:"fails"`
}

// sarifWriter writes the results into the spool as array elements; Finish
// writes the log around them.
type sarifWriter struct {
	tool  Tool
	spool Spool
	n     int
}

func newSARIF(tool Tool, spool Spool) *sarifWriter { return &sarifWriter{tool: tool, spool: spool} }

// resultIndent is the indent of the elements of runs[0].results.
const resultIndent = "        "

func (s *sarifWriter) Add(obj Object) error {
	for _, it := range obj.Findings {
		b, err := marshalIndent(s.result(obj, it), resultIndent)
		if err != nil {
			return err
		}
		sep := ",\n" + resultIndent
		if s.n == 0 {
			sep = "\n" + resultIndent
		}
		s.n++
		if _, err := fmt.Fprintf(s.spool, "%s%s", sep, b); err != nil {
			return err
		}
	}
	return nil
}

// result is a finding of obj: its rule, its level, the object's words and
// where it is (a file and a line; an object of the cluster only by name).
func (s *sarifWriter) result(obj Object, it Item) sarifResult {
	id := RuleID(it)
	r := sarifResult{
		RuleID: id, RuleIndex: ruleIndex(id), Level: Level(it),
		Message: sarifText{Text: name(obj) + ": " + it.Message},
		Properties: sarifProperties{Object: obj.Ref, Reason: it.Reason, Path: it.Path, Version: it.Version,
			Severity: string(it.Severity), Fails: it.Fails},
	}
	logical := sarifLogical{Name: obj.Ref.Name, FullyQualifiedName: name(obj), Kind: "object"}
	if obj.Name != "" {
		logical.Name, logical.Kind = obj.Name, "testCase"
	}
	loc := sarifLocation{LogicalLocations: []sarifLogical{logical}}
	if at := where(obj, it); at.File != "" {
		loc.PhysicalLocation = &sarifPhysical{
			ArtifactLocation: sarifArtifact{URI: URI(at.File)},
			Region:           sarifRegion{StartLine: at.Line, StartColumn: at.Column},
		}
	}
	r.Locations = []sarifLocation{loc}
	return r
}

// Finish writes the log: everything but the results, whose array is cut
// open to take the spool's. The run's properties say which minor answers
// now, as the run is over.
func (s *sarifWriter) Finish(out io.Writer) error {
	log := sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{{
		Tool:       sarifTool{Driver: s.driver()},
		Properties: map[string]kubeversion.Stamp{kubeversion.Key: kubeversion.Current().Stamp()},
		Results:    []sarifResult{},
	}}}
	b, err := marshalIndent(log, "")
	if err != nil {
		return err
	}
	// The results are the run's last member: "results": [] closes it.
	const empty = `"results": []`
	i := bytes.LastIndex(b, []byte(empty))
	if i < 0 {
		return fmt.Errorf("sarif: no results member in %s", b)
	}
	head, tail := b[:i+len(empty)-1], b[i+len(empty)-1:]
	if _, err := out.Write(head); err != nil {
		return err
	}
	if err := copySpool(out, s.spool); err != nil {
		return err
	}
	if s.n > 0 {
		tail = append([]byte("\n      "), tail...)
	}
	_, err = out.Write(append(tail, '\n'))
	return err
}

func (s *sarifWriter) driver() sarifDriver {
	d := sarifDriver{Name: s.tool.Name, Version: s.tool.Version, InformationURI: s.tool.InformationURI}
	for _, r := range Rules {
		level := "warning"
		switch {
		case r.ID == NoteRule:
			level = "note"
		case r.ID == TestCaseRule:
			level = "error" // a failing case fails the run
		case slices.Contains(finding.DefaultFailOn, finding.Check(r.ID)):
			level = "error"
		}
		d.Rules = append(d.Rules, sarifRule{
			ID: r.ID, Name: r.ID, ShortDescription: sarifText{Text: r.Short}, FullDescription: sarifText{Text: r.Short + ". " + r.Help},
			Help: sarifText{Text: r.Help}, HelpURI: r.HelpURI(s.tool), DefaultConfiguration: sarifRuleDefaults{Level: level},
		})
	}
	return d
}

// marshalIndent is v as indented JSON whose lines after the first start
// with prefix, with <, > and & as they are.
func marshalIndent(v interface{}, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
