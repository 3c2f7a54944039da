package document

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestKeysAlikeRefused: keys of two types that kubectl's conversion writes
// alike make what it sends change from run to run (sigs.k8s.io/yaml fills
// its map in Go's map order): the document is refused, at the key's line,
// on every run. A key written twice alike is kept as kubectl keeps it, the
// last value, with a warning.
func TestKeysAlikeRefused(t *testing.T) {
	for _, tc := range []struct {
		in, msg string
		line    int
	}{
		{"kind: A\nC9:\n  2: 7\n  \"2\": 8\n", `keys 2 (an integer) and "2" (a string) of the same mapping both become "C9.2"`, 4},
		{"kind: A\nspec:\n  x:\n  - true: a\n    \"true\": b\n", `keys true (a boolean) and "true" (a string)`, 0},
		{"kind: A\nspec:\n  1.0: a\n  1: b\n", `keys 1 (a number) and 1 (an integer)`, 0},
		{"kind: A\nspec:\n  0.1: a\n  0.10000000001: b\n", `keys 0.1 (a number) and 0.10000000001 (a number)`, 0},
		{"kind: A\n2: a\n\"2\": b\n", `both become "2"`, 3},
	} {
		for run := 0; run < 20; run++ {
			_, err := NewReader(bytes.NewReader([]byte(tc.in)), "in.yaml").Next()
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, ErrNotDetermined) || !strings.Contains(ie.Msg, tc.msg) || !strings.Contains(ie.Msg, "at random") {
				t.Fatalf("%q (run %d): %v, want an input error with %q", tc.in, run, err, tc.msg)
			}
			if tc.line > 0 && ie.Source.Line != tc.line {
				t.Fatalf("%q: line %d, want %d", tc.in, ie.Source.Line, tc.line)
			}
		}
	}
	for _, in := range []string{
		"kind: A\nspec:\n  2: a\n  2: b\n",
		"kind: A\nspec:\n  \"2\": a\n  \"2\": b\n",
		"kind: A\nspec:\n  1: a\n  \"2\": b\n  true: c\n",
	} {
		if _, err := NewReader(bytes.NewReader([]byte(in)), "in.yaml").Next(); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}
