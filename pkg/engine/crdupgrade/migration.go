package crdupgrade

import (
	"sort"

	"k8s.io/apimachinery/pkg/version"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// MigrationWrite is what the storage-version migration's write of one
// object does under the new CRD. Every way to migrate writes each object
// back unchanged through the version a client gets by default, the
// preferred one (Via): the StorageVersionMigration controller (a
// server-side apply of apiVersion, kind, uid and resourceVersion alone),
// kube-storage-version-migrator, `kubectl get -o json | kubectl replace`.
// The server reads the object in Via, validates the write there (an
// unchanged update: ratcheting lets through what is unchanged, not what a
// transition rule refuses) and stores it as StoredAs, pruned by that
// version's schema.
type MigrationWrite struct {
	Via      string `json:"via"`
	StoredAs string `json:"storedAs"`
	// Loses are the fields the object has as stored before the upgrade
	// and no longer has once rewritten (Reason StorageVersion); Defaulted
	// the defaults the rewrite stores. Both empty when refused.
	Loses     []prune.Change `json:"loses,omitempty"`
	Defaulted []prune.Change `json:"defaulted,omitempty"`
	// Refused is why the server refuses the write: the object stays
	// stored in the version it is in.
	Refused []prune.FieldError `json:"refused,omitempty"`
	// Stored is the object as the rewrite stores it (apiVersion StoredAs).
	Stored map[string]interface{} `json:"-"`
}

// Migrates reports whether objects of old must be rewritten once new
// replaces it: a version old may store objects in (StoredVersions) is not
// new's storage version.
func Migrates(old, new *schema.CRD) bool {
	storage := new.StorageVersion()
	for _, v := range StoredVersions(old) {
		if v != storage {
			return true
		}
	}
	return false
}

// PreferredVersion is the version of crd a client reads and writes when
// it names none (discovery's preferred version): the highest served one
// in Kubernetes' version order (v1 > v1beta2 > v1beta1 > v1alpha1).
func PreferredVersion(crd *schema.CRD) string {
	var served []string
	for _, v := range crd.Versions() {
		if cv, _ := crd.Version(v); cv.Served {
			served = append(served, v)
		}
	}
	sort.SliceStable(served, func(i, j int) bool {
		return version.CompareKubeAwareVersionStrings(served[i], served[j]) > 0
	})
	if len(served) == 0 {
		return ""
	}
	return served[0]
}

// migrationWrite computes imp.Migration: stored is the object as the old
// CRD stores it, read as the new CRD reads it in version (read), held in
// namespace. With a conversion webhook what the write keeps is the
// webhook's: none is computed.
func (imp *ObjectImpact) migrationWrite(doc *document.Document, stored, read map[string]interface{}, new *schema.CRD, version string, namespaced bool, namespace string, v ObjectValidator) error {
	via, storage := PreferredVersion(new), new.StorageVersion()
	if via == "" || storage == "" || !new.ConversionNone() {
		return nil
	}
	gk, puf := new.GroupKind(), new.PreserveUnknownFields()
	obj := read
	if via != version {
		s, err := new.ServedSchema(via)
		if err != nil {
			return err
		}
		c, err := prune.Coerce(copyWith(read, "apiVersion", gk.Group+"/"+via), s, gk, puf, false)
		if err != nil {
			return err
		}
		obj = c.Object
	}
	m := &MigrationWrite{Via: via, StoredAs: storage}
	imp.Migration = m
	uv, err := v.UpdateValidator(new, via)
	if err != nil {
		return err
	}
	held := obj
	if namespaced {
		held = update.InNamespace(held, namespace)
	}
	if errs := uv.ValidateUpdate(held, held); len(errs) > 0 {
		m.Refused = prune.FieldErrors(doc, errs)
		return nil
	}
	m.Stored = copyWith(obj, "apiVersion", gk.Group+"/"+storage)
	if storage != via {
		ss, err := new.VersionSchema(storage)
		if err != nil {
			return err
		}
		c, err := prune.Coerce(m.Stored, ss, gk, puf, false)
		if err != nil {
			return err
		}
		m.Stored = c.Object
	}
	m.Loses, m.Defaulted = contentDiff(doc, stored, m.Stored)
	return nil
}

// contentDiff are the fields of before that after lacks, and those after
// adds, but for apiVersion, kind and metadata (which the write keeps), by
// path, with their lines in doc.
func contentDiff(doc *document.Document, before, after map[string]interface{}) (lost, added []prune.Change) {
	prune.Diff(content(before), content(after), func(p fieldpath.Path, a prune.Action, old, new interface{}) {
		switch a {
		case prune.Removed:
			lost = append(lost, prune.Change{Path: p.String(), Segments: p, Reason: prune.StorageVersion, Action: a, Value: old})
		case prune.Added:
			added = append(added, prune.Change{Path: p.String(), Segments: p, Reason: prune.Defaulted, Action: a, NewValue: new})
		}
	})
	for i := range lost {
		lost[i].Line = prune.LineOf(doc, lost[i])
	}
	for i := range added {
		added[i].Line = prune.LineOf(doc, added[i])
	}
	return lost, added
}

// content is obj without what a write of it keeps: apiVersion, kind, metadata.
func content(obj map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(obj))
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			out[k] = v
		}
	}
	return out
}
