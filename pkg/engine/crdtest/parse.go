package crdtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

var caseFields = []string{"oldObject", "oldCRD", "subresource", "expect", "expectByVersion"}

func parseCase(n node) (*Case, error) {
	m, err := n.fields([]string{"name", "object"}, caseFields...)
	if err != nil {
		return nil, err
	}
	c := &Case{Source: document.Source{File: n.d.Source.File, Line: n.line()}}
	if c.Name, err = n.key("name").str(); err != nil {
		return nil, err
	}
	if c.Object, err = n.key("object").object(); err != nil {
		return nil, ofCase(c.Name, "object", err)
	}
	if _, ok := m["oldObject"]; ok {
		if c.OldObject, err = n.key("oldObject").object(); err != nil {
			return nil, ofCase(c.Name, "oldObject", err)
		}
	}
	if _, ok := m["oldCRD"]; ok {
		if c.OldObject != nil {
			return nil, n.key("oldCRD").errorf("a case is an update (oldObject) or an upgrade (oldCRD), not both")
		}
		if c.OldCRDs, err = n.key("oldCRD").files(); err != nil {
			return nil, err
		}
	}
	if _, ok := m["subresource"]; ok {
		if c.Subresource, err = parseSubresource(n.key("subresource"), c); err != nil {
			return nil, err
		}
	}
	if v, ok := m["expect"]; ok && v != nil {
		if c.Expect, err = parseExpect(n.key("expect")); err != nil {
			return nil, err
		}
	}
	if _, ok := m["expectByVersion"]; ok {
		if c.ExpectByVersion, err = parseExpectByVersion(n.key("expectByVersion")); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseSubresource reads the subresource an update case writes: status
// (a PUT or PATCH of /status), only of an update (the server has no create
// of /status). Scale is not supported: its request is an autoscaling/v1
// Scale, not the object.
func parseSubresource(n node, c *Case) (string, error) {
	s, err := n.str()
	if err != nil {
		return "", err
	}
	switch s {
	case "status":
	case "scale":
		return "", n.errorf("scale is not supported yet: a write of /scale sends an autoscaling/v1 Scale, not the object; only status is")
	default:
		return "", n.errorf("expected status, not %q", s)
	}
	if c.OldObject == nil {
		return "", n.errorf("a write of /status updates an object: expected an oldObject (the server has no create of /status)")
	}
	c.SubresourceLine = n.line()
	return s, nil
}

// parseExpectByVersion reads a mapping of Kubernetes minors ("1.31", as
// --kube-version names them) to expectations; a minor not answered is an
// error at its line.
func parseExpectByVersion(n node) (map[kubeversion.Minor]*Expect, error) {
	m, ok := n.v.(map[string]interface{})
	if !ok {
		return nil, n.errorf("expected a mapping of Kubernetes versions (\"1.31\") to what the case expects of each")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[kubeversion.Minor]*Expect{}
	for _, k := range keys {
		minor, err := kubeversion.Parse(k)
		if err != nil {
			return nil, n.key(k).errorf("%v", err)
		}
		if _, dup := out[minor]; dup {
			return nil, n.key(k).errorf("Kubernetes %s already has an expectation", minor)
		}
		if m[k] == nil {
			return nil, n.key(k).errorf("expected allowed, refused, or a mapping with result, errors, pruned, defaulted")
		}
		if out[minor], err = parseExpect(n.key(k)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ofCase names the case and its field (object, oldObject) in err when it
// is an object over a bound (document.ErrBeyondLimits): each object of a
// case is a request body, bounded as one.
func ofCase(name, field string, err error) error {
	var ie *document.InputError
	if errors.As(err, &ie) && errors.Is(err, document.ErrBeyondLimits) {
		return &document.InputError{Source: ie.Source, Err: ie.Err, Msg: fmt.Sprintf("case %q: its %s: %s", name, field, ie.Msg)}
	}
	return err
}

// object is an object written inline, or the one object of a file; either
// is bounded as a request body (document.CheckRequestBody).
func (n node) object() (*document.Document, error) {
	switch v := n.v.(type) {
	case map[string]interface{}:
		if err := document.CheckRequestBody(v, document.Source{File: n.d.Source.File, Line: n.line()}); err != nil {
			return nil, err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		docs, err := document.Read(bytes.NewReader(data), n.d.Source.File)
		if err != nil || len(docs) != 1 {
			return nil, n.errorf("expected an object")
		}
		docs[0].Source = document.Source{File: n.d.Source.File, Line: n.line()}
		return docs[0], nil
	case string:
		docs, err := readDocs(n.relative(v))
		if errors.Is(err, document.ErrBeyondLimits) {
			return nil, err // at its file and line
		}
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		if len(docs) != 1 {
			return nil, n.errorf("expected one object in %s, found %d", v, len(docs))
		}
		return docs[0], nil
	}
	return nil, n.errorf("expected an object (a mapping), or a file with one, relative to the test file")
}

func parseExpect(n node) (*Expect, error) {
	if s, ok := n.v.(string); ok {
		r, err := n.result(s)
		return &Expect{Result: r}, err
	}
	if _, ok := n.v.(map[string]interface{}); !ok {
		return nil, n.errorf("expected allowed, refused, or a mapping with result, errors, pruned, defaulted")
	}
	m, err := n.fields([]string{"result"}, "errors", "exactErrors", "pruned", "defaulted")
	if err != nil {
		return nil, err
	}
	e := &Expect{}
	s, err := n.key("result").str()
	if err != nil {
		return nil, err
	}
	if e.Result, err = n.key("result").result(s); err != nil {
		return nil, err
	}
	if _, ok := m["errors"]; ok {
		if e.Errors, err = parseErrors(n.key("errors")); err != nil {
			return nil, err
		}
		if len(e.Errors) > 0 && e.Result == Allowed {
			return nil, n.key("errors").errorf("an allowed object has no errors: expected result: refused")
		}
	}
	exact, err := exactErrors(n, e.Errors)
	if err != nil {
		return nil, err
	}
	e.ErrorsSubset = !exact
	if _, ok := m["pruned"]; ok {
		if e.Pruned, err = parsePaths(n.key("pruned")); err != nil {
			return nil, err
		}
	}
	if v, ok := m["defaulted"]; ok {
		d, ok := v.(map[string]interface{})
		if !ok && v != nil {
			return nil, n.key("defaulted").errorf("expected a mapping of field paths to the values set")
		}
		e.Defaulted = map[string]interface{}{}
		for k, v := range d {
			e.Defaulted[k] = v
		}
	}
	return e, nil
}

func (n node) result(s string) (Result, error) {
	switch Result(s) {
	case Allowed, Refused:
		return Result(s), nil
	}
	return "", n.errorf("expected allowed or refused, not %q", s)
}

// exactErrors is the expectation's exactErrors: as written, else true
// unless an expected error says messageContains. It says how errors
// match, so it is written with them.
func exactErrors(n node, errs []ErrorExpect) (bool, error) {
	v, ok := n.v.(map[string]interface{})["exactErrors"]
	if !ok {
		for _, e := range errs {
			if e.MessageContains != "" {
				return false, nil
			}
		}
		return true, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, n.key("exactErrors").errorf("expected true (the errors are all the server gives) or false (some of them)")
	}
	if errs == nil {
		return false, n.key("exactErrors").errorf("says how errors match: expected errors beside it")
	}
	return b, nil
}

func parseErrors(n node) ([]ErrorExpect, error) {
	l, err := n.list()
	if err != nil {
		return nil, err
	}
	out := []ErrorExpect{}
	for i := range l {
		en := n.index(i)
		if _, err := en.fields(nil, "field", "type", "message", "messageContains", "rule"); err != nil {
			return nil, err
		}
		e := ErrorExpect{Line: en.line()}
		for k, dst := range map[string]*string{"field": &e.Field, "type": &e.Type, "message": &e.Message, "messageContains": &e.MessageContains, "rule": &e.Rule} {
			if _, ok := en.v.(map[string]interface{})[k]; !ok {
				continue
			}
			if *dst, err = en.key(k).str(); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func parsePaths(n node) ([]string, error) {
	l, err := n.list()
	if err != nil {
		return nil, err
	}
	out := []string{}
	for i := range l {
		s, err := n.index(i).str()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}
