package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"findings", &Error{Code: Findings, Silent: true}, Findings},
		{"input", &Error{Code: Input, Err: errors.New("bad file")}, Input},
		{"internal", &Error{Code: Internal, Err: errors.New("the cluster")}, Internal},
		{"wrapped", fmt.Errorf("reading: %w", &Error{Code: Internal, Err: errors.New("eof")}), Internal},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", &Error{Code: Findings})), Findings},
		{"joined", errors.Join(errors.New("other"), &Error{Code: Internal}), Internal},
		{"outermost wins", &Error{Code: Input, Err: &Error{Code: Internal}}, Input},
		{"unknown", errors.New(`unknown command "x"`), Input},
		{"unknown wrapped", fmt.Errorf("x: %w", errors.New("y")), Input},
	} {
		if got := Of(tc.err); got != tc.want {
			t.Errorf("%s: Of(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

// The codes are the documented ones: scripts and CI depend on them.
func TestCodes(t *testing.T) {
	if OK != 0 || Findings != 1 || Input != 2 || Internal != 3 {
		t.Errorf("codes %d %d %d %d, want 0 1 2 3", OK, Findings, Input, Internal)
	}
}

func TestErrorMessage(t *testing.T) {
	inner := errors.New("bad file")
	e := &Error{Code: Input, Err: inner}
	if e.Error() != "bad file" || !errors.Is(e, inner) {
		t.Errorf("%q, unwraps to inner: %v", e.Error(), errors.Is(e, inner))
	}
	if got := (&Error{Code: Findings, Silent: true}).Error(); got != "exit status 1" {
		t.Errorf("no error: %q", got)
	}
}
