// Package finding is the one shape of what the checks find, and the one
// place where a finding is worded: the plugin prints the Message, the KRM
// function carries it as a result's message. The checks keep their own
// types inside (prune.Change, update.Finding, field.ErrorList, as in the
// server); a front end converts them here, never words them itself.
package finding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// Check names the check a finding comes from; the KRM function's failOn
// takes these names. "" is a note about the inputs, of no check.
type Check string

const (
	Prune         Check = "Prune"         // the server would drop or change a field
	NonStructural Check = "NonStructural" // the server would refuse the CRD
	Update        Check = "Update"        // the server or a mutability marker would refuse the update
	MissingCRD    Check = "MissingCRD"    // no CRD is known for the kind: not checked
	Invalid       Check = "Invalid"       // the server's validation would refuse the create
	// CRDWarning: the server would warn of a CRD it accepts, or no server serves its apiVersion.
	CRDWarning Check = "CRDWarning"
	// Deprecated: the object is of a version its CRD deprecates; the
	// server warns of every request for it.
	Deprecated Check = "Deprecated"
)

// Checks are every check, in the order their names are listed.
var Checks = []Check{Prune, NonStructural, Update, MissingCRD, Invalid, Breaking, DataLoss, CRDChange, CRDWarning, Deprecated}

// Severity says whether a finding fails a run.
type Severity string

const (
	Warning Severity = "warning"
	Error   Severity = "error"
	// Info is a change listed for the record (a compatible CRD change).
	Info Severity = "info"
)

// Finding is one thing a check found in one object or CRD.
type Finding struct {
	Check Check
	// Reason is the check's own name for it: a prune.Reason, an update
	// rule ("x-kubernetes-mutability: Immutable"), a server error type.
	Reason string
	// Path in the server's format ("" when the finding is about the whole object).
	Path string
	// Version is the CRD version a finding about a CRD is in ("" for one
	// about objects, or about the whole CRD).
	Version  string
	Severity Severity
	// Message is the finding in words, without where it is (object, file).
	Message string
	// Value is the value as sent (or the old one of an update); NewValue
	// what the server stores (or the new one).
	Value, NewValue interface{}
	// Line is the source line (0 when unknown).
	Line int
}

// FromChange is a field the server changes. kind and storageVersion are
// those of the object's result: the words of some reasons name them.
func FromChange(ch prune.Change, kind, storageVersion string) Finding {
	return Finding{
		Check: Prune, Reason: string(ch.Reason), Path: ch.Path, Severity: Warning,
		Message: describeChange(ch, kind, storageVersion), Value: ch.Value, NewValue: ch.NewValue, Line: ch.Line,
	}
}

func describeChange(ch prune.Change, kind, storageVersion string) string {
	switch ch.Reason {
	case prune.StatusSubresource:
		if kind == "CustomResourceDefinition" {
			return fmt.Sprintf("%q is ignored: the server writes a CustomResourceDefinition's status itself", ch.Path)
		}
		return fmt.Sprintf("%q is ignored: the CRD has the status subresource, so only writes to /status set it", ch.Path)
	case prune.ClusterScoped:
		return fmt.Sprintf("dropped %q: %s is cluster-scoped", ch.Path, kind)
	case prune.StorageVersion:
		return fmt.Sprintf("pruned %q when stored: not in the schema of the storage version %s", ch.Path, storageVersion)
	case prune.UnknownField:
		return fmt.Sprintf("pruned unknown field %q", ch.Path)
	case prune.UnknownMetadataField:
		return fmt.Sprintf("dropped unknown metadata field %q", ch.Path)
	case prune.NullNonNullable:
		return fmt.Sprintf("dropped null value of non-nullable field %q", ch.Path)
	case prune.Defaulted:
		return fmt.Sprintf("defaulted %q to %s", ch.Path, JSON(ch.NewValue))
	case prune.Normalized:
		if ch.Action == prune.Removed {
			return fmt.Sprintf("normalized: the server does not store %q (was %s)", ch.Path, JSON(ch.Value))
		}
		return fmt.Sprintf("normalized: %q %s -> %s", ch.Path, JSON(ch.Value), JSON(ch.NewValue))
	}
	switch ch.Action {
	case prune.Removed:
		return fmt.Sprintf("metadata normalized: dropped %q (was %s)", ch.Path, JSON(ch.Value))
	case prune.Added:
		return fmt.Sprintf("metadata normalized: added %q = %s", ch.Path, JSON(ch.NewValue))
	}
	return fmt.Sprintf("metadata normalized: %q %s -> %s", ch.Path, JSON(ch.Value), JSON(ch.NewValue))
}

// FromInvalid is a reason the server's validation refuses a create, in
// the server's words (which show the value: Value is left empty).
func FromInvalid(e prune.FieldError) Finding {
	return Finding{
		Check: Invalid, Reason: e.Type, Path: e.Field, Severity: Error,
		Message: "the server would refuse it: " + e.Message, Line: e.Line,
	}
}

// FromUpdate is a reason an update is refused: the rule, then what it says.
func FromUpdate(f update.Finding) Finding {
	return Finding{
		Check: Update, Reason: f.Rule, Path: f.Path, Severity: Error,
		Message: f.Rule + ": " + f.Message, Value: f.Old, NewValue: f.New, Line: f.Line,
	}
}

// FromStructural is a reason the server refuses a CRD (it is not
// structural, or invalid).
func FromStructural(crdName string, e *field.Error) Finding {
	return Finding{
		Check: NonStructural, Reason: e.Type.String(), Path: e.Field, Severity: Error,
		Message: fmt.Sprintf("CustomResourceDefinition %s is not structural: %s", crdName, e.ErrorBody()),
	}
}

// FromMarker is a mutability marker placed where the KEP gives it no
// meaning: it is not enforced. It has no Reason: it is no rule of an update.
func FromMarker(crdName string, e *field.Error) Finding {
	return Finding{
		Check: Update, Path: e.Field, Severity: Warning,
		Message: fmt.Sprintf("CustomResourceDefinition %s: misplaced mutability marker, not enforced: %s", crdName, e.ErrorBody()),
	}
}

// OfCRD are the warnings about a CRD read from a file: its apiVersion, if
// no server serves it (LegacyCRD), then what the server warns of when it
// accepts the CRD (FromCRDWarning). A check of CRDs as written adds its
// findings here, and every front end shows them.
func OfCRD(crd *schema.CRD) []Finding {
	var out []Finding
	if crd.Legacy() {
		out = append(out, LegacyCRD(crd.Name()))
	}
	for _, w := range crd.Warnings() {
		out = append(out, FromCRDWarning(w))
	}
	// Only an emulated minor has differences: the linked one reads no rule.
	if answer := kubeversion.Current(); answer.Emulated() {
		for _, d := range answer.DifferencesFor(crd.Expressions()) {
			out = append(out, EmulationDiffers(answer, d))
		}
	}
	return out
}

// ReasonEmulationDiffers is the Reason of EmulationDiffers.
const ReasonEmulationDiffers = "EmulationDiffers"

// EmulationDiffers is a note on a CRD whose CEL expressions call a
// function that the emulated minor's own server is known to answer
// otherwise (kubeversion.Answer.DifferencesFor): the verdicts on its
// objects may not be that server's. It fails no run. As the server's
// warnings, it is shown after the CRD's name.
func EmulationDiffers(a kubeversion.Answer, difference string) Finding {
	return Finding{
		Reason: ReasonEmulationDiffers, Severity: Warning,
		Message: fmt.Sprintf("its rules may be answered otherwise by kube-apiserver %s's own server: %s", a.Minor, difference),
	}
}

// FromCRDWarning is a warning the API server returns when it accepts a
// CRD: in its words, as kubectl prints them after "Warning: ".
func FromCRDWarning(warning string) Finding {
	return Finding{Check: CRDWarning, Severity: Warning, Message: warning}
}

// ReasonRefusedUnused is the Reason of RefusedUnused.
const ReasonRefusedUnused = "RefusedUnused"

// RefusedUnused is a CRD of a schema source (--crd-file, crdPaths) that
// the server would refuse, of a kind no object of the run is: a warning,
// as the run checks nothing against it. refusal is the server's words.
func RefusedUnused(refusal string) Finding {
	return Finding{
		Check: CRDWarning, Reason: ReasonRefusedUnused, Severity: Warning,
		Message: "the API server would refuse this CRD, which no object of this run uses: " + refusal,
	}
}

// ReasonLegacyAPIVersion is the Reason of LegacyCRD.
const ReasonLegacyAPIVersion = "LegacyAPIVersion"

// LegacyCRD is a CRD written in apiextensions.k8s.io/v1beta1, which no API
// server serves since Kubernetes 1.22: the file cannot be applied. It is
// checked as the CRD a cluster stored before then still is (as the server
// would validate its rewrite), and so only warned of here.
func LegacyCRD(crdName string) Finding {
	return Finding{
		Check: CRDWarning, Reason: ReasonLegacyAPIVersion, Severity: Warning,
		Message: "apiextensions.k8s.io/v1beta1 is served by no API server since Kubernetes 1.22, so this file cannot be applied: " +
			"it is checked as a CRD a cluster stored before then. Write it in apiextensions.k8s.io/v1 " +
			"(a cluster that holds it gives it so: kubectl get crd " + crdName + " -o yaml), with a structural schema per version " +
			"in spec.versions[*].schema.openAPIV3Schema, x-kubernetes-preserve-unknown-fields: true in the schema " +
			"instead of spec.preserveUnknownFields: true, spec.scope set, and subresources and additionalPrinterColumns " +
			"(jsonPath) per version",
	}
}

// ReasonRedefined is the Reason of Redefined.
const ReasonRedefined = "Redefined"

// Redefined is a CRD defined twice, differently: the later one is used. It
// is of no check: a note on the inputs, a warning whatever fails a run.
func Redefined(first, later string) Finding {
	return Finding{
		Reason: ReasonRedefined, Severity: Warning,
		Message: fmt.Sprintf("defined twice, differently (%s and %s): the later one, of %s, is used", first, later, later),
	}
}

// DeprecatedVersion is an object of a version its CRD deprecates: the
// warning the server returns with every request for that version, in its
// words (schema.CRD.DeprecationWarning). A warning, unless the gate names
// Deprecated. line is the object's.
func DeprecatedVersion(warning string, line int) Finding {
	return Finding{Check: Deprecated, Severity: Warning, Message: warning, Line: line}
}

// NoCRD is an object of a kind that no CRD defines, which is not checked.
func NoCRD(ref document.ObjectRef) Finding {
	return Finding{
		Check: MissingCRD, Severity: Warning,
		Message: fmt.Sprintf("no CustomResourceDefinition for %s, kind %s: not checked", ref.APIVersion, ref.Kind),
	}
}

// OfResult are the notes on what a check of an object left undone: what
// the storage version keeps, when a conversion webhook converts to it; the
// comments of a document whose edits could not keep them. Of no check: a
// warning whatever fails a run. line is the object's.
func OfResult(res *prune.Result, line int) []Finding {
	var out []Finding
	if res.StorageUnchecked {
		out = append(out, Finding{Severity: Warning, Line: line, Reason: "StorageUnchecked",
			Message: fmt.Sprintf("stored as %s through the CRD's conversion webhook: what that version keeps is not checked", res.StorageVersion)})
	}
	if res.Reformatted != "" {
		out = append(out, Finding{Severity: Warning, Line: line, Reason: "Reformatted", Message: res.Reformatted})
	}
	return out
}

// JSON is v as compact JSON, for messages: <, > and & as they are, as
// kubectl writes them.
func JSON(v interface{}) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
