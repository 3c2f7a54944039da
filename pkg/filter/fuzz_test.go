package filter

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// FuzzResourceList: whatever the function reads on stdin (a ResourceList or
// a plain stream), it never panics, what it writes on success is YAML
// kyaml reads back, and a list read by its text (listByText) is written as
// kyaml's reader has it (byKyaml), byte for byte, errors alike.
func FuzzResourceList(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/stdin/*.in.yaml")
	inputs, _ := filepath.Glob("testdata/*/input.yaml")
	for _, p := range append(seeds, inputs...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, c := range listCases {
		f.Add([]byte(c.list))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<14 {
			return
		}
		var byText, viaKyaml bytes.Buffer
		if err := listByText(in, &byText, Processor{}); !errors.Is(err, errNotByText) {
			errKyaml := byKyaml(in, &viaKyaml, Processor{})
			if fmt.Sprint(err) != fmt.Sprint(errKyaml) || byText.String() != viaKyaml.String() {
				t.Fatalf("read by its text: %v\n%s\nby kyaml's reader: %v\n%s\ninput:\n%s", err, byText.Bytes(), errKyaml, viaKyaml.Bytes(), in)
			}
		}
		var out, errOut bytes.Buffer
		cmd := NewCommand()
		cmd.SetArgs([]string{})
		cmd.SetIn(bytes.NewReader(in))
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		if err := cmd.Execute(); err != nil {
			return
		}
		if _, err := (&kio.ByteReader{Reader: bytes.NewReader(out.Bytes())}).Read(); err != nil {
			t.Fatalf("the output does not read back: %v\ninput:\n%s\noutput:\n%s", err, in, out.Bytes())
		}
	})
}
