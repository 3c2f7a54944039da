package filter

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

var updateGolden = flag.Bool("update", false, "write expected.yaml, errors.txt and results.yaml from the function's output (then review them)")

// The golden cases of testdata/<case>: config.yaml and input.yaml in,
// expected.yaml (the output) or errors.txt (the lines of the error) out.
// Every case runs twice: a function must be idempotent.
func TestGolden(t *testing.T) {
	c := frameworktestutil.CommandResultsChecker{
		Command:                  twice,
		UpdateExpectedFromActual: *updateGolden,
		ErrorAssertionFunc:       requireEachLine,
	}
	c.Assert(t)
	if len(c.TestCasesRun()) < 7 {
		t.Errorf("ran %d cases", len(c.TestCasesRun()))
	}
}

// twice is the function's command run twice: on success, the second run
// reads the first one's output and must write it back unchanged; on
// error, the second run reads the same input and must fail the same way.
func twice() *cobra.Command {
	run := func(args []string) (string, string) {
		var out, errOut bytes.Buffer
		cmd := NewCommand()
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		_ = cmd.Execute()
		return out.String(), errOut.String()
	}
	return &cobra.Command{
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errOut := run(args)
			var out2, errOut2 string
			if errOut != "" {
				out2, errOut2 = run(args)
			} else {
				f, err := os.CreateTemp("", "first-run-*.yaml")
				if err != nil {
					return err
				}
				defer os.Remove(f.Name())
				if _, err := f.WriteString(out); err != nil {
					return err
				}
				f.Close()
				out2, errOut2 = run([]string{args[0], f.Name()})
			}
			fmt.Fprint(cmd.OutOrStdout(), out2)
			fmt.Fprint(cmd.ErrOrStderr(), errOut2)
			if out2 != out || errOut2 != errOut {
				fmt.Fprintf(cmd.ErrOrStderr(), "\nnot idempotent: the second run differs from the first (-first +second):\n%s%s", cmp.Diff(out, out2), cmp.Diff(errOut, errOut2))
			}
			return nil
		},
	}
}

// requireEachLine wants every line of errors.txt, literally, as a line of
// the error output (frameworktestutil's default reads them as regular
// expressions, which field paths with brackets are not).
func requireEachLine(t *testing.T, expected, actual string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(actual, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, want := range strings.Split(strings.TrimSpace(expected), "\n") {
		if !lines[strings.TrimSpace(want)] {
			t.Errorf("the error output lacks the line\n  %s\nit is:\n%s", want, actual)
		}
	}
}

// The results of every case, as kustomize and kpt receive them in the
// ResourceList (severity, resource, field, file): testdata/<case>/results.yaml.
func TestGoldenResults(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/config.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, config := range dirs {
		dir := filepath.Dir(config)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Chdir(dir)
			got := resultsOf(t)
			if *updateGolden {
				if err := os.WriteFile("results.yaml", []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile("results.yaml")
			if err != nil {
				t.Fatalf("%v (go test ./pkg/filter -update writes it)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("results.yaml (-want +got):\n%s", d)
			}
		})
	}
}

// resultsOf runs the processor on config.yaml and input.yaml of the
// current directory and returns its results as YAML.
func resultsOf(t *testing.T) string {
	t.Helper()
	config, err := os.ReadFile("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	input, err := os.ReadFile("input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input)}
	items, err := rw.Read()
	if err != nil {
		t.Fatal(err)
	}
	rl := &framework.ResourceList{Items: items}
	if rl.FunctionConfig, err = yaml.Parse(string(config)); err != nil {
		t.Fatal(err)
	}
	perr := (Processor{}).Process(rl)
	var results framework.Results
	if perr != nil && !errors.As(perr, &results) {
		return "error: " + perr.Error() + "\n"
	}
	if len(rl.Results) == 0 {
		return "[]\n"
	}
	b, err := yaml.Marshal(rl.Results)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// findingResults are the results of a run but the last, which says which
// minor gave the verdicts (answerResult): checked to be the one answering
// now, then left out.
func findingResults(t *testing.T, results framework.Results) framework.Results {
	t.Helper()
	n := len(results)
	if n == 0 || !cmp.Equal(results[n-1], answerResult(kubeversion.Current())) {
		t.Fatalf("the last result does not say which minor answered: %v", results)
	}
	return results[:n-1]
}

// The run's last result says which minor gave its verdicts, and how, as
// it is when the run is over: an older minor emulated by the embedded
// code, or the embedded one by its own code; errors or not.
func TestResultsSayWhichMinorAnswered(t *testing.T) {
	t.Cleanup(func() {
		if _, err := kubeversion.Use(kubeversion.Embedded); err != nil {
			t.Error(err)
		}
	})
	for _, m := range []kubeversion.Minor{kubeversion.Oldest, kubeversion.Embedded} {
		answer, err := kubeversion.Use(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "apiVersion: typo.example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n"} {
			nodes, err := (&kio.ByteReader{Reader: strings.NewReader(item)}).Read()
			if err != nil {
				t.Fatal(err)
			}
			rl := &framework.ResourceList{Items: nodes}
			if rl.FunctionConfig, err = yaml.Parse("apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nkubeVersion: \"" + m.String() + "\"\n"); err != nil {
				t.Fatal(err)
			}
			perr := (Processor{}).Process(rl)
			last := rl.Results[len(rl.Results)-1]
			tags := map[string]string{"kubernetes.version": m.String(), "kubernetes.emulated": strconv.FormatBool(m != kubeversion.Embedded), "kubernetes.by": "kube-apiserver " + answer.Code}
			if m != kubeversion.Embedded {
				tags["kubernetes.compatibilityVersion"] = (m - 1).String()
			}
			for i, d := range answer.Differences() {
				tags["kubernetes.differences."+strconv.Itoa(i)] = d
			}
			if last.Severity != framework.Info || last.Message != answer.Verdicts() || !cmp.Equal(last.Tags, tags) || last.ResourceRef != nil {
				t.Errorf("%s, %d results (failed: %v): the last %+v, want the info %q tagged %v", m, len(rl.Results), perr != nil, last, answer.Verdicts(), tags)
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

// The config: paths as a string or a list, failOn checked, defaults.
func TestReadConfig(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   *CRDCheck
		err    string
	}{
		{config: "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\n", want: &CRDCheck{APIVersion: APIVersion, Kind: Kind, FailOn: DefaultFailOn}},
		{config: "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nprevious: applied/\ncrdPaths: [a.yaml, crds/]\nfailOn: []\n",
			want: &CRDCheck{APIVersion: APIVersion, Kind: Kind, Previous: Paths{"applied/"}, CRDPaths: Paths{"a.yaml", "crds/"}, FailOn: []string{}}},
		{config: "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nfailOn: [Updates]\n", err: `unknown finding "Updates"`},
		{config: "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nprevious: {a: b}\n", err: "want a path or a list of paths"},
		{config: "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nprevous: a\n", err: `unknown field "prevous"`},
		{config: "apiVersion: v1\nkind: ConfigMap\n", err: "want apiVersion crd.kubectl.dev/v1alpha1, kind CRDCheck"},
		{config: "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nsourceCertificateAuthority: ca.pem\nsourceClientCertificate: c.crt\nsourceClientKey: c.key\nsourceInsecureSkipTLSVerify: true\nsourcePlainHTTP: true\n",
			want: &CRDCheck{APIVersion: APIVersion, Kind: Kind, FailOn: DefaultFailOn, SourceCertificateAuthority: "ca.pem", SourceClientCertificate: "c.crt",
				SourceClientKey: "c.key", SourceInsecureSkipTLSVerify: true, SourcePlainHTTP: true}},
		{config: "apiVersion: crd.kubectl.dev/v1alpha1\nkind: CRDCheck\nsourceClientKey: c.key\n", err: "sourceClientKey is the key of sourceClientCertificate"},
	} {
		node, err := yaml.Parse(tc.config)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readConfig(node)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.config, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.config, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(CRDCheck{})); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.config, d)
		}
	}
}

// Several resource files are several streams: the last object of one file
// is not merged with the first of the next.
func TestStandaloneSeveralFiles(t *testing.T) {
	t.Chdir("testdata/update-allowed")
	var out bytes.Buffer
	cmd := NewCommand()
	cmd.SetOut(&out)
	cmd.SetIn(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-stdin\n"))
	cmd.SetArgs([]string{"config.yaml", "crd.yaml", "input.yaml", "-"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.ByteReader{Reader: &out}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		names = append(names, it.GetKind()+"/"+it.GetName())
	}
	want := []string{"CustomResourceDefinition/buckets.example.com", "Bucket/logs", "ConfigMap/from-stdin"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
}

// The function on stdin, as kustomize and kpt run it: testdata/stdin/NAME.in.yaml
// in, NAME.out.yaml (stdout, exit 0) or NAME.err.txt (stderr, exit 2) out.
func TestStdin(t *testing.T) {
	inputs, err := filepath.Glob("testdata/stdin/*.in.yaml")
	if err != nil || len(inputs) < 5 {
		t.Fatalf("cases: %v %v", inputs, err)
	}
	for _, in := range inputs {
		base := strings.TrimSuffix(in, ".in.yaml")
		t.Run(filepath.Base(base), func(t *testing.T) {
			stdin, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			cmd := NewCommand()
			cmd.SetArgs([]string{}) // nil: cobra would read os.Args
			cmd.SetIn(bytes.NewReader(stdin))
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			err = cmd.Execute()
			code := 0
			var coded interface{ ExitCode() int }
			if errors.As(err, &coded) {
				code = coded.ExitCode()
			}
			golden, got, wantCode := base+".out.yaml", out.String(), 0
			if code != 0 {
				golden, got, wantCode = base+".err.txt", errOut.String(), 2
			}
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\n%v", code, out.String(), errOut.String(), err)
			}
			if code != wantCode {
				t.Errorf("exit %d, want %d", code, wantCode)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("%s (-want +got):\n%s", golden, d)
			}
		})
	}
}
