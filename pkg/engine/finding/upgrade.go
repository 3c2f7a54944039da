package finding

import (
	"fmt"
	"strings"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// The checks of a CRD upgrade (crdupgrade.Compare): one per severity that
// fails a run, so that failOn: [DataLoss, Breaking, Invalid] reads as the
// severities; Invalid is the create check's own (the same meaning: objects
// the server's validation refuses). The compatible changes are CRDChange.
const (
	Breaking  Check = "Breaking"  // the server refuses the CRD update, or clients break
	DataLoss  Check = "DataLoss"  // the server drops data of existing objects
	CRDChange Check = "CRDChange" // a CRD change that loses nothing: a warning or a note
)

// UpgradeChecks are the checks of a CRD upgrade, the worst first.
var UpgradeChecks = []Check{Breaking, DataLoss, Invalid, CRDChange}

// FromCRDChange is a change of a CRD upgrade. Its Reason is the change's
// kind, its Path a field of the objects (or of the CRD, for a change of the
// CRD itself), Value and NewValue what the schema said before and after.
func FromCRDChange(ch crdupgrade.Change) Finding {
	f := Finding{
		Reason: string(ch.Kind), Path: ch.Path, Version: ch.Version,
		Message: describeCRDChange(ch), Value: ch.Old, NewValue: ch.New,
	}
	switch ch.Severity {
	case crdupgrade.Breaking:
		f.Check, f.Severity = Breaking, Error
	case crdupgrade.DataLoss:
		f.Check, f.Severity = DataLoss, Error
	case crdupgrade.Invalid:
		f.Check, f.Severity = Invalid, Error
	case crdupgrade.Warning:
		f.Check, f.Severity = CRDChange, Warning
	default:
		f.Check, f.Severity = CRDChange, Info
	}
	return f
}

func describeCRDChange(ch crdupgrade.Change) string {
	in := ""
	if ch.Version != "" {
		in = ch.Version + ": "
	}
	field := fmt.Sprintf("%s%q", in, ch.Path)
	switch ch.Kind {
	case crdupgrade.Refused:
		return fmt.Sprintf("the server would refuse the CRD update: %s: %s", ch.Path, ch.Detail)
	case crdupgrade.ScopeChanged:
		return fmt.Sprintf("scope changed from %v to %v: every client's URLs change", ch.Old, ch.New)
	case crdupgrade.GroupChanged:
		return fmt.Sprintf("group changed from %v to %v: a new API, the objects of the old one are not in it", ch.Old, ch.New)
	case crdupgrade.NameChanged:
		return fmt.Sprintf("names.%s changed from %v to %v: clients naming it break", ch.Keyword, ch.Old, ch.New)
	case crdupgrade.NameRemoved:
		return fmt.Sprintf("names.%s: %v removed: kubectl no longer knows it", ch.Keyword, ch.Old)
	case crdupgrade.ConversionChanged:
		return fmt.Sprintf("conversion strategy changed from %v to %v", ch.Old, ch.New)
	case crdupgrade.VersionAdded:
		return fmt.Sprintf("version %s added", ch.Version)
	case crdupgrade.VersionRemoved:
		return fmt.Sprintf("version %s removed: its clients break", ch.Version)
	case crdupgrade.StoredVersionRemoved:
		return fmt.Sprintf("version %s removed while in status.storedVersions: objects may still be stored in it (migrate them, then drop it from storedVersions)", ch.Version)
	case crdupgrade.VersionUnserved:
		return fmt.Sprintf("version %s no longer served: its clients break", ch.Version)
	case crdupgrade.VersionServed:
		return fmt.Sprintf("version %s served again", ch.Version)
	case crdupgrade.VersionDeprecated:
		return fmt.Sprintf("version %s deprecated", ch.Version)
	case crdupgrade.DroppedOnWrite:
		return fmt.Sprintf("%q is not in the schema of the storage version %v: objects stored in %v lose it on their next write", ch.Path, ch.New, ch.Old)
	case crdupgrade.StorageMoved:
		return fmt.Sprintf("storage version moved from %v to %v: existing objects stay stored in %v until rewritten", ch.Old, ch.New, ch.Old)
	case crdupgrade.SubresourceRemoved:
		return fmt.Sprintf("%ssubresource %s removed: its clients break", in, ch.Keyword)
	case crdupgrade.SubresourceAdded:
		if ch.Keyword == "status" {
			return fmt.Sprintf("%ssubresource status added: writes of the object no longer set its status", in)
		}
		return fmt.Sprintf("%ssubresource %s added", in, ch.Keyword)
	case crdupgrade.FieldRemoved:
		switch ch.Severity {
		case crdupgrade.DataLoss:
			return fmt.Sprintf("%s removed from the schema: pruned from every stored object", field)
		case crdupgrade.Breaking:
			return fmt.Sprintf("%s removed from the schema: clients of %s no longer see it", field, ch.Version)
		}
		if ch.Keyword != "" {
			return fmt.Sprintf("%s removed from the schema: kept by %s", field, ch.Keyword)
		}
		return fmt.Sprintf("%s removed from the schema", field)
	case crdupgrade.PreserveUnknownRemoved:
		if ch.Version == "" {
			return "spec.preserveUnknownFields turned off: every field no schema names is pruned"
		}
		return fmt.Sprintf("%s no longer x-kubernetes-preserve-unknown-fields: the fields its schema does not name are pruned", field)
	case crdupgrade.TypeChanged:
		return fmt.Sprintf("%s %s changed from %s to %s", field, ch.Keyword, JSON(ch.Old), JSON(ch.New))
	case crdupgrade.RequiredAdded:
		if ch.Severity == crdupgrade.Warning {
			return fmt.Sprintf("%s now required (with a default: filled where missing)", field)
		}
		return fmt.Sprintf("%s now required", field)
	case crdupgrade.EnumTightened:
		if ch.Old == nil {
			return fmt.Sprintf("%s now limited to %s", field, JSON(ch.New))
		}
		return fmt.Sprintf("%s no longer allows %s", field, JSON(ch.Old))
	case crdupgrade.EnumLoosened:
		if ch.New == nil {
			return fmt.Sprintf("%s no longer limited to %s", field, JSON(ch.Old))
		}
		return fmt.Sprintf("%s now also allows %s", field, JSON(ch.New))
	case crdupgrade.NonStructural:
		return fmt.Sprintf("%s: the schema is no longer structural: %s", ch.Version, ch.Detail)
	case crdupgrade.RuleAdded:
		return fmt.Sprintf("%s new rule %s", field, JSON(ch.New))
	case crdupgrade.RuleRemoved:
		return fmt.Sprintf("%s rule %s removed", field, JSON(ch.Old))
	case crdupgrade.ImmutableAdded:
		return fmt.Sprintf("%s new %s %s: restricts updates", field, ch.Keyword, JSON(ch.New))
	case crdupgrade.DefaultAdded:
		return fmt.Sprintf("%s new default %s: objects without it read as having it", field, JSON(ch.New))
	case crdupgrade.DefaultChanged:
		return fmt.Sprintf("%s default changed from %s to %s: objects without it read as the new one", field, JSON(ch.Old), JSON(ch.New))
	case crdupgrade.DefaultRemoved:
		return fmt.Sprintf("%s default %s removed", field, JSON(ch.Old))
	}
	// The keyword changes: pattern, format, bounds, nullable, list and map types.
	switch {
	case ch.Old == nil:
		return fmt.Sprintf("%s now has %s %s", field, ch.Keyword, JSON(ch.New))
	case ch.New == nil:
		return fmt.Sprintf("%s no longer has %s %s", field, ch.Keyword, JSON(ch.Old))
	}
	return fmt.Sprintf("%s %s changed from %s to %s", field, ch.Keyword, JSON(ch.Old), JSON(ch.New))
}

// FromImpact is what an upgrade does to one existing object: the fields it
// loses (DataLoss), the defaults it reads with (a warning), why a create of
// it again and why even an unchanged update of it would be refused
// (Invalid). What the old CRD already refused is not the upgrade's doing:
// it is left out.
func FromImpact(imp *crdupgrade.ObjectImpact) []Finding {
	var out []Finding
	for _, u := range imp.Unserved {
		out = append(out, FromVersionUse(imp.Object, u))
	}
	for _, ch := range imp.Changes {
		f := Finding{Reason: string(ch.Reason), Path: ch.Path, Value: ch.Value, NewValue: ch.NewValue, Line: ch.Line}
		switch ch.Reason {
		case prune.UnknownField, prune.UnknownMetadataField, prune.NullNonNullable:
			f.Check, f.Severity = DataLoss, Error
			f.Message = fmt.Sprintf("loses %q under the new CRD: pruned when read, for good on its next write", ch.Path)
		case prune.Defaulted:
			f.Check, f.Severity = CRDChange, Warning
			f.Message = fmt.Sprintf("reads as %q = %s under the new CRD (its default)", ch.Path, JSON(ch.NewValue))
		default:
			f.Check, f.Severity = CRDChange, Warning
			f.Message = "under the new CRD: " + describeChange(ch, imp.Object.Kind, imp.StorageVersion)
		}
		out = append(out, f)
	}
	for _, ch := range imp.NextWrite {
		out = append(out, Finding{Check: DataLoss, Severity: Error, Reason: string(ch.Reason), Path: ch.Path, Version: imp.WrittenAs,
			Value: ch.Value, Line: ch.Line,
			Message: fmt.Sprintf("loses %q when next written, stored as %s: reads intact until then, then the storage version's schema prunes it for good", ch.Path, imp.WrittenAs)})
	}
	for _, e := range imp.Errors {
		out = append(out, Finding{Check: Invalid, Reason: e.Type, Path: e.Field, Severity: Error, Line: e.Line,
			Message: "a create of it again would be refused under the new CRD: " + e.Message})
	}
	for _, e := range imp.UpdateErrors {
		out = append(out, Finding{Check: Invalid, Reason: e.Type, Path: e.Field, Severity: Error, Line: e.Line,
			Message: "even an unchanged update of it would be refused under the new CRD: " + e.Message})
	}
	return append(out, fromMigration(imp)...)
}

// fromMigration is what the write of the object through the version
// clients get by default (a storage-version migration's, kubectl edit's)
// does that the findings above do not say already: written through
// another version than its own, it may lose more, or be refused where an
// unchanged write of its own version is not. What the old CRD refuses of
// it too is not the upgrade's doing.
func fromMigration(imp *crdupgrade.ObjectImpact) []Finding {
	m := imp.Migration
	if m == nil {
		return nil
	}
	said := map[string]bool{}
	for _, ch := range append(append([]prune.Change{}, imp.Changes...), imp.NextWrite...) {
		said[ch.Path] = true
	}
	for _, errs := range [][]prune.FieldError{imp.UpdateErrors, imp.Before} {
		for _, e := range errs {
			said[e.Message] = true
		}
	}
	var out []Finding
	for _, ch := range m.Loses {
		if !said[ch.Path] {
			out = append(out, Finding{Check: DataLoss, Severity: Error, Reason: string(ch.Reason), Path: ch.Path, Version: m.StoredAs, Value: ch.Value, Line: ch.Line,
				Message: fmt.Sprintf("loses %q when written back through %s, the version clients get by default (as a storage-version migration does), stored as %s", ch.Path, m.Via, m.StoredAs)})
		}
	}
	for _, e := range m.Refused {
		if !said[e.Message] {
			out = append(out, Finding{Check: Invalid, Reason: e.Type, Path: e.Field, Severity: Error, Line: e.Line,
				Message: fmt.Sprintf("even an unchanged write of it through %s, the version clients get by default (as a storage-version migration does), would be refused: %s", m.Via, e.Message)})
		}
	}
	return out
}

// FromVersionUse is a use of a version the new CRD no longer serves, by
// obj (an existing object, or a new one of check-update's -f): the server
// refuses every request in it once the new CRD is applied. Its Reason is
// the change's kind, VersionRemoved or VersionUnserved (a stored version
// removed is removed all the same).
func FromVersionUse(obj document.ObjectRef, u crdupgrade.VersionUse) Finding {
	apiVersion := u.Version
	if gv, err := runtimeschema.ParseGroupVersion(obj.APIVersion); err == nil {
		apiVersion = runtimeschema.GroupVersion{Group: gv.Group, Version: u.Version}.String()
	}
	reason, gone, goes := crdupgrade.VersionUnserved, "is no longer served by the new CRD", "the new CRD no longer serves"
	if u.Removed {
		reason, gone, goes = crdupgrade.VersionRemoved, "is removed by the new CRD", "the new CRD removes"
	}
	f := Finding{Check: Breaking, Severity: Error, Reason: string(reason), Path: "apiVersion", Version: u.Version, Value: apiVersion, Line: u.Line}
	if u.Manager == "" {
		f.Message = fmt.Sprintf("apiVersion %s %s: its manifest is refused once the new CRD is applied", apiVersion, gone)
		return f
	}
	write := u.Operation
	if u.Subresource != "" {
		write = strings.TrimSpace(write + " of /" + u.Subresource)
	}
	if write != "" {
		write = " (" + write + ")"
	}
	f.Message = fmt.Sprintf("field manager %q wrote it in apiVersion %s%s, a version %s: its next write in that version is refused (metadata.managedFields)",
		u.Manager, apiVersion, write, goes)
	return f
}

// ObjectsHurt says which objects a change hurts, for the end of its
// message, the first few by name: " [2 objects: a, b]", " [all 4 objects]"
// for a change that concerns every object (a version, a name) once
// checked is more than 0; "" when it hurts none.
func ObjectsHurt(a crdupgrade.Affected, checked int) string {
	if !a.Counted {
		if checked == 0 || a.Change.Severity.Rank() > crdupgrade.Invalid.Rank() {
			return ""
		}
		return fmt.Sprintf(" [all %s]", count(checked, "object"))
	}
	if len(a.Objects) == 0 {
		return ""
	}
	const shown = 3
	var names []string
	for i, o := range a.Objects {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(a.Objects)-shown))
			break
		}
		names = append(names, o.String())
	}
	return fmt.Sprintf(" [%s: %s]", count(len(a.Objects), "object"), strings.Join(names, ", "))
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// NotExisting is an object of a version its CRD's previous version does
// not have: created by the upgrade, not an existing object it can hurt. A
// note of no check.
func NotExisting(crdName, version string) Finding {
	return Finding{
		Severity: Info,
		Message:  fmt.Sprintf("the previous CustomResourceDefinition %s has no version %s: a new object, not one the upgrade can hurt; not checked as one", crdName, version),
	}
}
