// Package crdupgrade compares an old and a new CustomResourceDefinition, the
// one a cluster holds and the one about to replace it, and names every
// change that can hurt: what the server refuses of the update itself (its
// own CRD update validation, called), what clients of the API lose, what it
// prunes from existing objects, and what makes existing objects invalid.
//
// It compares the schemas as written: the changes are those of the CRD.
// How many objects each one hurts is for the request and storage path of
// the new CRD run on the objects (prune, update).
package crdupgrade

import (
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// Severity grades a change by what it does to a cluster that has objects.
type Severity string

const (
	// Breaking: the server refuses the CRD update, or clients of the API break.
	Breaking Severity = "Breaking"
	// DataLoss: the server drops data of existing objects (on read, and for
	// good on their next write).
	DataLoss Severity = "DataLoss"
	// Invalid: existing objects may fail the new validation: a create of
	// the same manifest is refused, and an update that changes the
	// offending field (ratcheting lets unchanged ones through).
	Invalid Severity = "Invalid"
	// Warning: behaviour changes for existing objects or clients, no data
	// is lost.
	Warning Severity = "Warning"
	// Info: a compatible change, listed for the record.
	Info Severity = "Info"
)

// Severities are every severity, the worst first.
var Severities = []Severity{Breaking, DataLoss, Invalid, Warning, Info}

// Rank orders severities, the worst first (0).
func (s Severity) Rank() int {
	for i, x := range Severities {
		if x == s {
			return i
		}
	}
	return len(Severities)
}

// Kind names what changed.
type Kind string

const (
	// The server's own CRD update validation refuses the new CRD.
	Refused Kind = "Refused"

	ScopeChanged      Kind = "ScopeChanged"
	GroupChanged      Kind = "GroupChanged"
	NameChanged       Kind = "NameChanged" // spec.names.kind, plural, listKind, singular
	NameRemoved       Kind = "NameRemoved" // a short name or category no longer there
	ConversionChanged Kind = "ConversionChanged"

	VersionAdded         Kind = "VersionAdded"
	VersionRemoved       Kind = "VersionRemoved"
	StoredVersionRemoved Kind = "StoredVersionRemoved" // removed while in status.storedVersions
	VersionUnserved      Kind = "VersionUnserved"
	VersionServed        Kind = "VersionServed"
	VersionDeprecated    Kind = "VersionDeprecated"
	StorageMoved         Kind = "StorageMoved"
	// DroppedOnWrite: a field of a version objects are stored in that the
	// new storage version lacks: their next write stores them there
	// (conversion None) and drops it for good.
	DroppedOnWrite     Kind = "DroppedOnWrite"
	SubresourceRemoved Kind = "SubresourceRemoved"
	SubresourceAdded   Kind = "SubresourceAdded"

	FieldRemoved           Kind = "FieldRemoved"
	TypeChanged            Kind = "TypeChanged"
	RequiredAdded          Kind = "RequiredAdded"
	EnumTightened          Kind = "EnumTightened"
	EnumLoosened           Kind = "EnumLoosened"
	PatternChanged         Kind = "PatternChanged"
	FormatChanged          Kind = "FormatChanged"
	BoundTightened         Kind = "BoundTightened"
	BoundLoosened          Kind = "BoundLoosened"
	NullableRemoved        Kind = "NullableRemoved"
	PreserveUnknownRemoved Kind = "PreserveUnknownRemoved"
	ListTypeChanged        Kind = "ListTypeChanged"
	MapKeysChanged         Kind = "MapKeysChanged"
	MapTypeChanged         Kind = "MapTypeChanged"
	NonStructural          Kind = "NonStructural"
	RuleAdded              Kind = "RuleAdded" // an x-kubernetes-validations rule on every write
	RuleRemoved            Kind = "RuleRemoved"
	ImmutableAdded         Kind = "ImmutableAdded" // a transition rule or a mutability marker
	DefaultAdded           Kind = "DefaultAdded"
	DefaultChanged         Kind = "DefaultChanged"
	DefaultRemoved         Kind = "DefaultRemoved"
)

// Change is one difference between the old and the new CRD that matters.
type Change struct {
	Kind     Kind
	Severity Severity
	// Version is the CRD version the change is in ("" for the whole CRD).
	Version string
	// Path is where: a field of the objects (spec.ports[*].name: [*] is
	// every item of a list or value of a map) for a schema change, a field
	// of the CRD (spec.scope) for a change of the CRD itself.
	Path string
	// Keyword is the schema keyword or the CRD field that changed
	// (maxLength, x-kubernetes-list-type, served), when the kind has several.
	Keyword string
	// Old and New are the values before and after (nil when absent).
	Old, New interface{}
	// Detail is the server's message, for Refused.
	Detail string
}

// CRD is one side of the comparison: the CRD as decoded (schema.CRD), and
// the document as written, for what the server drops when it decodes
// (the mutability markers). Raw is nil for a CRD read from a cluster: then
// the markers are not compared. Markers, when set, are the markers of Raw
// as update.CRDSchemas read them already, and Raw is not needed.
type CRD struct {
	CRD     *schema.CRD
	Raw     map[string]interface{}
	Markers map[string]*update.Schema
}

// CRDUpdateValidator is the API server's own validation of a CRD update:
// strategy.Validators is the one to use (it brings client-go and etcd).
type CRDUpdateValidator interface {
	ValidateCRDUpdate(old, new *apiextensionsv1.CustomResourceDefinition) field.ErrorList
}

// Compare lists the changes from old to new, the worst first, then by
// version, path and kind. v may be nil: then what the server refuses is
// not asked (Refused changes are missing).
func Compare(old, new CRD, v CRDUpdateValidator) []Change {
	c := &comparison{old: old, new: new}
	if v != nil {
		for _, e := range v.ValidateCRDUpdate(old.CRD.Object, new.CRD.Object) {
			// The server words it, value and all (a bad value may be a whole schema).
			c.add(Change{Kind: Refused, Severity: Breaking, Path: e.Field, Keyword: e.Type.String(), Detail: e.ErrorBody()})
		}
	}
	c.crd()
	c.versions()
	sort.SliceStable(c.out, func(i, j int) bool {
		a, b := c.out[i], c.out[j]
		if a.Severity != b.Severity {
			return a.Severity.Rank() < b.Severity.Rank()
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Keyword < b.Keyword
	})
	return c.out
}

type comparison struct {
	old, new CRD
	out      []Change
}

func (c *comparison) add(ch Change) { c.out = append(c.out, ch) }

// StoredVersions are the versions objects of crd may be stored in:
// status.storedVersions, or for a CRD of a file (no status) its storage
// version, what the server records when it creates it.
func StoredVersions(crd *schema.CRD) []string {
	if s := crd.Object.Status.StoredVersions; len(s) > 0 {
		return s
	}
	if v := crd.StorageVersion(); v != "" {
		return []string{v}
	}
	return nil
}

// markers reads the mutability markers of a side, nil without its document.
func (s CRD) markers() map[string]*update.Schema {
	if s.Markers != nil {
		return s.Markers
	}
	if s.Raw == nil {
		return nil
	}
	m, _ := update.CRDSchemas(s.Raw)
	return m
}
