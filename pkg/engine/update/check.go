package update

import (
	"fmt"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Finding is one reason an update is refused.
type Finding struct {
	// Path in the server's format.
	Path string `json:"path"`
	// Rule: the mutability marker ("x-kubernetes-mutability: Immutable"), or
	// "server: <type>" for the API server's own validation (schema, CEL
	// rules in x-kubernetes-validations, metadata).
	Rule    string      `json:"rule"`
	Message string      `json:"message"`
	Old     interface{} `json:"old,omitempty"`
	New     interface{} `json:"new,omitempty"`
	// Line is the source line of the new value (0 when unknown).
	Line int `json:"line,omitempty"`
}

// Outcome is the verdict on one update.
type Outcome struct {
	// Refused lists what the server (Rule "server: ...") or the KEP's
	// mutability rules refuse.
	Refused []Finding
	// Pruned is what the server changes in the new object before comparing:
	// unknown fields dropped, defaults, status ignored.
	Pruned []prune.Change
}

// Check decides whether updating old to new, both custom resources of crd,
// is refused. Both are compared as the server stores them (pruned,
// defaulted); mut are the version's mutability markers (nil: none), and
// validator the server's update validation of new's version.
func Check(old, new map[string]interface{}, crd *schema.CRD, mut *Schema, validator *Validator) (*Outcome, error) {
	newVersion, err := versionOf(new)
	if err != nil {
		return nil, err
	}
	oldVersion, err := versionOf(old)
	if err != nil {
		return nil, err
	}
	s, err := crd.ServedSchema(newVersion)
	if err != nil {
		return nil, err
	}
	newStored, err := prune.Store(new, crd, newVersion, true)
	if err != nil {
		return nil, fmt.Errorf("the server would refuse the new object: %v", err)
	}
	oldStored, err := prune.Store(old, crd, oldVersion, true)
	if err != nil {
		return nil, fmt.Errorf("the old object: %v", err)
	}
	oldObj := oldStored.Object
	if oldVersion != newVersion {
		// The server reads the old object in the request's version.
		if !crd.ConversionNone() {
			return nil, fmt.Errorf("the old object is %s, the new one %s, and the CRD converts with a webhook: give the old object in version %s", oldVersion, newVersion, newVersion)
		}
		oldObj["apiVersion"] = crd.GroupKind().Group + "/" + newVersion
		conv, err := prune.Store(oldObj, crd, newVersion, true)
		if err != nil {
			return nil, fmt.Errorf("the old object in version %s: %v", newVersion, err)
		}
		oldObj = conv.Object
	}

	out := &Outcome{Pruned: prune.Changes(new, newStored, s)}
	for _, v := range CheckMutability(mut, oldObj, newStored.Object) {
		f := Finding{Path: v.Path, Rule: v.Rule, Message: v.Message}
		if v.OldPresent {
			f.Old = v.Old
		}
		if v.NewPresent {
			f.New = v.New
		}
		out.Refused = append(out.Refused, f)
	}
	if validator != nil {
		for _, e := range validator.ValidateUpdate(oldObj, newStored.Object) {
			f := Finding{Path: e.Field, Rule: "server: " + e.Type.String(), Message: e.Detail}
			if e.Type != field.ErrorTypeRequired && e.Type != field.ErrorTypeForbidden && e.Type != field.ErrorTypeTooMany {
				f.New = e.BadValue
			}
			out.Refused = append(out.Refused, f)
		}
	}
	return out, nil
}

func versionOf(obj map[string]interface{}) (string, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "", err
	}
	return gv.Version, nil
}
