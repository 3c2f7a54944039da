package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-crd/kubectl-crd/internal/exitcode"
	"github.com/kubectl-crd/kubectl-crd/pkg/filter"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin"
)

// Both front ends run in one binary and share one exit-code type: the KRM
// function's errors, which it prints itself, keep their code through the
// plugin's Run (1 error results, 2 bad input, not 3 as an untyped error of
// a command's own code) and are not printed a second time.
func TestFunctionExitCodesThroughRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"error results", []string{"krm", "../../pkg/filter/testdata/missing-crd/config.yaml", "../../pkg/filter/testdata/missing-crd/input.yaml"},
			exitcode.Findings, "no CustomResourceDefinition for nowhere.example.com/v1, kind Gizmo"},
		{"bad config", []string{"krm", "testdata/no-such-config.yaml", "-"},
			exitcode.Input, "no-such-config.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := plugin.Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, tc.args, filter.NewCommand())
			stderr := errOut.String()
			if code != tc.code || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, want exit %d and nothing", code, out.String(), tc.code)
			}
			if n := strings.Count(stderr, tc.msg); n != 1 || strings.Contains(stderr, "error: ") {
				t.Errorf("stderr says %q %d times (want once, by the function, not by Run):\n%s", tc.msg, n, stderr)
			}
		})
	}
}
