package crdtest

import (
	"bytes"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// Record writes into a test file, data as read, the outcome each case
// without an expectation observed, as its expect (comments and layout of
// the rest kept); a case with one is never changed. results are the
// file's suites' results, in order. It returns the new text and how many
// cases it recorded (0: data unchanged).
func Record(data []byte, results []*SuiteResult) ([]byte, int, error) {
	var out bytes.Buffer
	rest, n := data, 0
	for _, s := range results {
		d := s.Suite.doc
		raw := d.Raw()
		at := bytes.Index(rest, raw)
		if at < 0 {
			return nil, 0, &document.InputError{Source: s.Suite.Source, Msg: "--record: the suite's text is not found in its file"}
		}
		out.Write(rest[:at])
		rest = rest[at+len(raw):]
		edits, want := recordEdits(s, d.Object)
		if len(edits) == 0 {
			out.Write(raw)
			continue
		}
		if _, err := d.Apply(edits, want); err != nil {
			return nil, 0, &document.InputError{Source: s.Suite.Source, Msg: "--record: " + err.Error(), Err: err}
		}
		text, err := d.Encode()
		if err != nil {
			return nil, 0, &document.InputError{Source: s.Suite.Source, Msg: "--record: " + err.Error(), Err: err}
		}
		out.Write(text)
		n += len(edits)
	}
	out.Write(rest)
	return out.Bytes(), n, nil
}

// recordEdits are the edits that set the expect of the cases without one,
// and the suite's object once they are made.
func recordEdits(s *SuiteResult, obj map[string]interface{}) ([]document.Edit, map[string]interface{}) {
	want := deepCopy(obj).(map[string]interface{})
	cases, _ := want["cases"].([]interface{})
	var edits []document.Edit
	for _, c := range s.Cases {
		// A case expecting something of the minor that answered keeps it:
		// its expect, or its entry in expectByVersion.
		if c.Expect != nil || c.Observed == nil {
			continue
		}
		v := expectValue(c.Observed)
		p := fieldpath.Path{fieldpath.Key("cases"), fieldpath.Index(c.Case.index), fieldpath.Key("expect")}
		edits = append(edits, document.Edit{Path: p, Value: v})
		if m, ok := cases[c.Case.index].(map[string]interface{}); ok {
			m["expect"] = v
		}
	}
	return edits, want
}

// expectValue is the expect of an observed outcome: a word when it is
// only allowed, else the result with the errors, pruned and defaulted fields.
func expectValue(obs *Observed) interface{} {
	if obs.Result == Allowed && len(obs.Pruned) == 0 && len(obs.Defaulted) == 0 {
		return string(Allowed)
	}
	e := map[string]interface{}{"result": string(obs.Result)}
	if len(obs.Errors) > 0 {
		var errs []interface{}
		for _, oe := range obs.Errors {
			m := map[string]interface{}{"field": oe.Field, "message": oe.Message}
			if oe.Type != "" {
				m["type"] = oe.Type
			}
			if oe.Rule != "" {
				m["rule"] = oe.Rule
			}
			errs = append(errs, m)
		}
		e["errors"] = errs
	}
	if len(obs.Pruned) > 0 {
		var p []interface{}
		for _, s := range obs.Pruned {
			p = append(p, s)
		}
		e["pruned"] = p
	}
	if len(obs.Defaulted) > 0 {
		e["defaulted"] = deepCopy(obs.Defaulted)
	}
	return e
}

func deepCopy(v interface{}) interface{} {
	switch x := v.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(x))
		for k, v := range x {
			out[k] = deepCopy(v)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(x))
		for i, v := range x {
			out[i] = deepCopy(v)
		}
		return out
	}
	return v
}
