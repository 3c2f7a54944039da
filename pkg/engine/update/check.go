package update

import (
	"fmt"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Finding is one reason an update is refused.
type Finding struct {
	// Path in the server's format.
	Path string `json:"path"`
	// Rule: the mutability marker ("x-kubernetes-mutability: Immutable"),
	// the CEL rule ("x-kubernetes-validations: self == oldSelf"), or
	// "server: <type>" for the rest of the API server's own validation
	// (schema, metadata, list types).
	Rule string `json:"rule"`
	// Type is the server's error type ("Invalid value", "Forbidden") of a
	// refusal of its validation: for a CEL rule, its reason's (Invalid
	// value without one); "" for a mutability marker's, which the server
	// does not enforce.
	Type    string `json:"type,omitempty"`
	Message string `json:"message"`
	// Text is a refusal of the server's validation as the server returns
	// it (field.Error's Error: field, type, value, message); "" for a
	// marker's. Not in check-update's JSON contract: kubectl crd test
	// shows it.
	Text string      `json:"-"`
	Old  interface{} `json:"old,omitempty"`
	New  interface{} `json:"new,omitempty"`
	// Line is the source line of the new value (0 when unknown).
	Line int `json:"line,omitempty"`
}

// UpdateValidator is the API server's own update validation of the custom
// resources of one CRD version: what it refuses of updating old (as stored)
// to new (as stored after the request decoding). strategy.Validator is the
// one to use (the server's registry code brings client-go and etcd, hence
// the interface).
type UpdateValidator interface {
	ValidateUpdate(old, new map[string]interface{}) field.ErrorList
}

// StatusValidator is the API server's own validation of an update of the
// /status subresource of the custom resources of one CRD version (a PUT or
// PATCH to .../status): its status strategy. strategy.Validator is the one
// to use.
type StatusValidator interface {
	// ValidateStatusUpdate returns what the server stores of an update of
	// old (as stored) by new (as the request decoding left it): old, but
	// for new's status (the status strategy's PrepareForUpdate), and what
	// it refuses of that (its ValidateUpdate: the status schema, the CEL
	// rules).
	ValidateStatusUpdate(old, new map[string]interface{}) (map[string]interface{}, field.ErrorList)
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
// validator the server's update validation of new's version (nil: none).
func Check(old, new map[string]interface{}, crd *schema.CRD, mut *Schema, validator UpdateValidator) (*Outcome, error) {
	return CheckStored(old, new, nil, crd, mut, validator)
}

// CheckStored is Check given newStored, prune.Store of new in its version
// with defaults, when the caller has it (nil: computed here). It is used
// only when new goes to the server as given: with its namespace, or of a
// cluster-scoped kind; otherwise it is computed again.
func CheckStored(old, new map[string]interface{}, newStored *prune.Coerced, crd *schema.CRD, mut *Schema, validator UpdateValidator) (*Outcome, error) {
	validate := func(old, new map[string]interface{}) (map[string]interface{}, field.ErrorList) {
		if validator == nil {
			return new, nil
		}
		return new, validator.ValidateUpdate(old, new)
	}
	return check(old, new, newStored, crd, mut, validate, false)
}

// CheckStatus is Check of an update of old's /status subresource by new:
// new as the request decoding leaves it (status kept), then what the
// server's status strategy stores of it and refuses (validator): old's
// spec and metadata with new's status. The markers compare old with that.
// The caller checks that new's version has the status subresource.
func CheckStatus(old, new map[string]interface{}, crd *schema.CRD, mut *Schema, validator StatusValidator) (*Outcome, error) {
	return check(old, new, nil, crd, mut, validator.ValidateStatusUpdate, true)
}

// check is Check of an update to the object (status false) or its status:
// validate returns what the server stores of new and refuses.
func check(old, new map[string]interface{}, newStored *prune.Coerced, crd *schema.CRD, mut *Schema,
	validate func(old, new map[string]interface{}) (map[string]interface{}, field.ErrorList), status bool) (*Outcome, error) {
	newVersion, err := versionOf(new)
	if err != nil {
		return nil, err
	}
	oldVersion, err := versionOf(old)
	if err != nil {
		return nil, err
	}
	if !crd.ClusterScoped() && !hasNamespace(new) {
		newStored = nil // of new without the namespace InNamespace gives it
	}
	if !crd.ClusterScoped() {
		// A request for a namespaced kind has a namespace (kubectl gives an object without
		// one the context's); the server refuses an object without one.
		new, old = InNamespace(new, "default"), InNamespace(old, "default")
	}
	s, err := crd.ServedSchema(newVersion)
	if err != nil {
		return nil, err
	}
	store := prune.Store
	if status {
		store = storeWithStatus
	}
	if newStored == nil {
		if newStored, err = store(new, crd, newVersion, true); err != nil {
			return nil, fmt.Errorf("the server would refuse the new object: %w", err)
		}
	}
	oldStored, err := store(old, crd, oldVersion, true)
	if err != nil {
		return nil, fmt.Errorf("the old object: %w", err)
	}
	oldObj := oldStored.Object
	if oldVersion != newVersion {
		// The server reads the old object in the request's version.
		if !crd.ConversionNone() {
			return nil, fmt.Errorf("the old object is %s, the new one %s, and the CRD converts with a webhook: give the old object in version %s", oldVersion, newVersion, newVersion)
		}
		oldObj["apiVersion"] = crd.GroupKind().Group + "/" + newVersion
		conv, err := store(oldObj, crd, newVersion, true)
		if err != nil {
			return nil, fmt.Errorf("the old object in version %s: %w", newVersion, err)
		}
		oldObj = conv.Object
	}

	out := &Outcome{Pruned: prune.Changes(new, newStored, s)}
	stored, errs := validate(oldObj, newStored.Object)
	for _, v := range CheckMutability(mut, oldObj, stored) {
		f := Finding{Path: v.Path, Rule: v.Rule, Message: v.Message}
		if v.OldPresent {
			f.Old = v.Old
		}
		if v.NewPresent {
			f.New = v.New
		}
		out.Refused = append(out.Refused, f)
	}
	for _, e := range errs {
		f := Finding{Path: e.Field, Rule: describeServerError(s, e), Type: e.Type.String(), Message: e.Detail, Text: e.Error()}
		f.Old, _ = valueAt(oldObj, e.Field)
		f.New, _ = valueAt(stored, e.Field)
		out.Refused = append(out.Refused, f)
	}
	// The server's errors come in map order.
	sort.SliceStable(out.Refused, func(i, j int) bool {
		a, b := out.Refused[i], out.Refused[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Rule+a.Message < b.Rule+b.Message
	})
	return out, nil
}

// storeWithStatus is prune.Store of an object of a write of /status, or
// of the object it replaces: its status is kept as the request decoding
// left it (the write of the object drops it, a write of /status takes it,
// and the old object's is the one an earlier write of /status set).
func storeWithStatus(obj map[string]interface{}, crd *schema.CRD, version string, defaults bool) (*prune.Coerced, error) {
	c, err := prune.Store(obj, crd, version, defaults)
	if err != nil || !c.StatusDropped {
		return c, err
	}
	c.Object["status"] = runtime.DeepCopyJSONValue(c.Request["status"])
	c.StatusDropped = false
	return c, nil
}

func versionOf(obj map[string]interface{}) (string, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	gv, err := runtimeschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "", err
	}
	return gv.Version, nil
}

// describeServerError names the CEL rule behind an error of the server's
// validation when there is one: the x-kubernetes-validations entry at the
// error's path whose message (or rule) the error carries.
func describeServerError(s *structuralschema.Structural, e *field.Error) string {
	rule := "server: " + e.Type.String()
	node := schemaAt(s, e.Field)
	if node == nil {
		return rule
	}
	for _, v := range node.XValidations {
		msg := v.Message
		if msg == "" {
			msg = "failed rule: " + v.Rule
		}
		if e.Detail == msg || strings.Contains(e.Detail, "failed rule: "+v.Rule) {
			return "x-kubernetes-validations: " + v.Rule
		}
	}
	return rule
}

// schemaAt walks a path in the server's format (a.b[0].c, map keys in
// brackets) down the schema; nil where it leaves it.
func schemaAt(s *structuralschema.Structural, path string) *structuralschema.Structural {
	for _, seg := range fieldpath.Parse(path) {
		if s == nil {
			return nil
		}
		switch {
		case seg.IsIndex && s.Items != nil:
			s = s.Items
		case !seg.IsIndex && s.Properties != nil:
			p, ok := s.Properties[seg.Key]
			if !ok {
				return nil
			}
			s = &p
		case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			s = s.AdditionalProperties.Structural
		default:
			return nil
		}
	}
	return s
}

// valueAt returns the value at a path in the server's format.
func valueAt(obj interface{}, path string) (interface{}, bool) {
	v := obj
	for _, seg := range fieldpath.Parse(path) {
		switch x := v.(type) {
		case map[string]interface{}:
			var ok bool
			if v, ok = x[seg.Key]; !ok {
				return nil, false
			}
		case []interface{}:
			if !seg.IsIndex || seg.Index < 0 || seg.Index >= len(x) {
				return nil, false
			}
			v = x[seg.Index]
		default:
			return nil, false
		}
	}
	return v, true
}

// InNamespace returns obj with metadata.namespace set to ns when it has
// none (a copy: obj is not changed).
func InNamespace(obj map[string]interface{}, ns string) map[string]interface{} {
	if hasNamespace(obj) {
		return obj
	}
	meta, _ := obj["metadata"].(map[string]interface{})
	out := make(map[string]interface{}, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	m := make(map[string]interface{}, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	m["namespace"] = ns
	out["metadata"] = m
	return out
}

func hasNamespace(obj map[string]interface{}) bool {
	meta, _ := obj["metadata"].(map[string]interface{})
	s, _ := meta["namespace"].(string)
	return s != ""
}
