package schema

import (
	"fmt"
	"slices"
	"sort"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CRDValidator is the API server's own validation of a
// CustomResourceDefinition (decoded, defaulted, in v1): the CRD registry's
// strategy on a create, and on a rewrite of a CRD stored as
// apiextensions.k8s.io/v1beta1. strategy.Validators is the one to use (the
// server's registry code brings client-go and etcd, hence the interface).
// Each returns the errors with which the server refuses the CRD, or, when
// it accepts it, the warnings it returns with it, in its words.
type CRDValidator interface {
	ValidateCRDCreate(crd *apiextensionsv1.CustomResourceDefinition) (errs field.ErrorList, warnings []string)
	// ValidateDecodedCRDCreate is ValidateCRDCreate on the internal version
	// the decoder made of a v1 CRD (which it may change): the same errors,
	// without converting the CRD again.
	ValidateDecodedCRDCreate(crd *apiextensionsinternal.CustomResourceDefinition) (errs field.ErrorList, warnings []string)
	ValidateCRDLegacy(crd *apiextensionsv1.CustomResourceDefinition) (errs field.ErrorList, warnings []string)
}

// InvalidError is a CustomResourceDefinition the API server refuses, with
// the errors of its own validation.
type InvalidError struct {
	Name string
	Errs field.ErrorList
}

// Error is worded as the server's Invalid status: the errors of one line
// each, or several in brackets.
func (e *InvalidError) Error() string {
	name := "CustomResourceDefinition"
	if e.Name != "" {
		name += " " + e.Name
	}
	return fmt.Sprintf("%s is invalid: %v", name, e.Errs.ToAggregate())
}

// Invalid returns the errors of the API server's own validation of a CRD
// read from a file: why the server refuses it, nil when it accepts it. It
// is nil for a CRD made with NewCRD (read from a cluster): that server
// accepted it. Computed once per CRD, sorted: the server walks schema
// properties in map order, and a report must not change from run to run.
func (c *CRD) Invalid() field.ErrorList {
	c.validateOnce()
	return c.invalid
}

// Warnings are what the API server warns of when it accepts a CRD read from
// a file, in its words (unrecognized format "uint"): on a create, or for a
// CRD in apiextensions.k8s.io/v1beta1 on the rewrite of the CRD stored
// (Legacy). None when it refuses the CRD, nor for a CRD of a cluster.
// Sorted, each once, as the server sends each once (in the order it walks
// schema properties, map order).
func (c *CRD) Warnings() []string {
	c.validateOnce()
	return c.warnings
}

// validateOnce runs the server's validation of the CRD, once.
func (c *CRD) validateOnce() {
	c.invalidOnce.Do(func() {
		if c.validate != nil {
			c.invalid, c.warnings = c.validate()
			c.validate = nil // what it holds (the decoded CRD) is not needed again
			sort.SliceStable(c.invalid, func(i, j int) bool { return c.invalid[i].Error() < c.invalid[j].Error() })
			c.warnings = sortedWarnings(c.warnings)
		}
	})
}

// sortedWarnings are warnings sorted, each once, none empty.
func sortedWarnings(warnings []string) []string {
	if len(warnings) == 0 {
		return nil
	}
	return sets.List(sets.New(warnings...).Delete(""))
}

// SetAccepted records the outcome of the server's validation of a CRD
// read from a file as known, so that it does not run: the server accepts
// the CRD (Invalid is nil) with these warnings (Warnings, sorted as
// always). A cache of CRD indexes keeps that outcome from the run that
// validated the CRD (crdindex.Entry.Accepted). Nothing changes once the
// validation ran; call it before the CRD is shared.
func (c *CRD) SetAccepted(warnings []string) {
	c.invalidOnce.Do(func() {
		c.validate = nil
		c.warnings = sortedWarnings(slices.Clone(warnings))
	})
}

// InvalidErr is Invalid as an *InvalidError, nil when there is none.
func (c *CRD) InvalidErr() error {
	if errs := c.Invalid(); len(errs) > 0 {
		return &InvalidError{Name: c.Name(), Errs: errs}
	}
	return nil
}
