package report

import (
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// NoteRule is the rule of the findings of no check: notes on the inputs
// and on what a check left undone, which never fail a run.
const NoteRule = "Note"

// TestCaseRule is the rule of kubectl crd test's results: a case whose
// outcome is not the one expected, a case without an expectation, a rule
// no case exercises. It is no check of finding.Checks: --fail-on does not
// name it, a test run fails on its cases.
const TestCaseRule = string(finding.TestCase)

// Rule is what a report says of a check: SARIF's reportingDescriptor.
type Rule struct {
	ID    string
	Short string // a line
	Help  string // what it means and what to do
}

// Anchor is the rule's heading in docs/reports.md.
func (r Rule) Anchor() string { return strings.ToLower(r.ID) }

// HelpURI is the rule's section of docs/reports.md, at the docs of tool's
// version.
func (r Rule) HelpURI(tool Tool) string {
	return strings.TrimSuffix(tool.InformationURI, "/") + "/blob/" + tool.docsRef() + "/docs/reports.md#" + r.Anchor()
}

// Rules are every check's rule, in the order of finding.Checks, then Note
// and TestCase.
var Rules = []Rule{
	{string(finding.Prune), "The API server would drop or change a field of the object when it stores it",
		"Pruning of fields the schema does not specify, unknown metadata fields, nulls of non-nullable fields, status under the status subresource, " +
			"the namespace of a cluster-scoped kind, fields the storage version lacks, metadata normalization and defaults. " +
			"Remove the field from the manifest, or add it to the CRD's schema. Fails a run with --fail-on-prune (--fail-on Prune)."},
	{string(finding.NonStructural), "The API server would refuse the CustomResourceDefinition",
		"Its schema is not structural (KEP \"structural schemas\"), or the server's validation of CustomResourceDefinitions refuses it: " +
			"the server's own words and field paths. Fix the schema before applying the CRD."},
	{string(finding.Update), "The API server, or a mutability marker, would refuse the update",
		"The server's update validation (schema with ratcheting, CEL transition rules such as self == oldSelf, metadata) or the markers of " +
			"KEP \"Immutable fields\" (x-kubernetes-mutability, x-kubernetes-key-mutability) refuse the change from the old object to the new one; " +
			"as a warning, a marker placed where the KEP gives it no meaning."},
	{string(finding.MissingCRD), "No CustomResourceDefinition defines the object's kind: it is not checked",
		"Give the CRD with --crd-file (or the cluster), fix a typo in apiVersion or kind, or pass --ignore-missing-crds " +
			"when the repository checks only some of its kinds."},
	{string(finding.Invalid), "The API server's validation would refuse the object",
		"The schema, x-kubernetes-validations CEL rules, metadata and list types, in the server's words. After a CRD upgrade: " +
			"an existing object that a create of it again, or even an unchanged update, would be refused under the new CRD."},
	{string(finding.Breaking), "A CRD upgrade the server refuses, or that breaks its clients",
		"The server's own CRD update validation refuses it, or a version, a name, the scope or the group changes so that clients of the old CRD break."},
	{string(finding.DataLoss), "A CRD upgrade makes the server drop data of existing objects",
		"A field removed from the schema, preserve-unknown-fields turned off, or a storage version that lacks a field: existing objects lose it " +
			"when read, or on their next write. The objects hurt are listed."},
	{string(finding.CRDChange), "A change of a CRD upgrade that loses nothing",
		"Listed for the record: a version added, a default added, an enum loosened; a warning where clients may notice (a new default an existing object reads with)."},
	{string(finding.CRDWarning), "The API server would warn of the CustomResourceDefinition",
		"What the server warns of when it accepts the CRD, in its words, or an apiVersion no server serves (apiextensions.k8s.io/v1beta1)."},
	{string(finding.Deprecated), "The object is of a version its CustomResourceDefinition deprecates",
		"The API server answers every request for a deprecated version (deprecated: true) with a warning: the version's deprecationWarning, " +
			"else its own text naming the newest served version that is not deprecated. Move the manifest to that version before the CRD stops " +
			"serving this one. A warning unless --fail-on names Deprecated."},
	{NoteRule, "A note on the inputs, or on what a check left undone",
		"A CRD defined twice, a storage version reached through a conversion webhook (not computed), a List written again without its comments, " +
			"a duplicate key or a line kubectl's reader drops, an object of a version the previous CRD lacks. Never fails a run."},
	{TestCaseRule, "A case of a test suite whose outcome is not the one expected",
		"kubectl crd test: the API server's code allows or refuses the case's object otherwise than the case expects, with other errors, " +
			"or prunes or defaults other fields; the message says what differs, expected against observed. A note for a case without " +
			"an expectation (--record writes what it observed), and with --coverage a rule or marker no case's object was refused by " +
			"(an error with --coverage=error)."},
}

// ruleIndex is the index of id in Rules (-1: none).
func ruleIndex(id string) int {
	for i, r := range Rules {
		if r.ID == id {
			return i
		}
	}
	return -1
}
