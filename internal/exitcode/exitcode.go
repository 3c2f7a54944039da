// Package exitcode is the one exit-code model of both front ends, the
// plugin's commands and the KRM function: an error carries its exit code
// in an *Error, and Of maps any error a command returns to the process's
// exit code.
package exitcode

import (
	"errors"
	"fmt"
)

// The exit codes of every command, the plugin's and the KRM function's.
const (
	// OK: nothing found, the run is clean.
	OK = 0
	// Findings: the server would drop, refuse or change something (the
	// KRM function: results of error severity).
	Findings = 1
	// Input: a usage error or bad input (a flag, a file, a config, an item).
	Input = 2
	// Internal: the cluster's error or an internal one (a bug, a failed
	// write to stdout or stderr).
	Internal = 3
)

// Error carries the exit code for an error. A Silent error has been
// reported already (findings are printed as they are found, the KRM
// function's framework prints its error): nothing more is printed of it.
type Error struct {
	Code   int
	Err    error
	Silent bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode is e.Code, for code that sees only an error (as exec.ExitError
// has it); Of is what maps an error to its code.
func (e *Error) ExitCode() int { return e.Code }

// Of maps an error returned by a command to the process exit code: nil is
// OK, an *Error (wrapped or not) its Code. Errors of unknown type are
// cobra's usage errors (unknown flag, wrong arguments) and count as usage
// errors, Input: the plugin makes the untyped errors of the commands' own
// code internal errors before they get here.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Input
}
