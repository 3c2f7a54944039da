package prune

import (
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// storeCRD makes doc, a CustomResourceDefinition, the CRD the server stores
// (schema.StoredCRD, with p, the server's preparation of a create), and
// lists in res every change with the step of the server that made it:
// defaults of the apiextensions.k8s.io/v1 types (Defaulted), status that
// only the server writes (StatusSubresource), metadata (MetadataNormalized),
// and what its encoding drops or writes otherwise (Normalized). A CRD in
// apiextensions.k8s.io/v1beta1, which no server creates, or without p,
// passes through.
func storeCRD(doc *document.Document, res *Result, p schema.CRDPreparer) error {
	if p == nil {
		return nil
	}
	stored, ok, err := schema.StoredCRD(doc.Object, p)
	if err != nil {
		return &document.InputError{Source: doc.Source, Msg: "the server would refuse this CustomResourceDefinition: " + err.Error()}
	}
	if !ok {
		return nil
	}
	if spec, ok := stored["spec"]; ok {
		keepExtensions(doc.Object["spec"], spec)
	}
	diff(nil, doc.Object, stored, func(path fieldpath.Path, a Action, old, new interface{}) {
		ch := Change{Path: path.String(), Segments: path, Action: a, Value: old, NewValue: new, Reason: crdReason(path, a, old)}
		if a == Added {
			ch.Value = nil
		}
		ch.Line = LineOf(doc, ch)
		res.Changes = append(res.Changes, ch)
	})
	if len(res.Changes) == 0 {
		return nil
	}
	note, err := doc.Apply(Edits(doc.Object, stored), stored)
	res.Reformatted = note
	return err
}

// crdReason is why the server changes the field at path of a CRD.
func crdReason(path fieldpath.Path, a Action, old interface{}) Reason {
	top := ""
	if len(path) > 0 && !path[0].IsIndex {
		top = path[0].Key
	}
	switch {
	case top == "status":
		return StatusSubresource
	case top == "metadata":
		return MetadataNormalized
	case a == Added || (a == Replaced && old == nil):
		return Defaulted
	}
	return Normalized
}

// keepExtensions copies into stored the vendor extensions of sent
// ("x-kubernetes-" keys) that the CRD types lack, such as kubectl crd's
// mutability markers: the server refuses some of them under kubectl's
// default --validate=strict and drops them otherwise, and they belong to
// the files check-update and lower-mutability read (docs/mutability.md),
// not to what apply sends.
func keepExtensions(sent, stored interface{}) {
	switch s := sent.(type) {
	case map[string]interface{}:
		t, ok := stored.(map[string]interface{})
		if !ok {
			return
		}
		for k, v := range s {
			if tv, ok := t[k]; ok {
				keepExtensions(v, tv)
			} else if strings.HasPrefix(k, "x-kubernetes-") {
				t[k] = v
			}
		}
	case []interface{}:
		t, ok := stored.([]interface{})
		if !ok || len(t) != len(s) {
			return
		}
		for i := range s {
			keepExtensions(s[i], t[i])
		}
	}
}
