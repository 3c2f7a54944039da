package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/filter"
	"github.com/kubectl-crd/kubectl-crd/pkg/plugin"
)

// The plugin and the KRM function word every finding alike: both render
// the engine's findings (they used to word the same change differently).
func TestPluginAndFunctionWordFindingsAlike(t *testing.T) {
	for _, ex := range []struct{ crd, objects string }{
		{"../../examples/reasons/crd.yaml", "../../examples/reasons/gadget.yaml"},
		{"../../examples/maintenance/crd.yaml", "../../examples/maintenance/job.yaml"},
		{"../../examples/refused/crd.yaml", "../../examples/refused/backups.yaml"},
	} {
		t.Run(ex.objects, func(t *testing.T) {
			var out, errOut bytes.Buffer
			plugin.Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
				// The CRD among the inputs, as among the function's items: what
				// the server stores of it is among the findings of both.
				[]string{"prune", "--offline", "-f", ex.crd, "-f", ex.objects})
			line := regexp.MustCompile(`^(?:Warning|Error): [^:]+: (?:the server would refuse it: )?(.*) \([^()]*:\d+\)$`)
			var fromPlugin []string
			for _, l := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
				if m := line.FindStringSubmatch(l); m != nil {
					fromPlugin = append(fromPlugin, m[1])
				}
			}
			if len(fromPlugin) == 0 {
				t.Fatalf("no findings from the plugin:\n%s", errOut.String())
			}

			var items []*yaml.RNode
			for _, f := range []string{ex.crd, ex.objects} {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, nodes...)
			}
			var rl bytes.Buffer
			if err := (kio.ByteWriter{Writer: &rl, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}).Write(items); err != nil {
				t.Fatal(err)
			}
			var fnOut, fnErr bytes.Buffer
			cmd := filter.NewCommand()
			cmd.SetArgs([]string{})
			cmd.SetIn(&rl)
			cmd.SetOut(&fnOut)
			cmd.SetErr(&fnErr)
			_ = cmd.Execute() // exit 1 on error results, which the comparison covers
			list, err := yaml.Parse(fnOut.String())
			if err != nil {
				t.Fatalf("%v:\n%s%s", err, fnOut.String(), fnErr.String())
			}
			var fromFunction []string
			results, _ := list.Pipe(yaml.Lookup("results"))
			elems, _ := results.Elements()
			for _, r := range elems {
				if r.Field("resourceRef") == nil {
					continue // which minor answered: of no object, no finding
				}
				msg := yaml.GetValue(r.Field("message").Value)
				fromFunction = append(fromFunction, strings.TrimPrefix(msg, "the server would refuse it: "))
			}
			sort.Strings(fromPlugin)
			sort.Strings(fromFunction)
			if diff := cmp.Diff(fromPlugin, fromFunction); diff != "" {
				t.Errorf("findings (-plugin +function):\n%s", diff)
			}
		})
	}
}
