package prune

import (
	"encoding/json"
	"fmt"
	"sort"

	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// CreateValidator is the API server's validation of a create of a custom
// resource of crd in version: obj as the request decoding leaves it, sent
// to namespace when it has none. obj is the validator's to change, as the
// server's steps do: a copy. strategy.Validators is the one to use (the
// server's registry code brings client-go and etcd, hence the interface).
type CreateValidator interface {
	ValidateCreate(crd *schema.CRD, version string, obj map[string]interface{}, namespace string) (field.ErrorList, error)
}

// FieldError is one reason the server refuses an object: an error of its
// validation (a field.Error), with the source line.
type FieldError struct {
	// Field is the path in the server's format ("<nil>" for a rule of the root).
	Field string `json:"field"`
	// Type is the server's error type: "Invalid value", "Required value", ...
	Type string `json:"type"`
	// Value is the value the server names, when its message shows one.
	Value interface{} `json:"value,omitempty"`
	// Detail says what is wrong.
	Detail string `json:"detail"`
	// Message is the error as the server words it: field, type, value, detail.
	Message string `json:"message"`
	// Line is the source line of the field, or of its nearest ancestor in
	// the document (the document's first line when none is).
	Line int `json:"line,omitempty"`
}

// validateCreate runs v on what the server validates on a create: the
// object as the request decoding leaves it, which is always defaulted
// (whether or not the output shows the defaults) and still in the version
// it was sent in (before the round trip through the storage version).
// With keep, c is read afterwards: v gets a copy, as the server's steps
// before validation change the object; without, c's own.
func validateCreate(doc *document.Document, crd *schema.CRD, version string, c *Coerced, defaults bool, v CreateValidator, namespace string, keep bool) ([]FieldError, error) {
	decoded := c.Object
	if c.Request != nil {
		decoded = c.Request
	}
	if keep {
		decoded = runtime.DeepCopyJSON(decoded)
	}
	if !defaults {
		// Coerce with defaults is Coerce without them, then defaulting: only
		// the last step is left to do (the output keeps no default).
		s, err := crd.ServedSchema(version)
		if err != nil {
			return nil, err
		}
		structuraldefaulting.Default(decoded, s)
	}
	if namespace == "" {
		namespace = "default" // where kubectl sends an object when nothing names a namespace
	}
	errs, err := v.ValidateCreate(crd, version, decoded, namespace)
	if err != nil {
		return nil, err
	}
	return FieldErrors(doc, errs), nil
}

// FieldErrors are errs of the server's validation of the object of doc,
// with their source lines, sorted (some of the server's validators walk
// maps: its order is not stable).
func FieldErrors(doc *document.Document, errs field.ErrorList) []FieldError {
	out := make([]FieldError, 0, len(errs))
	for _, e := range errs {
		out = append(out, FieldError{
			Field:   e.Field,
			Type:    e.Type.String(),
			Value:   shownValue(e),
			Detail:  e.Detail,
			Message: e.Error(),
			Line:    lineOrStart(doc, e.Field),
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Field != out[j].Field {
			return out[i].Field < out[j].Field
		}
		return out[i].Message < out[j].Message
	})
	return out
}

// shownValue is the error's value when the server's message shows it
// (field.Error.ErrorBody), made safe for JSON.
func shownValue(e *field.Error) interface{} {
	switch e.Type {
	case field.ErrorTypeInvalid, field.ErrorTypeTypeInvalid, field.ErrorTypeNotSupported,
		field.ErrorTypeNotFound, field.ErrorTypeDuplicate, field.ErrorTypeTooMany, field.ErrorTypeTooFew:
	default:
		return nil
	}
	if _, omitted := e.BadValue.(field.OmitValueType); omitted {
		return nil
	}
	if _, err := json.Marshal(e.BadValue); err != nil {
		return fmt.Sprint(e.BadValue)
	}
	return e.BadValue
}

func lineOrStart(doc *document.Document, path string) int {
	if l := LineOfPath(doc, path); l > 0 {
		return l
	}
	return doc.Source.Line
}

// LineOfPath finds the source line of a path in the server's format (map
// keys in brackets), or of its nearest ancestor in the document; 0 when
// none is found.
func LineOfPath(doc *document.Document, path string) int {
	for p := fieldpath.Parse(path); len(p) > 0; p = p[:len(p)-1] {
		if l := doc.Line(p); l > 0 {
			return l
		}
	}
	return 0
}
