package holes

import (
	"fmt"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/lower"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// fix finds the rule that closes the holes: the CRD with
// x-kubernetes-mutability: Immutable on the field, lowered (what
// lower-mutability writes), and checks which steps of each hole the
// server refuses with it.
func (a *search) fix(holes []Hole) {
	f := a.closing(true)
	if f.Err != "" {
		// Without the key markers (their rules may be over the cost
		// budget), the field's own rule may still close some holes.
		if g := a.closing(false); g.Err == "" {
			g.Err, f = f.Err, g
		}
	}
	var crd *schema.CRD
	if f.CRD != nil {
		var err error
		if crd, _, err = schema.FromObject(f.CRD, a.srv); err != nil {
			f.Err, f.CRD = err.Error(), nil
		}
	}
	for i := range holes {
		h := &holes[i]
		fx := *f
		h.Fix = &fx
		if crd == nil {
			continue
		}
		refused := false
		for j := range h.Steps {
			h.Steps[j].FixRefuses = !a.allows(crd, nil, h.Steps[j].Old, h.Steps[j].New)
			refused = refused || h.Steps[j].FixRefuses
		}
		switch {
		case !refused && f.Err != "":
			h.Fix.Err = f.Err
		case !refused:
			h.Fix.Err = "the rules do not refuse any step of this hole"
		default:
			h.Fix.Err = ""
		}
	}
}

// closing is the lowered rules of the field marked Immutable, and of the
// list-type maps and maps on its path marked AddOnly.
func (a *search) closing(keys bool) *Fix {
	marked := copyObj(a.raw)
	f := &Fix{}
	node := rawNode(marked, a.c.version, a.c.field)
	if node == nil {
		return &Fix{Err: "no schema of the field in the CRD as written"}
	}
	node[update.MutabilityExtension] = string(update.Immutable)
	f.Markers = append(f.Markers, fmt.Sprintf("%s: %s on %s", update.MutabilityExtension, update.Immutable, a.c.field))
	for i, x := range a.c.field {
		if !keys || x.kind == prop || a.removal(a.c.field[:i+1], false) == "" {
			continue
		}
		coll := a.c.field[:i]
		if n := rawNode(marked, a.c.version, coll); n != nil {
			n[update.KeyMutabilityExtension] = string(update.AddOnly)
			f.Markers = append(f.Markers, fmt.Sprintf("%s: %s on %s", update.KeyMutabilityExtension, update.AddOnly, coll))
		}
	}
	base, err := lower.CRD(copyObj(a.raw), a.srv)
	if err != nil {
		return &Fix{Err: fmt.Sprintf("lowering the CRD: %v", err)}
	}
	res, err := lower.CRD(marked, a.srv)
	if err != nil {
		return &Fix{Err: fmt.Sprintf("lowering %s: %v", strings.Join(f.Markers, ", "), err)}
	}
	had := map[string]bool{}
	for _, r := range base.Rules {
		had[r.Schema.String()+"\x00"+r.Rule] = true
	}
	for _, r := range res.Rules {
		if r.Version == a.c.version && !had[r.Schema.String()+"\x00"+r.Rule] {
			f.Rules = append(f.Rules, Rule{At: atOf(r), Rule: r.Rule, Message: r.Message, FieldPath: r.FieldPath})
		}
	}
	if len(f.Rules) == 0 {
		return &Fix{Err: "lowering wrote no rule for the field"}
	}
	f.CRD = res.Object
	return f
}

// atOf names the field whose schema holds a lowered rule: the rule's
// schema path read as a path of the objects.
func atOf(r lower.Rule) string {
	var p path
	segs := r.Schema
	if len(segs) >= 5 { // spec.versions[i].schema.openAPIV3Schema
		segs = segs[5:]
	}
	for i := 0; i < len(segs); i++ {
		switch segs[i].Key {
		case "properties":
			if i+1 < len(segs) {
				p = p.child(seg{name: segs[i+1].Key})
				i++
			}
		case "items":
			p = p.child(seg{kind: item})
		case "additionalProperties":
			p = p.child(seg{kind: value})
		}
	}
	return p.String()
}

// rawNode is the schema node as written of the field in a version.
func rawNode(crd map[string]interface{}, version string, p path) map[string]interface{} {
	spec, _ := crd["spec"].(map[string]interface{})
	versions, _ := spec["versions"].([]interface{})
	var n map[string]interface{}
	for _, v := range versions {
		v, _ := v.(map[string]interface{})
		if v["name"] == version {
			sch, _ := v["schema"].(map[string]interface{})
			n, _ = sch["openAPIV3Schema"].(map[string]interface{})
		}
	}
	for _, x := range p {
		if n == nil {
			return nil
		}
		switch x.kind {
		case prop:
			props, _ := n["properties"].(map[string]interface{})
			n, _ = props[x.name].(map[string]interface{})
		case item:
			n, _ = n["items"].(map[string]interface{})
		case value:
			n, _ = n["additionalProperties"].(map[string]interface{})
		}
	}
	return n
}
