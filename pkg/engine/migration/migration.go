// Package migration plans the storage-version migration a CRD upgrade
// needs when it moves the storage version: the StorageVersionMigration
// to apply (its API as the cluster's Kubernetes minor has it, or, where
// the cluster cannot run it, how to rewrite every object without it),
// what the rewrite of each existing object in the new storage version
// loses or why the server refuses it, and whether status.storedVersions
// may then be trimmed, with the patch that does it, or why not yet.
//
// The plan is guidance: what a rewrite loses or why it is refused is
// already a finding of the upgrade (crdupgrade.ObjectImpact); the plan
// says what the migration does with it.
package migration

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// Plan is the migration of the objects of one CRD upgrade.
type Plan struct {
	CRD string `json:"crd"`
	// Group and Resource are what the migration names (spec.resource).
	Group    string `json:"group"`
	Resource string `json:"resource"`
	// From are the versions objects may be stored in that the new CRD
	// does not store in; StorageVersion is the one it stores in.
	From           []string `json:"from"`
	StorageVersion string   `json:"storageVersion"`
	// Via is the version every rewrite goes through (the preferred one).
	Via string `json:"via"`
	// Kubernetes is the minor the plan is for (the server answering).
	Kubernetes string `json:"kubernetes"`
	// Migrator is the StorageVersionMigration of that minor, Enable what
	// the cluster needs to run it ("" when on by default, 1.37).
	Migrator *Migrator `json:"storageVersionMigration"`
	// Manual is the way without the migrator: read every object, write it
	// back unchanged.
	Manual string `json:"withoutMigrator"`
	// Checked counts the existing objects checked, Intact those the
	// rewrite stores whole; Objects are the others, in the order checked.
	Checked int      `json:"objectsChecked"`
	Intact  int      `json:"objectsIntact"`
	Objects []Object `json:"objects"`
	// Webhook: a conversion webhook converts, what each rewrite keeps is
	// its own; no object is predicted.
	Webhook bool `json:"conversionWebhook,omitempty"`
	Trim    Trim `json:"trim"`

	seen map[document.ObjectRef]int
}

// Migrator is a StorageVersionMigration and what it takes to run it.
type Migrator struct {
	// Object is the StorageVersionMigration to apply.
	Object map[string]interface{} `json:"object"`
	// Enable says what the cluster must enable for it, "" when nothing.
	Enable string `json:"enable,omitempty"`
	// TrimsItself: the controller trims status.storedVersions itself when
	// the migration succeeds and the CRD did not change meanwhile (1.36 on).
	TrimsItself bool `json:"trimsStoredVersions"`
}

// Object is an existing object whose rewrite loses data or is refused.
type Object struct {
	Object document.ObjectRef `json:"object"`
	Source document.Source    `json:"source"`
	// Loses are the fields the rewrite drops for good (with the values).
	Loses []prune.Change `json:"loses,omitempty"`
	// Refused is why the server refuses the rewrite: the object stays
	// stored in the version it is in.
	Refused []prune.FieldError `json:"refused,omitempty"`
}

// Trim is the verdict on trimming status.storedVersions once the
// migration has run.
type Trim struct {
	// Safe: once every object is rewritten, none is stored in From: the
	// patch may be applied, and From removed from the CRD in a later release.
	Safe bool `json:"safe"`
	// StoredVersions are status.storedVersions after the trim, Patch the
	// JSON merge patch of the CRD's status that sets them, Command the
	// kubectl command that applies it.
	StoredVersions []string `json:"storedVersions"`
	Patch          string   `json:"patch"`
	Command        string   `json:"command"`
	// Reason says why it is safe, or why not yet.
	Reason string `json:"reason"`
}

// New is the plan of an upgrade from old to new for the minor m: nil when
// no object must be rewritten (crdupgrade.Migrates).
func New(old, new *schema.CRD, m kubeversion.Minor) *Plan {
	if !crdupgrade.Migrates(old, new) {
		return nil
	}
	storage := new.StorageVersion()
	p := &Plan{CRD: new.Name(), Group: new.Object.Spec.Group, Resource: new.Object.Spec.Names.Plural,
		StorageVersion: storage, Via: crdupgrade.PreferredVersion(new), Kubernetes: m.String(),
		Objects: []Object{}, Webhook: !new.ConversionNone(), seen: map[document.ObjectRef]int{}}
	for _, v := range crdupgrade.StoredVersions(old) {
		if v != storage {
			p.From = append(p.From, v)
		}
	}
	p.Migrator = migrator(p, m)
	all := ""
	if !new.ClusterScoped() {
		all = " --all-namespaces"
	}
	// One object a line, not a List: kubectl replace maps a List's kind,
	// which a server without the core API (an apiextensions-apiserver) lacks.
	p.Manual = fmt.Sprintf(`kubectl get %s.%s%s -o jsonpath='{range .items[*]}{@}{"\n"}{end}' | kubectl replace -f -`, p.Resource, p.Group, all)
	return p
}

// migrator is the StorageVersionMigration of minor m: v1 from 1.37 (on by
// default), v1beta1 in 1.35 and 1.36, v1alpha1 before (spec.resource names
// the version too); off by default before 1.37.
func migrator(p *Plan, m kubeversion.Minor) *Migrator {
	resource := map[string]interface{}{"group": p.Group, "resource": p.Resource}
	apiVersion, enable := "storagemigration.k8s.io/v1", ""
	switch {
	case m < 35:
		apiVersion = "storagemigration.k8s.io/v1alpha1"
		resource["version"] = p.StorageVersion
	case m < 37:
		apiVersion = "storagemigration.k8s.io/v1beta1"
	}
	if m < 37 {
		enable = fmt.Sprintf("the feature gate StorageVersionMigrator=true on kube-apiserver and kube-controller-manager, and --runtime-config=%s=true on kube-apiserver (off by default in %s)", apiVersion, m)
	}
	obj := map[string]interface{}{
		"apiVersion": apiVersion,
		"kind":       "StorageVersionMigration",
		"metadata":   map[string]interface{}{"name": p.CRD + "-" + p.StorageVersion},
		"spec":       map[string]interface{}{"resource": resource},
	}
	return &Migrator{Object: obj, Enable: enable, TrimsItself: m >= 36}
}

// YAML is the StorageVersionMigration as a manifest for kubectl apply -f.
func (m *Migrator) YAML() []byte {
	b, err := yaml.Marshal(m.Object)
	if err != nil {
		panic(err) // a map of strings
	}
	return b
}

// Add counts an existing object checked (an impact of the upgrade). An
// object seen again (a cluster's, listed in another version) adds what its
// rewrite does seen from there.
func (p *Plan) Add(imp *crdupgrade.ObjectImpact) {
	m := imp.Migration
	hurt := m != nil && (len(m.Loses) > 0 || len(m.Refused) > 0)
	i, seen := p.seen[imp.Object]
	if !seen {
		p.Checked++
	}
	switch {
	case !hurt:
		if !seen {
			p.Intact++
			p.seen[imp.Object] = -1
		}
		return
	case seen && i < 0:
		p.Intact--
		fallthrough
	case !seen:
		p.Objects = append(p.Objects, Object{Object: imp.Object, Source: imp.Source})
		i = len(p.Objects) - 1
		p.seen[imp.Object] = i
	}
	o := &p.Objects[i]
	o.Loses = appendNew(o.Loses, m.Loses, func(c prune.Change) string { return c.Path })
	o.Refused = appendNew(o.Refused, m.Refused, func(e prune.FieldError) string { return e.Message })
	if len(o.Refused) > 0 {
		o.Loses = nil // nothing is written
	}
}

func appendNew[T any](to, from []T, key func(T) string) []T {
	have := map[string]bool{}
	for _, x := range to {
		have[key(x)] = true
	}
	for _, x := range from {
		if !have[key(x)] {
			to = append(to, x)
			have[key(x)] = true
		}
	}
	return to
}

// Refused counts the objects whose rewrite is refused; Losing those whose
// rewrite loses data.
func (p *Plan) Refused() (n int) {
	for _, o := range p.Objects {
		if len(o.Refused) > 0 {
			n++
		}
	}
	return n
}

// Losing counts the objects whose rewrite loses data.
func (p *Plan) Losing() int { return len(p.Objects) - p.Refused() }

// Finish decides the trim once every object is added. known says the
// objects added are all the cluster holds (the cluster's, or files given
// for them); otherwise nothing is known of the objects.
func (p *Plan) Finish(known bool) {
	p.Trim.StoredVersions = []string{p.StorageVersion}
	patch, _ := json.Marshal(map[string]interface{}{"status": map[string]interface{}{"storedVersions": p.Trim.StoredVersions}})
	p.Trim.Patch = string(patch)
	p.Trim.Command = fmt.Sprintf("kubectl patch customresourcedefinition %s --subresource=status --type=merge -p '%s'", p.CRD, patch)
	from := strings.Join(p.From, ", ")
	switch refused := p.Refused(); {
	case p.Webhook:
		p.Trim.Reason = fmt.Sprintf("a conversion webhook converts: what each rewrite keeps, and whether the server refuses it, is the webhook's; trim once the migration has rewritten every object, not before: until then objects may be stored in %s", from)
	case !known:
		p.Trim.Reason = fmt.Sprintf("no existing objects checked: objects may be stored in %s that the rewrite cannot store; check them (--objects, or against the cluster)", from)
	case refused > 0:
		stay := "stays"
		if refused > 1 {
			stay = "stay"
		}
		p.Trim.Reason = fmt.Sprintf("the server refuses the rewrite of %s, which %s stored in %s (a StorageVersionMigration fails at the first, and leaves the objects after it unmigrated); fix them, migrate again, then trim", count(refused, "object"), stay, from)
	default:
		p.Trim.Safe = true
		p.Trim.Reason = fmt.Sprintf("every object checked is rewritten as %s: once the migration has succeeded, none is stored in %s", p.StorageVersion, from)
	}
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
