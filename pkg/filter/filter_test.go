package filter

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var update = flag.Bool("update", false, "write expected.yaml from the function's output (then review it)")

// The golden cases of testdata/<case>: config.yaml and input.yaml in,
// expected.yaml (output and results) or errors.txt out.
func TestGolden(t *testing.T) {
	c := frameworktestutil.CommandResultsChecker{
		Command:                  NewCommand,
		UpdateExpectedFromActual: *update,
	}
	c.Assert(t)
	if len(c.TestCasesRun()) < 3 {
		t.Errorf("ran %d cases", len(c.TestCasesRun()))
	}
}

// A function must be idempotent: run again on its own output (the items of
// expected.yaml), it changes nothing.
func TestIdempotent(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/expected.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no expected.yaml: %v", err)
	}
	for _, expected := range dirs {
		dir := filepath.Dir(expected)
		config, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		first, err := os.ReadFile(expected)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(first)}).Read()
		if err != nil {
			t.Fatalf("%s: %v", expected, err)
		}
		rl := &framework.ResourceList{Items: nodes}
		if rl.FunctionConfig, err = yaml.Parse(string(config)); err != nil {
			t.Fatal(err)
		}
		if err := (Processor{}).Process(rl); err != nil {
			t.Fatalf("%s: second run: %v", dir, err)
		}
		for _, r := range rl.Results {
			if r.Tags["finding"] == FindingPrune {
				t.Errorf("%s: the second run still prunes: %s", dir, r.Message)
			}
		}
	}
}

// Standalone, an error result leaves stdout empty, so that a pipe into
// kubectl apply applies nothing; the results make the error (exit 1).
func TestStandaloneErrorWritesNothing(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := NewCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"testdata/missing-crd/config.yaml", "testdata/missing-crd/input.yaml"})
	err := cmd.Execute()
	var coded interface{ ExitCode() int }
	if !errors.As(err, &coded) || coded.ExitCode() != 1 {
		t.Fatalf("error %v, want one with exit code 1", err)
	}
	if out.Len() != 0 {
		t.Errorf("stdout:\n%s", out.String())
	}
	if !strings.Contains(err.Error(), "no CustomResourceDefinition for nowhere.example.com/v1, kind Gizmo") {
		t.Errorf("error: %v", err)
	}

	// Without error results, the objects are written.
	out.Reset()
	cmd = NewCommand()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"testdata/prune/config.yaml", "testdata/prune/input.yaml"})
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "# the widget of team a") || strings.Contains(out.String(), "colour") {
		t.Errorf("error %v, stdout:\n%s", err, out.String())
	}
}
