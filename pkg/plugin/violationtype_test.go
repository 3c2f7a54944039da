package plugin

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// check-update -o json gives each violation of the server's validation its
// error type, as the server's error carries it (issue 39): a CEL rule's
// reason (FieldValueForbidden: Forbidden), Invalid value for a rule
// without one; a mutability marker, which the server does not enforce,
// has none.
func TestCheckUpdateViolationType(t *testing.T) {
	const dir = "testdata/violationtype/"
	r := run(t, "", "check-update", "--offline", "--crd-file", dir+"crd.yaml", "--old", dir+"old.yaml", "-f", dir+"new.yaml", "-o", "json")
	var report struct {
		Items []struct {
			Violations []map[string]interface{}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil || r.code != ExitFindings || len(report.Items) != 1 {
		t.Fatalf("exit %d, %v:\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	types := map[string]interface{}{}
	for _, v := range report.Items[0].Violations {
		types[v["path"].(string)] = v["type"]
	}
	want := map[string]interface{}{
		"spec.owner":  field.ErrorTypeForbidden.String(),
		"spec.region": field.ErrorTypeInvalid.String(),
		"spec.zone":   nil,
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("the types of the violations, by path (-want +got):\n%s", diff)
	}
}
