package crdupgrade

import (
	"fmt"
	"strings"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// ObjectValidator is the server's validation of custom resources that the
// impact runs: a create, and an update with ratcheting. strategy.Validators
// is the one to use.
type ObjectValidator interface {
	prune.CreateValidator
	UpdateValidator(crd *schema.CRD, version string) (update.UpdateValidator, error)
}

// ObjectImpact is what an upgrade does to one existing object. It is a
// prune.Result (object, source, changes with reason, path, value and line;
// errors), so that one reader reads both reports:
//
//   - Changes: what the object, as stored under the old CRD, reads as under
//     the new one: the fields pruned (UnknownField, lost for good on its
//     next write), the defaults filled (Defaulted).
//   - Errors: why the server refuses to create it again under the new CRD
//     (from its manifest: another cluster, a restore) and did not under the
//     old one; Status is then prune.Invalid.
//   - Before: why the old CRD already refuses to create it (a manifest
//     of files may be invalid, an object of a cluster kept by ratcheting):
//     not the upgrade's doing.
//   - UpdateErrors: why the server refuses even an unchanged write of it
//     (a no-op update): what ratcheting does not let through, and the old
//     CRD did not refuse of the same write (an object of a file without a
//     name is refused by both).
//   - NextWrite: what its next write (any: a label, a status update)
//     drops for good beyond what reading it drops, when the new CRD stores
//     objects in another version than the one it reads in: written back,
//     it is stored in WrittenAs, and pruned there.
type ObjectImpact struct {
	prune.Result
	UpdateErrors []prune.FieldError `json:"updateErrors,omitempty"`
	Before       []prune.FieldError `json:"before,omitempty"`
	NextWrite    []prune.Change     `json:"nextWrite,omitempty"`
	WrittenAs    string             `json:"writtenAs,omitempty"`
	// ReadAs is the version the object is read in under the new CRD, when
	// the new CRD no longer serves its own (conversion None: the storage
	// version).
	ReadAs string `json:"readAs,omitempty"`
	// Unserved are the uses of the object's API in a version the old CRD
	// serves and the new one no longer does (removed, or served: false):
	// the server refuses every request in it once the new CRD is applied.
	Unserved []VersionUse `json:"unserved,omitempty"`
	// Migration is what a write of it through the preferred version does
	// (a storage-version migration's, kubectl edit's), when objects of the
	// old CRD must be rewritten (Migrates): the migration plan's, and the
	// findings of what the writes above do not say already.
	Migration *MigrationWrite `json:"migration,omitempty"`
}

// VersionUse is a use of a version of an object's API: the apiVersion of
// a manifest (an object of a file), or the version a field manager wrote
// the object in (metadata.managedFields[].apiVersion of an object of a
// cluster, whose own apiVersion is only the one it was listed in).
type VersionUse struct {
	Version string `json:"version"`
	// Removed: the new CRD has no such version; else it no longer serves it.
	Removed bool `json:"removed,omitempty"`
	// Manager is the field manager that wrote it, for an object of a
	// cluster; Operation its write (Apply, Update) and Subresource where it
	// wrote ("status"), as managedFields records them.
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	// Line is the line of the manifest's apiVersion.
	Line int `json:"line,omitempty"`
}

// Impact runs the new CRD's storage and request path on doc, an object of
// old: stored as old stores it (a no-op for an object read from a cluster),
// read back under new, created again and written back unchanged (with
// ratcheting, and to the new storage version). An error
// is an *document.InputError: the object is not one old can store.
//
// defaultNamespace is where kubectl sent an object without a namespace:
// -n, else the context's, else "default".
func Impact(doc *document.Document, old, new *schema.CRD, v ObjectValidator, defaultNamespace string) (*ObjectImpact, error) {
	ref, gv, err := document.Identify(doc)
	if err != nil {
		return nil, err
	}
	inputErr := func(err error) error {
		return &document.InputError{Source: doc.Source, Msg: err.Error(), Err: err}
	}
	imp := &ObjectImpact{Result: prune.Result{Object: ref, Source: doc.Source, Status: prune.Checked, CRD: new.Name(), Changes: []prune.Change{}}}
	stored, err := prune.Store(doc.Object, old, gv.Version, true)
	if err != nil {
		return nil, inputErr(err)
	}
	imp.Unserved = unservedUses(doc, gv, old, new)
	version, manifest := gv.Version, doc.Object
	if nv, ok := new.Version(version); !ok || !nv.Served {
		// The server keeps the data in the storage version; with conversion
		// None it reads as that version (only apiVersion changes).
		if !new.ConversionNone() || new.StorageVersion() == "" {
			return nil, inputErr(fmt.Errorf("version %q is not served by the new CustomResourceDefinition %s and a conversion webhook converts: its objects are not checked", version, new.Name()))
		}
		version = new.StorageVersion()
		imp.ReadAs = version
		apiVersion := runtimeschema.GroupVersion{Group: gv.Group, Version: version}.String()
		stored.Object["apiVersion"] = apiVersion
		manifest = copyWith(manifest, "apiVersion", apiVersion)
	}
	s, err := new.ServedSchema(version)
	if err != nil {
		return nil, inputErr(err)
	}
	read, err := prune.Coerce(stored.Object, s, new.GroupKind(), new.PreserveUnknownFields(), true)
	if err != nil {
		return nil, inputErr(fmt.Errorf("the server would fail to read this object under the new CustomResourceDefinition: %w", err))
	}
	if ch := prune.Changes(stored.Object, read, s); len(ch) > 0 {
		imp.Changes = ch
	}
	for i := range imp.Changes {
		imp.Changes[i].Line = prune.LineOf(doc, imp.Changes[i])
	}
	if err := imp.nextWrite(doc, read.Object, new, version); err != nil {
		return nil, inputErr(err)
	}

	namespace := ref.Namespace
	if namespace == "" {
		namespace = defaultNamespace // where kubectl sent it
	}
	errs, err := createErrors(manifest, new, version, namespace, v)
	if err != nil {
		return nil, inputErr(err)
	}
	before, err := createErrors(doc.Object, old, gv.Version, namespace, v)
	if err != nil {
		return nil, inputErr(err)
	}
	imp.Before = prune.FieldErrors(doc, before)
	if fresh := without(errs, before); len(fresh) > 0 {
		imp.Status, imp.Errors = prune.Invalid, prune.FieldErrors(doc, fresh)
	}
	uv, err := v.UpdateValidator(new, version)
	if err != nil {
		return nil, inputErr(err)
	}
	// As a cluster holds it: in its namespace, when the old CRD's scope
	// gave it one (a new scope changes none of the stored objects).
	held := read.Object
	if !old.ClusterScoped() {
		held = update.InNamespace(held, namespace)
	}
	if errs := uv.ValidateUpdate(held, held); len(errs) > 0 {
		// What the old CRD refuses of the same write is not the upgrade's
		// doing (an object of a file without a name): as for a create.
		ouv, err := v.UpdateValidator(old, gv.Version)
		if err != nil {
			return nil, inputErr(err)
		}
		was := stored.Object
		if imp.ReadAs != "" {
			was = copyWith(was, "apiVersion", ref.APIVersion) // as the old CRD stores it
		}
		if !old.ClusterScoped() {
			was = update.InNamespace(was, namespace)
		}
		if errs = without(errs, ouv.ValidateUpdate(was, was)); len(errs) > 0 {
			imp.UpdateErrors = prune.FieldErrors(doc, errs)
		}
	}
	if Migrates(old, new) {
		if err := imp.migrationWrite(doc, stored.Object, read.Object, new, version, !old.ClusterScoped(), namespace, v); err != nil {
			return nil, inputErr(err)
		}
	}
	return imp, nil
}

// unservedUses are the uses of doc's API in a version old serves and new
// does not. An object of a file uses the version of its apiVersion. An
// object of a cluster (no file) is listed in every version the old CRD
// serves (check-update's live scan: a client may read it in any), so its
// apiVersion says nothing of its clients; the versions its field managers
// wrote it in do (metadata.managedFields[].apiVersion, which the server
// records with every write), and are read from its listing in the first
// version old serves, so that each is named once.
func unservedUses(doc *document.Document, gv runtimeschema.GroupVersion, old, new *schema.CRD) []VersionUse {
	use := func(u VersionUse) (VersionUse, bool) {
		removed, ok := Unserved(old, new, u.Version)
		u.Removed = removed
		return u, ok
	}
	if doc.Source.File != "" {
		if u, ok := ManifestUse(doc, old, new); ok {
			return []VersionUse{u}
		}
		return nil
	}
	if gv.Version != firstServed(old) {
		return nil
	}
	var out []VersionUse
	seen := map[VersionUse]bool{}
	for _, e := range managedFields(doc.Object) {
		egv, err := runtimeschema.ParseGroupVersion(e["apiVersion"])
		if err != nil || egv.Group != gv.Group {
			continue
		}
		u, ok := use(VersionUse{Version: egv.Version, Manager: e["manager"], Operation: e["operation"], Subresource: e["subresource"]})
		if ok && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// Unserved reports whether old serves version and new does not (ok), and
// whether new removes it: a request in it is refused once new is applied.
func Unserved(old, new *schema.CRD, version string) (removed, ok bool) {
	if ov, found := old.Version(version); !found || !ov.Served {
		return false, false // not the upgrade's doing
	}
	nv, found := new.Version(version)
	return !found, !found || !nv.Served
}

// ManifestUse is the use of doc's version, an object of a file, when old
// serves it and new does not: ok false otherwise. Its line is the
// apiVersion's.
func ManifestUse(doc *document.Document, old, new *schema.CRD) (VersionUse, bool) {
	gv, err := runtimeschema.ParseGroupVersion(document.Ref(doc.Object).APIVersion)
	if err != nil {
		return VersionUse{}, false
	}
	removed, ok := Unserved(old, new, gv.Version)
	return VersionUse{Version: gv.Version, Removed: removed, Line: doc.Line(fieldpath.Path{fieldpath.Key("apiVersion")})}, ok
}

// managedFields are the string members of each entry of an object's
// metadata.managedFields.
func managedFields(obj map[string]interface{}) []map[string]string {
	meta, _ := obj["metadata"].(map[string]interface{})
	entries, _ := meta["managedFields"].([]interface{})
	var out []map[string]string
	for _, e := range entries {
		m, ok := e.(map[string]interface{})
		if !ok {
			continue
		}
		s := map[string]string{}
		for k, v := range m {
			if str, ok := v.(string); ok {
				s[k] = str
			}
		}
		out = append(out, s)
	}
	return out
}

// firstServed is the first version crd serves, in its order.
func firstServed(crd *schema.CRD) string {
	for _, v := range crd.Object.Spec.Versions {
		if v.Served {
			return v.Name
		}
	}
	return ""
}

// without are the errors of errs that known does not hold, by their words.
func without(errs, known field.ErrorList) field.ErrorList {
	seen := map[string]bool{}
	for _, e := range known {
		seen[e.Error()] = true
	}
	var out field.ErrorList
	for _, e := range errs {
		if !seen[e.Error()] {
			out = append(out, e)
		}
	}
	return out
}

// nextWrite is the write of the object as it reads (held, in version)
// back unchanged: what storing it in the new storage version drops.
func (imp *ObjectImpact) nextWrite(doc *document.Document, held map[string]interface{}, new *schema.CRD, version string) error {
	written, err := prune.Rewrite(held, new, version, true)
	if err != nil || written == nil {
		return err
	}
	s, err := new.ServedSchema(version)
	if err != nil {
		return err
	}
	for _, ch := range prune.Changes(held, written, s) {
		if ch.Reason != prune.StorageVersion {
			continue // a default read back: the read had it already
		}
		ch.Line = prune.LineOf(doc, ch)
		imp.NextWrite = append(imp.NextWrite, ch)
	}
	if len(imp.NextWrite) > 0 {
		imp.WrittenAs = written.StorageVersion
	}
	return nil
}

// createErrors are the server's refusals of creating obj, an object of crd
// in version: validated as the request decoding leaves it (pruned,
// defaulted, before the round trip through the storage version).
func createErrors(obj map[string]interface{}, crd *schema.CRD, version, namespace string, v ObjectValidator) (field.ErrorList, error) {
	created, err := prune.Store(obj, crd, version, true)
	if err != nil {
		return nil, err
	}
	decoded := created.Object
	if created.Request != nil {
		decoded = created.Request
	}
	return v.ValidateCreate(crd, version, decoded, namespace)
}

func copyWith(obj map[string]interface{}, key string, value interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	out[key] = value
	return out
}

// Affected is a change with the objects it hurts.
type Affected struct {
	Change Change
	// Objects are the objects it hurts, in the order they were added.
	Objects []document.ObjectRef
	// Counted is false for a change of no single object's content (a
	// version, a name, the CRD update refused): then it concerns them all.
	Counted bool
}

// Unexplained is an object's loss or refusal that no change accounts for:
// what the comparison missed.
type Unexplained struct {
	Path string `json:"path"`
	What string `json:"what"` // the change's reason, or the error's type
}

// Tally attributes what objects show to the changes, one object at a time
// (a live scan streams them): a pruned field to the removal of its field
// (or of preserve-unknown-fields above it), a default to the default added
// or changed, a refusal to the validation change at its path or above it.
type Tally struct {
	changes  []Change
	affected []Affected
}

// NewTally starts a tally of changes, as Compare returns them.
func NewTally(changes []Change) *Tally {
	t := &Tally{changes: changes, affected: make([]Affected, len(changes))}
	for i, ch := range changes {
		t.affected[i] = Affected{Change: ch, Counted: counted(ch.Kind)}
	}
	return t
}

// Affected are the changes with the objects each hurts, in the changes' order.
func (t *Tally) Affected() []Affected { return t.affected }

// Add attributes what imp shows to the changes, and returns what none explains.
func (t *Tally) Add(imp *ObjectImpact) []Unexplained {
	version := imp.ReadAs
	if version == "" {
		if gv, err := runtimeschema.ParseGroupVersion(imp.Object.APIVersion); err == nil {
			version = gv.Version
		}
	}
	var unexplained []Unexplained
	// Once per change and object, even where two objects have one name
	// (files may hold both).
	marked := map[int]bool{}
	markIn := func(version, path, what string, match func(Change) bool) {
		found := false
		for i, ch := range t.changes {
			if ch.Version != "" && ch.Version != version || !match(ch) {
				continue
			}
			found = true
			if !marked[i] {
				marked[i] = true
				t.affected[i].Objects = append(t.affected[i].Objects, imp.Object)
			}
		}
		if !found {
			unexplained = append(unexplained, Unexplained{Path: path, What: what})
		}
	}
	mark := func(path, what string, match func(Change) bool) { markIn(version, path, what, match) }
	for _, c := range imp.Changes {
		p := c.Segments
		switch c.Reason {
		case prune.UnknownField, prune.UnknownMetadataField, prune.NullNonNullable:
			mark(c.Path, string(c.Reason), func(ch Change) bool {
				switch ch.Kind {
				case FieldRemoved:
					return within(p, ch.Path)
				case PreserveUnknownRemoved:
					return ch.Version == "" || within(p, ch.Path)
				case NullableRemoved:
					return len(p) == len(fieldpath.Parse(ch.Path)) && within(p, ch.Path)
				}
				return false
			})
		case prune.Defaulted:
			mark(c.Path, string(c.Reason), func(ch Change) bool {
				return (ch.Kind == DefaultAdded || ch.Kind == DefaultChanged) && within(p, ch.Path)
			})
		default:
			mark(c.Path, string(c.Reason), func(Change) bool { return false })
		}
	}
	// A version no longer served that the object's manifest or one of its
	// managers uses (a stored version removed concerns every object as
	// well: any may be stored in it).
	for _, u := range imp.Unserved {
		markIn(u.Version, "apiVersion", "Unserved", func(ch Change) bool {
			return ch.Kind == VersionRemoved || ch.Kind == VersionUnserved || ch.Kind == StoredVersionRemoved
		})
	}
	// What the next write drops: the storage version lacks the field.
	for _, c := range imp.NextWrite {
		p := c.Segments
		markIn(imp.WrittenAs, c.Path, string(c.Reason), func(ch Change) bool {
			return ch.Kind == DroppedOnWrite && within(p, ch.Path)
		})
	}
	for _, errs := range [][]prune.FieldError{imp.Errors, imp.UpdateErrors} {
		for _, e := range errs {
			p := fieldpath.Parse(e.Field)
			mark(e.Field, e.Type, func(ch Change) bool {
				switch ch.Kind {
				case ScopeChanged:
					// The namespace the object has, or lacks, under the other scope.
					return e.Field == "metadata.namespace"
				case Refused:
					return refusedRule(ch, e)
				}
				// At the change's field or below it (a duplicate item of a
				// list now a set), of a type the change can cause.
				return ch.Severity == Invalid && within(p, ch.Path) && causes(ch, e.Type)
			})
		}
	}
	return unexplained
}

// causes reports whether a change can make the server's validation fail
// with errType (field.ErrorType's words): several changes at one field are
// told apart by what each refuses with.
func causes(ch Change, errType string) bool {
	switch ch.Kind {
	case RuleAdded:
		// A rule's reason chooses the type (Invalid, Forbidden, Required, Duplicate).
		return true
	case RequiredAdded:
		return errType == "Required value"
	case EnumTightened:
		return errType == "Unsupported value"
	case ListTypeChanged, MapKeysChanged:
		return errType == "Duplicate value"
	case BoundTightened:
		if ch.Keyword == "uniqueItems" {
			return errType == "Duplicate value"
		}
		return errType == "Invalid value" || errType == "Too long" || errType == "Too many" || errType == "Too short" || errType == "Too few"
	}
	// Types, patterns, formats, rules: the server says "Invalid value".
	return errType == "Invalid value"
}

// refusedRule reports whether e, an object's error, is the server's for a
// rule that does not compile, and ch the refusal of the CRD update for
// that rule, in the same words: every object's validation fails on it.
func refusedRule(ch Change, e prune.FieldError) bool {
	compileErr, ok := strings.CutPrefix(e.Detail, "rule compile error: ")
	return ok && strings.HasSuffix(ch.Path, ".rule") && strings.Contains(ch.Detail, compileErr)
}

// counted says whether a kind is about the content of objects, or about
// the version some of them use (a version removed or no longer served: the
// manifests and managers of it). A stored version removed is not: any
// object may be stored in it, which no object tells.
func counted(k Kind) bool {
	switch k {
	case VersionRemoved, VersionUnserved:
		return true
	case FieldRemoved, PreserveUnknownRemoved, NullableRemoved, DroppedOnWrite, DefaultAdded, DefaultChanged,
		TypeChanged, RequiredAdded, EnumTightened, PatternChanged, FormatChanged, BoundTightened,
		ListTypeChanged, MapKeysChanged, RuleAdded:
		return true
	}
	return false
}

// within reports whether the object's field p is at or below where the
// change's path base points: base's [*] stands for any one list index or
// map key (the server writes map keys in brackets in its errors, the prune
// changes with dots; parsed, both are one segment).
func within(p fieldpath.Path, base string) bool {
	b := fieldpath.Parse(base)
	if len(b) > len(p) {
		return false
	}
	for i, s := range b {
		if s == wildcard {
			continue
		}
		if s != p[i] {
			return false
		}
	}
	return true
}

var wildcard = fieldpath.Key("*")
