package prune

import (
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Options tune what is computed.
type Options struct {
	// Defaults applies the schema's defaults after pruning, as the server
	// does, so the output is the object the server stores.
	Defaults bool
	// Validate, when set, runs the server's create validation on each
	// custom resource: one it refuses is Invalid, with its errors.
	Validate CreateValidator
	// Namespace is where the request goes for an object of a namespaced
	// kind without a namespace, for validation ("": "default").
	Namespace string
	// CRDs, when set, prepares the create of a CustomResourceDefinition as
	// the server's registry does: the document becomes the CRD the server
	// stores (StoredCRD); without, a CRD passes through unchanged.
	CRDs schema.CRDPreparer
}

// Status says how a document was handled.
type Status string

const (
	// Checked: the document is a custom resource of a known CRD.
	Checked Status = "Checked"
	// IsCRD: the document is a CustomResourceDefinition: its changes are
	// what the server's decoding, create and storage make of it
	// (Options.CRDs), as it is then stored.
	IsCRD Status = "CustomResourceDefinition"
	// MissingCRD: no CRD is known for the document's group and kind.
	MissingCRD Status = "MissingCRD"
	// Invalid: a custom resource of a known CRD that the server's
	// validation refuses (Options.Validate): it would store nothing.
	Invalid Status = "Invalid"
)

// Result is what the server does to one document.
type Result struct {
	Object document.ObjectRef `json:"object"`
	Source document.Source    `json:"source"`
	Status Status             `json:"status"`
	CRD    string             `json:"crd,omitempty"`
	// Deprecated is the warning the server returns with every request for
	// the object's version, when its CRD deprecates it
	// (schema.CRD.DeprecationWarning).
	Deprecated string   `json:"deprecated,omitempty"`
	Changes    []Change `json:"changes"`
	// Errors are why the server refuses an Invalid object.
	Errors []FieldError `json:"errors,omitempty"`
	// Reformatted is set when the changes could not be applied to the YAML
	// in place (e.g. a field reached through an alias): the document was
	// written again from the stored object, without its comments.
	Reformatted string `json:"reformatted,omitempty"`
	// StorageVersion is the version the object is stored in, when it is not
	// the one it was sent in.
	StorageVersion string `json:"storageVersion,omitempty"`
	// StorageUnchecked: a conversion webhook converts to the storage version,
	// so what is stored there is not computed.
	StorageUnchecked bool `json:"storageUnchecked,omitempty"`
}

// Document computes what the server stores for the document and applies
// the changes to its YAML, in place; with opts.Validate, an object the
// server's validation refuses is Invalid (its changes are still computed
// and applied: they say what the request decoding does before refusing).
// An error is an *document.InputError: the server would refuse to decode
// the object.
func Document(doc *document.Document, reg *schema.Registry, opts Options) (*Result, error) {
	ref, gv, err := document.Identify(doc)
	if err != nil {
		return nil, err
	}
	res := &Result{Object: ref, Source: doc.Source, Changes: []Change{}}
	if schema.IsCRD(ref.APIVersion, ref.Kind) {
		res.Status = IsCRD
		return res, storeCRD(doc, res, opts.CRDs)
	}
	crd, ok := reg.Lookup(ref.APIVersion, ref.Kind)
	if !ok {
		res.Status = MissingCRD
		return res, nil
	}
	res.Status, res.CRD = Checked, crd.Name()
	res.Deprecated, _ = crd.DeprecationWarning(gv.Version)
	if crd.ClusterScoped() {
		res.Object.Namespace = "" // the server drops it
	}
	s, err := crd.ServedSchema(gv.Version)
	if err != nil {
		return nil, &document.InputError{Source: doc.Source, Msg: err.Error()}
	}
	coerced, err := Store(doc.Object, crd, gv.Version, opts.Defaults)
	if err != nil {
		return nil, &document.InputError{Source: doc.Source, Msg: "the server would refuse this object: " + err.Error()}
	}
	res.StorageVersion, res.StorageUnchecked = coerced.StorageVersion, coerced.StorageUnknown
	changes := Changes(doc.Object, coerced, s)
	if opts.Validate != nil {
		// The changes and the YAML's edits hold parts of the coerced
		// object: without any, nothing reads it after the validator, which
		// may then have it rather than a copy (issue 44).
		errs, err := validateCreate(doc, crd, gv.Version, coerced, opts.Defaults, opts.Validate, opts.Namespace, len(changes) > 0)
		if err != nil {
			return nil, &document.InputError{Source: doc.Source, Msg: err.Error()}
		}
		if len(errs) > 0 {
			res.Status, res.Errors = Invalid, errs
		}
	}
	if len(changes) > 0 {
		res.Changes = changes // else the [] of the report's contract, not null
	}
	for i := range res.Changes {
		ch := &res.Changes[i]
		ch.Line = LineOf(doc, *ch)
	}
	if len(res.Changes) == 0 {
		return res, nil
	}
	note, err := doc.Apply(Edits(doc.Object, coerced.Object), coerced.Object)
	if err != nil {
		return nil, err
	}
	res.Reformatted = note
	return res, nil
}

// LineOf is the source line of a change: of the field, or for an added one,
// of the object it is added to.
func LineOf(doc *document.Document, ch Change) int {
	if ch.Action == Added {
		return doc.Line(ch.Segments[:len(ch.Segments)-1])
	}
	return doc.Line(ch.Segments)
}
