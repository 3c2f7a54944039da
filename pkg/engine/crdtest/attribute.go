package crdtest

import (
	"strings"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
)

// ruleIndex finds the rule behind a refusal of the server.
type ruleIndex struct {
	rules []Rule
	// crds are the CRDs by the group and kind they define.
	crds map[runtimeschema.GroupKind]crdRules
	// lowered are the rules lower.CRD wrote, by CRD, version and message:
	// the marker each stands for.
	lowered map[string]lower.Rule
	// placed are the rules lower.CRD writes, by CRD and version, in either
	// mode: where the server's refusal by a marker is (placeErrors).
	placed map[string][]lower.Rule
}

type crdRules struct {
	name    string
	schemas map[string]map[string]interface{} // openAPIV3Schema by version
}

func (x *ruleIndex) add(d *document.Document, costs Costs) {
	if x.crds == nil {
		x.crds = map[runtimeschema.GroupKind]crdRules{}
	}
	spec, _ := d.Object["spec"].(map[string]interface{})
	group, _ := spec["group"].(string)
	names, _ := spec["names"].(map[string]interface{})
	kind, _ := names["kind"].(string)
	cr := crdRules{name: document.Ref(d.Object).Name, schemas: map[string]map[string]interface{}{}}
	versions, _ := spec["versions"].([]interface{})
	for _, v := range versions {
		v, _ := v.(map[string]interface{})
		name, _ := v["name"].(string)
		sch, _ := v["schema"].(map[string]interface{})
		cr.schemas[name], _ = sch["openAPIV3Schema"].(map[string]interface{})
	}
	x.crds[runtimeschema.GroupKind{Group: group, Kind: kind}] = cr
	x.rules = append(x.rules, withCosts(rulesOf(d), d, costs)...)
}

func (x *ruleIndex) addLowered(res *lower.Result) {
	if x.lowered == nil {
		x.lowered = map[string]lower.Rule{}
	}
	meta, _ := res.Object["metadata"].(map[string]interface{})
	name, _ := meta["name"].(string)
	for _, r := range res.Rules {
		x.lowered[name+"\x00"+r.Version+"\x00"+r.Message] = r
	}
}

// attribute finds the rule or marker behind e, an error on an object of
// ref's kind, names it in e.Rule, and returns its index in rules (-1: none).
func (x *ruleIndex) attribute(ref document.ObjectRef, e *Error) int {
	gv, err := runtimeschema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return -1
	}
	cr, ok := x.crds[runtimeschema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return -1
	}
	field := generic(cr.schemas[gv.Version], e.Field)
	if lr, ok := x.lowered[cr.name+"\x00"+gv.Version+"\x00"+e.Message]; ok {
		// A marker's rule: the marker refuses, in the emulation's words.
		e.Rule, e.Type = lr.Marker, markerErrorType
		field = strings.TrimPrefix(lr.Field, ".")
	}
	var byExpression []int
	for i, r := range x.rules {
		if r.CRD != cr.name || r.Version != gv.Version {
			continue
		}
		if r.marker {
			if e.Rule == r.Rule && r.Field == field {
				return i
			}
			continue
		}
		if r.Field != field && withFieldPath(r.Field, r.FieldPath) != field {
			continue
		}
		msg := r.Message
		if msg == "" {
			msg = "failed rule: " + r.Rule
		}
		if e.Message == msg || strings.HasSuffix(e.Message, "failed rule: "+r.Rule) {
			e.Rule = r.Rule
			return i
		}
		if r.MessageExpression != "" {
			byExpression = append(byExpression, i)
		}
	}
	if len(byExpression) == 1 {
		e.Rule = x.rules[byExpression[0]].Rule
		return byExpression[0]
	}
	return -1
}
