package plugin

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes of every command.
const (
	ExitOK       = 0 // nothing found
	ExitFindings = 1 // the server would drop, refuse or change something
	ExitInput    = 2 // usage error or bad input
	ExitInternal = 3 // cluster or internal error
)

// ExitError carries the exit code for an error. Silent errors have already
// been reported (findings are printed as they are found).
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

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
		fmt.Fprintf(errOut, "error: %v\n", err)
	}
	return inputError(errs[len(errs)-1])
}

// findings is returned when a command printed findings: exit 1, nothing more to say.
var errFindings = &ExitError{Code: ExitFindings, Silent: true}

// ExitCode maps an error returned by a command to the process exit code.
// Errors of unknown type are cobra's usage errors (unknown flag, wrong
// arguments) and count as usage errors: Run makes the untyped errors of the
// commands' own code internal errors (internalErrors).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	// Errors of commands added from elsewhere (the KRM function) may carry their code.
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return ExitInput
}
