package filter

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
)

// The help of "kubectl crd krm" describes every field of the function
// config, and its failOn example is the default: the help is what a user
// of kustomize reads first, and a field or default it leaves out is one
// they do not know of.
func TestKRMHelpDescribesTheConfig(t *testing.T) {
	typ := reflect.TypeOf(CRDCheck{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		switch name {
		case "", "-", "apiVersion", "kind", "metadata":
			continue
		}
		if !strings.Contains(krmLong, "\n  "+name+": ") {
			t.Errorf("the help has no line for the config's %s", name)
		}
	}
	names := make([]string, len(finding.DefaultFailOn))
	for i, c := range finding.DefaultFailOn {
		names[i] = string(c)
	}
	if want := "\n  failOn: [" + strings.Join(names, ", ") + "]\n"; !strings.Contains(krmLong, want) {
		t.Errorf("the help's failOn is not the default %q", strings.TrimSpace(want))
	}
	for _, c := range finding.Checks {
		if !strings.Contains(krmLong, string(c)) {
			t.Errorf("the help does not name the finding %s", c)
		}
	}
}
