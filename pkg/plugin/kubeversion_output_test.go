package plugin

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdtest"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// Every JSON contract says which minor answered and how, as it is when
// the report is written (docs/json.md): an older minor emulated by the
// embedded code, or the embedded one by its own code. (The CI reports:
// pkg/plugin/report's TestReportsSayWhichMinorAnswered.)
func TestJSONSaysWhichMinorAnswered(t *testing.T) {
	t.Cleanup(func() {
		if _, err := kubeversion.Use(kubeversion.Embedded); err != nil {
			t.Error(err)
		}
	})
	for _, m := range []kubeversion.Minor{kubeversion.Oldest, kubeversion.Embedded} {
		t.Run(m.String(), func(t *testing.T) {
			answer, err := kubeversion.Use(m)
			if err != nil {
				t.Fatal(err)
			}
			want := answer.Stamp()
			if want.Version != m.String() || want.Emulated != (m != kubeversion.Embedded) {
				t.Fatalf("Use(%s) answers %+v", m, want)
			}
			for name, doc := range jsonReports(t) {
				var got struct {
					Kubernetes *kubeversion.Stamp `json:"kubernetes"`
				}
				if err := json.Unmarshal(doc, &got); err != nil || got.Kubernetes == nil || !reflect.DeepEqual(*got.Kubernetes, want) {
					t.Errorf("%s: kubernetes %+v (%v), want %+v:\n%s", name, got.Kubernetes, err, want, doc)
				}
			}
		})
	}
}

// jsonReports are the JSON contracts of an empty run, by command, as each
// command's writer ends them.
func jsonReports(t *testing.T) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: io.Discard}

	prune := &PruneOptions{IOStreams: streams, Report: "-", reportSet: true}
	po, err := prune.newPruneOutput()
	if err != nil {
		t.Fatal(err)
	}
	defer po.Close()
	if _, err := po.Finish(nil); err != nil {
		t.Fatal(err)
	}
	docs["prune --report"] = bytes.Clone(out.Bytes())

	out.Reset()
	uo, err := newUpdateOutput("json", finding.DefaultGate(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer uo.Close()
	if err := uo.Finish(&out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	docs["check-update -o json"] = bytes.Clone(out.Bytes())

	for _, format := range []string{"json", "yaml"} {
		out.Reset()
		explain := &ExplainStructuralOptions{IOStreams: streams}
		explain.Output = format
		if err := explain.printReport(structuralReport{}); err != nil {
			t.Fatal(err)
		}
		b, err := sigsyaml.YAMLToJSON(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		docs["explain-structural -o "+format] = b
	}

	out.Reset()
	if err := writeTestJSON(&out, &crdtest.Report{}); err != nil {
		t.Fatal(err)
	}
	docs["test -o json"] = bytes.Clone(out.Bytes())
	return docs
}
