package crdupgrade

import (
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// crd compares what the CRD says of all its versions: scope, group, names,
// conversion, pruning.
func (c *comparison) crd() {
	o, n := c.old.CRD.Object.Spec, c.new.CRD.Object.Spec
	if o.Scope != n.Scope {
		// Every client's URLs change, and stored objects keep their keys.
		c.add(Change{Kind: ScopeChanged, Severity: Breaking, Path: "spec.scope", Old: string(o.Scope), New: string(n.Scope)})
	}
	if o.Group != n.Group {
		c.add(Change{Kind: GroupChanged, Severity: Breaking, Path: "spec.group", Old: o.Group, New: n.Group})
	}
	names := []struct {
		key      string
		old, new string
		severity Severity
	}{
		{"kind", o.Names.Kind, n.Names.Kind, Breaking},
		{"plural", o.Names.Plural, n.Names.Plural, Breaking},
		{"listKind", o.Names.ListKind, n.Names.ListKind, Breaking},
		// kubectl and scripts use it; the API does not.
		{"singular", o.Names.Singular, n.Names.Singular, Warning},
	}
	for _, nm := range names {
		if nm.old != nm.new {
			c.add(Change{Kind: NameChanged, Severity: nm.severity, Path: "spec.names." + nm.key, Keyword: nm.key, Old: nm.old, New: nm.new})
		}
	}
	for _, s := range missing(o.Names.ShortNames, n.Names.ShortNames) {
		c.add(Change{Kind: NameRemoved, Severity: Warning, Path: "spec.names.shortNames", Keyword: "shortNames", Old: s})
	}
	for _, s := range missing(o.Names.Categories, n.Names.Categories) {
		c.add(Change{Kind: NameRemoved, Severity: Warning, Path: "spec.names.categories", Keyword: "categories", Old: s})
	}
	if oc, nc := conversionStrategy(o.Conversion), conversionStrategy(n.Conversion); oc != nc {
		c.add(Change{Kind: ConversionChanged, Severity: Warning, Path: "spec.conversion.strategy", Old: oc, New: nc})
	}
	if o.PreserveUnknownFields && !n.PreserveUnknownFields {
		// Pruning starts: every field no schema names goes, in every version.
		c.add(Change{Kind: PreserveUnknownRemoved, Severity: DataLoss, Path: "spec.preserveUnknownFields", Old: true, New: false})
	}
}

func conversionStrategy(conv *apiextensionsv1.CustomResourceConversion) string {
	if conv == nil || conv.Strategy == "" {
		return string(apiextensionsv1.NoneConverter)
	}
	return string(conv.Strategy)
}

// missing lists the elements of old not in new, in old's order.
func missing(old, new []string) []string {
	in := map[string]bool{}
	for _, s := range new {
		in[s] = true
	}
	var out []string
	for _, s := range old {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

// versions compares the versions: added, removed, served, storage,
// subresources, and the schema of each version both have.
func (c *comparison) versions() {
	stored := map[string]bool{}
	for _, v := range StoredVersions(c.old.CRD) {
		stored[v] = true
	}
	oldStorage, newStorage := c.old.CRD.StorageVersion(), c.new.CRD.StorageVersion()
	oldMarkers, newMarkers := c.old.markers(), c.new.markers()
	oldViolations, newViolations := structuralByVersion(c.old.CRD.Object, c.old.CRD.Violations()), structuralByVersion(c.new.CRD.Object, c.new.CRD.Violations())
	for _, ov := range c.old.CRD.Object.Spec.Versions {
		name := ov.Name
		path := "spec.versions[" + name + "]"
		nv, ok := c.new.CRD.Version(name)
		switch {
		case !ok && stored[name]:
			// The server refuses it (status.storedVersions): objects may
			// still be stored in this version.
			c.add(Change{Kind: StoredVersionRemoved, Severity: Breaking, Version: name, Path: path})
			continue
		case !ok && ov.Served:
			c.add(Change{Kind: VersionRemoved, Severity: Breaking, Version: name, Path: path})
			continue
		case !ok:
			c.add(Change{Kind: VersionRemoved, Severity: Info, Version: name, Path: path})
			continue
		}
		if ov.Served && !nv.Served {
			c.add(Change{Kind: VersionUnserved, Severity: Breaking, Version: name, Path: path + ".served", Old: true, New: false})
		}
		if !ov.Served && nv.Served {
			c.add(Change{Kind: VersionServed, Severity: Info, Version: name, Path: path + ".served", Old: false, New: true})
		}
		if !ov.Deprecated && nv.Deprecated {
			c.add(Change{Kind: VersionDeprecated, Severity: Info, Version: name, Path: path + ".deprecated", Old: false, New: true})
		}
		c.subresources(name, path, ov.Subresources, nv.Subresources)
		if len(oldViolations[name]) == 0 && len(newViolations[name]) > 0 {
			c.add(Change{Kind: NonStructural, Severity: Breaking, Version: name, Path: newViolations[name][0].Field, Detail: newViolations[name][0].ErrorBody()})
		}
		// Where objects are stored in this version (or will be), what the
		// schema drops is lost for good on their next write; elsewhere the
		// clients of the version stop seeing it.
		loss := Info
		switch {
		case stored[name] || name == newStorage:
			loss = DataLoss
		case nv.Served:
			loss = Breaking
		}
		w := &walker{c: c, version: name, loss: loss}
		w.props("", schemaOf(&ov), schemaOf(nv))
		if oldMarkers != nil && newMarkers != nil {
			// Without the old document (a CRD of a cluster: the server
			// dropped them) the old markers are unknown.
			w.markers("", oldMarkers[name], newMarkers[name])
		}
	}
	for _, nv := range c.new.CRD.Object.Spec.Versions {
		if _, ok := c.old.CRD.Version(nv.Name); !ok {
			c.add(Change{Kind: VersionAdded, Severity: Info, Version: nv.Name, Path: "spec.versions[" + nv.Name + "]"})
		}
	}
	if oldStorage != newStorage {
		// Objects stay stored in the old version until rewritten: a storage
		// migration must rewrite them before the old version can go.
		c.add(Change{Kind: StorageMoved, Severity: Warning, Version: newStorage, Path: "spec.versions[" + newStorage + "].storage", Old: oldStorage, New: newStorage})
	}
	c.droppedOnWrite(stored, newStorage)
}

// droppedOnWrite names the fields objects stored in another version than
// the new storage one lose on their next write: the storage codec converts
// them to newStorage (conversion None: only apiVersion changes) and prunes
// what its schema lacks. Each stored version's schema, as the new CRD has
// it (the one objects of it read with), is compared with newStorage's.
// With a conversion webhook, what it keeps is the webhook's to say.
func (c *comparison) droppedOnWrite(stored map[string]bool, newStorage string) {
	to, ok := c.new.CRD.Version(newStorage)
	if !ok || !c.new.CRD.ConversionNone() {
		return
	}
	var versions []string
	for v := range stored {
		if v != newStorage {
			versions = append(versions, v)
		}
	}
	sort.Strings(versions)
	seen := map[string]bool{}
	for _, name := range versions {
		from, ok := c.new.CRD.Version(name)
		if !ok {
			continue // a stored version removed: StoredVersionRemoved says so
		}
		// Only what the write prunes: a walk of the two versions' schemas
		// whose other differences are no change of the CRD.
		scratch := &comparison{}
		w := &walker{c: scratch, version: newStorage, loss: DataLoss}
		w.props("", schemaOf(from), schemaOf(to))
		for _, ch := range scratch.out {
			lost := ch.Severity == DataLoss && (ch.Kind == FieldRemoved || ch.Kind == PreserveUnknownRemoved)
			if !lost || seen[ch.Path] {
				continue
			}
			seen[ch.Path] = true
			c.add(Change{Kind: DroppedOnWrite, Severity: DataLoss, Version: newStorage, Path: ch.Path, Keyword: ch.Keyword, Old: name, New: newStorage})
		}
	}
}

func schemaOf(v *apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.JSONSchemaProps {
	if v.Schema == nil {
		return nil
	}
	return v.Schema.OpenAPIV3Schema
}

// structuralByVersion sorts the NonStructuralSchema violations by the
// version whose schema they are in (spec.versions[i]...).
func structuralByVersion(crd *apiextensionsv1.CustomResourceDefinition, errs field.ErrorList) map[string]field.ErrorList {
	out := map[string]field.ErrorList{}
	for i, v := range crd.Spec.Versions {
		prefix := field.NewPath("spec", "versions").Index(i).String() + "."
		for _, e := range errs {
			if strings.HasPrefix(e.Field, prefix) {
				out[v.Name] = append(out[v.Name], e)
			}
		}
	}
	return out
}

func (c *comparison) subresources(version, path string, o, n *apiextensionsv1.CustomResourceSubresources) {
	has := func(s *apiextensionsv1.CustomResourceSubresources) (status, scale bool) {
		return s != nil && s.Status != nil, s != nil && s.Scale != nil
	}
	oStatus, oScale := has(o)
	nStatus, nScale := has(n)
	switch {
	case oStatus && !nStatus:
		// Controllers writing to /status get 404; writes of the main
		// resource now set status.
		c.add(Change{Kind: SubresourceRemoved, Severity: Breaking, Version: version, Path: path + ".subresources.status", Keyword: "status"})
	case !oStatus && nStatus:
		// Writes of the main resource now ignore status.
		c.add(Change{Kind: SubresourceAdded, Severity: Warning, Version: version, Path: path + ".subresources.status", Keyword: "status"})
	}
	switch {
	case oScale && !nScale:
		c.add(Change{Kind: SubresourceRemoved, Severity: Breaking, Version: version, Path: path + ".subresources.scale", Keyword: "scale"})
	case !oScale && nScale:
		c.add(Change{Kind: SubresourceAdded, Severity: Info, Version: version, Path: path + ".subresources.scale", Keyword: "scale"})
	}
}
