// Package crdtest is "kubectl crd test": suites of cases that say what the
// API server does with an object under a CRD (allowed or refused, and why;
// what it prunes and defaults), the runner that decides each case from the
// catalog's one verdict on the object, the record of what a case observed
// into a suite, and the coverage of the CRDs' rules. No CLI code: the
// plugin reads the flags and renders what this package returns.
package crdtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// Suite is one document of a test file: the CRDs, and the cases run
// against them.
type Suite struct {
	// Source is the suite's file and first line.
	Source document.Source
	// CRDs are the files the CRDs were read from, relative to the suite.
	CRDs []*document.Document
	// Cases in the order written.
	Cases []*Case

	doc *document.Document
}

// Case is one object sent to the server: a create, or an update of
// OldObject, or an existing object under OldCRDs upgraded to the suite's CRDs.
type Case struct {
	Name   string
	Source document.Source
	// Object is the object sent; OldObject the stored one an update replaces.
	Object, OldObject *document.Document
	// OldCRDs are the CRDs before an upgrade: Object is stored under them.
	OldCRDs []*document.Document
	// Subresource is the subresource an update writes: "" the object
	// itself, "status" its /status (the server's status strategy: only
	// Object's status is taken, the rest is OldObject's). SubresourceLine
	// is where it is written.
	Subresource     string
	SubresourceLine int
	// Expect is nil when the case says nothing yet (--record fills it).
	Expect *Expect
	// ExpectByVersion is what the case expects of the server of a
	// Kubernetes minor where it differs from Expect (nil when it never
	// does): a library that minor does not compile, a format it does not
	// check. ExpectFor chooses.
	ExpectByVersion map[kubeversion.Minor]*Expect

	// index is the case's position under "cases", for --record.
	index int
}

// ExpectFor is what the case expects of the server of minor m: its
// ExpectByVersion entry for m, else Expect.
func (c *Case) ExpectFor(m kubeversion.Minor) *Expect {
	if e, ok := c.ExpectByVersion[m]; ok {
		return e
	}
	return c.Expect
}

// Result is what a case expects of the server.
type Result string

const (
	Allowed Result = "allowed"
	Refused Result = "refused"
)

// Expect is what a case expects; a nil list or map is not checked.
type Expect struct {
	Result Result
	// Errors are the server's reasons to refuse (in any order): all of
	// them, one to one, or with ErrorsSubset some of them.
	Errors []ErrorExpect
	// ErrorsSubset: each of Errors is one of the server's errors, which
	// may give others. Written exactErrors: false; the default when an
	// expected error says messageContains, as the suites of envtest and
	// Gomega expect a part of the server's text (exactErrors: true then
	// asks for all).
	ErrorsSubset bool
	// Pruned are the paths the server drops (unknown fields, nulls, ...).
	Pruned []string
	// Defaulted are the paths the server sets from defaults, with their values.
	Defaulted map[string]interface{}
}

// MarshalJSON is the expectation as -o json echoes it: what is not
// checked is left out; an empty list (none is expected) is kept.
func (e *Expect) MarshalJSON() ([]byte, error) {
	out := struct {
		Result      Result                  `json:"result"`
		Errors      *[]ErrorExpect          `json:"errors,omitempty"`
		ExactErrors *bool                   `json:"exactErrors,omitempty"`
		Pruned      *[]string               `json:"pruned,omitempty"`
		Defaulted   *map[string]interface{} `json:"defaulted,omitempty"`
	}{Result: e.Result}
	if e.Errors != nil {
		exact := !e.ErrorsSubset
		out.Errors, out.ExactErrors = &e.Errors, &exact
	}
	if e.Pruned != nil {
		out.Pruned = &e.Pruned
	}
	if e.Defaulted != nil {
		out.Defaulted = &e.Defaulted
	}
	return json.Marshal(out)
}

// ErrorExpect is one reason to refuse: each field set must match.
type ErrorExpect struct {
	// Field is the path in the server's format: spec.ports[0].port.
	Field string `json:"field,omitempty"`
	// Type is the server's error type: "Invalid value", "Required value", "Forbidden".
	Type string `json:"type,omitempty"`
	// Message is a part of the server's message (Error.Message: the detail).
	Message string `json:"message,omitempty"`
	// MessageContains is a part of the server's full text of the error
	// (Error.Text: field, type, value and detail).
	MessageContains string `json:"messageContains,omitempty"`
	// Rule is the x-kubernetes-validations rule, or the mutability marker
	// ("x-kubernetes-mutability: Immutable"), that refuses.
	Rule string `json:"rule,omitempty"`
	// Line is where the expectation is written.
	Line int `json:"line"`
}

// ReadFile reads the suites of a test file: every document is one. A
// suite is no request, but holds them: it is bounded as every document of
// the inputs is (64 MiB, document.MaxDocumentBytes), and the object of
// each case as the request body it is (3 MiB, parseCase).
func ReadFile(name string) ([]*Suite, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, &document.InputError{Source: document.Source{File: name}, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	docs, err := document.ReadHolders(f, name)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, &document.InputError{Source: document.Source{File: name}, Msg: "no test suite: expected a mapping with crds and cases"}
	}
	var out []*Suite
	for _, d := range docs {
		s, err := parseSuite(d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// node is a value of a test file, with where it is.
type node struct {
	d    *document.Document
	path fieldpath.Path
	v    interface{}
}

func (n node) line() int {
	for p := n.path; ; p = p[:len(p)-1] {
		if l := n.d.Line(p); l > 0 || len(p) == 0 {
			if l == 0 {
				l = n.d.Source.Line
			}
			return l
		}
	}
}

func (n node) errorf(format string, args ...interface{}) error {
	msg := fmt.Sprintf(format, args...)
	if len(n.path) > 0 {
		msg = n.path.String() + ": " + msg
	}
	return &document.InputError{Source: document.Source{File: n.d.Source.File, Line: n.line()}, Msg: msg}
}

func (n node) key(k string) node {
	m, _ := n.v.(map[string]interface{})
	return node{n.d, n.path.Child(fieldpath.Key(k)), m[k]}
}

func (n node) index(i int) node {
	l, _ := n.v.([]interface{})
	return node{n.d, n.path.Child(fieldpath.Index(i)), l[i]}
}

// fields checks n is a mapping of the keys allowed, required ones first.
func (n node) fields(required []string, optional ...string) (map[string]interface{}, error) {
	m, ok := n.v.(map[string]interface{})
	if !ok {
		return nil, n.errorf("expected a mapping with %s", strings.Join(append(required, optional...), ", "))
	}
	allowed := map[string]bool{}
	for _, k := range append(required, optional...) {
		allowed[k] = true
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !allowed[k] {
			return nil, n.key(k).errorf("unknown field: expected one of %s", strings.Join(append(required, optional...), ", "))
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, n.errorf("%s is required", k)
		}
	}
	return m, nil
}

func (n node) str() (string, error) {
	s, ok := n.v.(string)
	if !ok {
		return "", n.errorf("expected a string")
	}
	return s, nil
}

func (n node) list() ([]interface{}, error) {
	if n.v == nil {
		return nil, nil
	}
	l, ok := n.v.([]interface{})
	if !ok {
		return nil, n.errorf("expected a list")
	}
	return l, nil
}

// relative is a path of the test file, relative to the file's directory.
func (n node) relative(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(n.d.Source.File), name)
}

func parseSuite(d *document.Document) (*Suite, error) {
	root := node{d: d, v: d.Object}
	if _, err := root.fields([]string{"crds", "cases"}); err != nil {
		return nil, err
	}
	s := &Suite{Source: d.Source, doc: d}
	crds, err := root.key("crds").files()
	if err != nil {
		return nil, err
	}
	if len(crds) == 0 {
		return nil, root.key("crds").errorf("expected a CRD file or directory")
	}
	s.CRDs = crds
	cases, err := root.key("cases").list()
	if err != nil {
		return nil, err
	}
	names := map[string]int{}
	for i := range cases {
		c, err := parseCase(root.key("cases").index(i))
		if err != nil {
			return nil, err
		}
		if line, ok := names[c.Name]; ok {
			return nil, root.key("cases").index(i).key("name").errorf("case %q already named at line %d", c.Name, line)
		}
		names[c.Name] = c.Source.Line
		c.index = i
		s.Cases = append(s.Cases, c)
	}
	return s, nil
}

// files reads the documents of a file, a directory, or a list of them.
func (n node) files() ([]*document.Document, error) {
	var names []node
	switch v := n.v.(type) {
	case string:
		names = []node{n}
	case []interface{}:
		for i := range v {
			names = append(names, n.index(i))
		}
	default:
		return nil, n.errorf("expected a file or directory, or a list of them, relative to the test file")
	}
	var out []*document.Document
	for _, nn := range names {
		name, err := nn.str()
		if err != nil {
			return nil, err
		}
		files, err := document.Files(nn.relative(name), false)
		if err != nil {
			return nil, nn.errorf("%v", err)
		}
		for _, f := range files {
			docs, err := readDocs(f)
			if err != nil {
				return nil, err
			}
			out = append(out, docs...)
		}
	}
	return out, nil
}

func readDocs(name string) ([]*document.Document, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, &document.InputError{Source: document.Source{File: name}, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	docs, err := document.Read(f, name)
	if err != nil {
		return nil, err
	}
	var out []*document.Document
	for _, d := range docs {
		out = append(out, d.Objects()...)
	}
	return out, nil
}
