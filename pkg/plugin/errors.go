package plugin

import (
	"fmt"
	"io"

	"github.com/kubectl-crd/kubectl-crd/internal/exitcode"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
)

// Exit codes of every command: exitcode's, shared with the KRM function.
const (
	ExitOK       = exitcode.OK       // nothing found
	ExitFindings = exitcode.Findings // the server would drop, refuse or change something
	ExitInput    = exitcode.Input    // usage error or bad input
	ExitInternal = exitcode.Internal // cluster or internal error
)

// ExitError carries the exit code for an error: exitcode.Error, the one
// type of both front ends. Silent errors have already been reported
// (findings are printed as they are found).
type ExitError = exitcode.Error

func usageErrorf(format string, args ...interface{}) error {
	return &ExitError{Code: ExitInput, Err: fmt.Errorf(format, args...)}
}

func inputError(err error) error {
	return &ExitError{Code: ExitInput, Err: err}
}

// inputErrors prints every error but the last on errOut and returns the
// last as an input error, for main to print: all of them get fixed at once.
// Nil when errs is empty.
func inputErrors(errOut io.Writer, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	for _, err := range errs[:len(errs)-1] {
		fmt.Fprintf(errOut, "error: %s\n", printable.Error(err))
	}
	return inputError(errs[len(errs)-1])
}

// findings is returned when a command printed findings: exit 1, nothing more to say.
var errFindings = &ExitError{Code: ExitFindings, Silent: true}

// ExitCode maps an error returned by a command to the process exit code
// (exitcode.Of). Errors of unknown type are cobra's usage errors (unknown
// flag, wrong arguments) and count as usage errors: Run makes the untyped
// errors of the commands' own code internal errors (internalErrors).
func ExitCode(err error) int { return exitcode.Of(err) }
