package strategy

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// numericFormats is the first minor whose schema validation checks that a
// number fits the type and format of its schema (k8s.io/kube-openapi of
// March 2026, in Kubernetes 1.36: pkg/validation/validate's schema
// validator passes the schema's type and format to its number validator,
// which then runs IsValueValidAgainstRange with them). Before it the type
// and format passed were empty and the check never failed: 0.1 sent where
// an int-or-string's integer branch is tried gave the branch's type error
// only, and 1.36 and later add "Checked value must be of type integer
// (default format) in ...". The version parity test measured it on the
// corpus's KServe samples, refused by every minor with one error more from
// 1.36 on.
const numericFormats kubeversion.Minor = 36

// rangeError is the words of IsValueValidAgainstRange's errors, for the
// value itself and for each numeric constraint of the schema.
var rangeError = regexp.MustCompile(`^(Checked|MultipleOf|Maximum boundary|Minimum boundary) value must be of type (integer|number)( \(default format\)| with format [a-z0-9]+) in `)

// withoutRangeErrors returns errs, the errors of the linked schema
// validation, as a server older than numericFormats returns them: without
// the errors of the range check it did not run.
func withoutRangeErrors(errs field.ErrorList) field.ErrorList {
	if kubeversion.Current().Minor >= numericFormats || len(errs) == 0 {
		return errs
	}
	out := errs[:0:0]
	for _, e := range errs {
		if !rangeError.MatchString(e.Detail) {
			out = append(out, e)
		}
	}
	return out
}
