package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Every command and output format, with stdout on /dev/full (a device whose
// writes fail with ENOSPC): the lost output is an error, exit 3.
func TestOutputWriteErrors(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	cases := [][]string{
		{"explain-structural", "-f", exampleCRD},
		{"explain-structural", "-f", exampleCRD, "-o", "yaml"},
		{"explain-structural", "-f", exampleCRD, "-o", "json"},
		{"prune", "--crd-file", exampleCRD, "-f", exampleJob},
		{"prune", "--crd-file", exampleCRD, "-f", exampleJob, "-o", "json"},
		{"prune", "--crd-file", exampleCRD, "-f", exampleJob, "--report", "-"},
		{"check-update", "--offline", "--crd-file", exampleCRD, "--old", exampleJob, "-f", exampleJob},
		{"check-update", "--offline", "--crd-file", exampleCRD, "--old", exampleJob, "-f", exampleJob, "-o", "json"},
		{"version"},
		{"completion", "bash"},
		{"--help"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			// The same run to a buffer writes something and succeeds: the failure below is the write's.
			if r := run(t, "", args...); r.code != 0 || r.stdout == "" {
				t.Fatalf("to a buffer: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			var errOut bytes.Buffer
			code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: full, ErrOut: &errOut}, args)
			want := "error: writing the output: write /dev/full: no space left on device\n"
			if code != ExitInternal || !strings.HasSuffix(errOut.String(), want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 3 and the line %q", code, errOut.String(), want)
			}
		})
	}
}

// A failed write to stderr is an error too, even when stdout is fine.
func TestStderrWriteError(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	var out bytes.Buffer
	// prune warns on stderr about what it drops.
	code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: full}, []string{"prune", "--crd-file", exampleCRD, "-f", exampleJob})
	if code != ExitInternal {
		t.Errorf("exit %d, want 3", code)
	}
}

// A panic in a command is an internal error: a message, a hint to report it,
// exit 3, not 2 (bad input) and no stack trace.
func TestPanicIsInternalError(t *testing.T) {
	boom := &cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error {
		var m map[string]int
		m["x"]++ // a runtime error: assignment to entry in nil map
		return nil
	}}
	var out, errOut bytes.Buffer
	code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, []string{"boom"}, boom)
	want := "internal error: assignment to entry in nil map\n" + panicHint + "\n"
	if code != ExitInternal || errOut.String() != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 3 and:\n%s", code, errOut.String(), want)
	}
}

// An error of a command's own code that says nothing of its exit code is an
// internal error, exit 3; cobra's own errors (unknown command, arguments)
// and typed input errors stay exit 2.
func TestUnknownErrorIsInternal(t *testing.T) {
	plain := &cobra.Command{Use: "plain", RunE: func(*cobra.Command, []string) error {
		return errors.New("something broke")
	}}
	input := &cobra.Command{Use: "input", RunE: func(*cobra.Command, []string) error {
		return fmt.Errorf("wrapped: %w", inputError(errors.New("bad file")))
	}}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"plain"}, ExitInternal, "error: something broke\n"},
		{[]string{"input"}, ExitInput, "error: wrapped: bad file\n"},
		{[]string{"no-such-command"}, ExitInput, `error: unknown command "no-such-command" for "kubectl crd"`},
		{[]string{"version", "extra"}, ExitInput, `error: unknown command "extra" for "kubectl crd version"`},
	} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, c.args, plain, input)
		if code != c.code || !strings.HasPrefix(errOut.String(), c.stderr) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", c.args, code, errOut.String(), c.code, c.stderr)
		}
	}
}
