package schema_test

import (
	"sync"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// twoVersions is a CRD served in v1 and v2, stored in v2.
func twoVersions(t *testing.T) *schema.CRD {
	t.Helper()
	var obj map[string]interface{}
	if err := sigsyaml.Unmarshal([]byte(crdWith("v1", "foos.example.com",
		"versions:\n- name: v1\n  served: true\n  storage: false\n"+objectSchema+"- name: v2\n  served: true\n  storage: true\n"+objectSchema)), &obj); err != nil {
		t.Fatal(err)
	}
	crd, _, err := schema.FromObject(obj, strategy.Validators{})
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// ReleaseSchema drops the schema as written of the version named, and only
// it; what the checks use (the structural schemas, the validator) stays.
func TestReleaseSchema(t *testing.T) {
	crd := twoVersions(t)
	served, err := crd.ServedSchema("v1")
	if err != nil || served == nil {
		t.Fatalf("ServedSchema: %v, %v", served, err)
	}
	if _, err := (strategy.Validators{}).For(crd, "v1"); err != nil {
		t.Fatal(err)
	}
	crd.ReleaseSchema("v1")
	crd.ReleaseSchema("v1") // once is enough; again changes nothing
	v1, _ := crd.Version("v1")
	v2, _ := crd.Version("v2")
	if v1.Schema != nil || v2.Schema == nil {
		t.Errorf("after ReleaseSchema(v1): v1's schema %v, v2's %v; want none and one", v1.Schema != nil, v2.Schema != nil)
	}
	if got, err := crd.ServedSchema("v1"); err != nil || got != served {
		t.Errorf("ServedSchema after ReleaseSchema: %v, %v; want the one before", got, err)
	}
	// The validator holds the schema in its own form.
	errs, err := strategy.Validators{}.ValidateCreate(crd, "v1", map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Foo",
		"metadata": map[string]interface{}{"name": "f", "namespace": "default"},
		"spec":     map[string]interface{}{"size": "big"},
	}, "default")
	if err != nil || len(errs) != 1 || errs[0].Field != "spec.size" {
		t.Errorf("ValidateCreate of a bad size after ReleaseSchema: %v, %v", errs, err)
	}
}

// A version's schema is released while other goroutines check objects of
// the CRD: what they read of it does not race with the release (go test
// -race).
func TestReleaseSchemaWhileChecking(t *testing.T) {
	crd := twoVersions(t)
	var wg sync.WaitGroup
	for _, version := range []string{"v1", "v2", "v1", "v2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := (strategy.Validators{}).For(crd, version); err != nil {
				t.Error(err)
			}
			crd.ReleaseSchema(version)
			_ = crd.Versions()
			_ = crd.StorageVersion()
			_, _ = crd.ServedSchema(version)
			_ = crd.StatusSubresource(version)
		}()
	}
	wg.Wait()
	for _, version := range []string{"v1", "v2"} {
		if v, _ := crd.Version(version); v.Schema != nil {
			t.Errorf("%s: schema kept", version)
		}
	}
}

// A validator asked for after its version's schema is released has none
// to take: an error, not a validator that checks nothing.
func TestReleaseSchemaBeforeTheValidator(t *testing.T) {
	crd := twoVersions(t)
	crd.ReleaseSchema("v2")
	if !crd.SchemaReleased("v2") || crd.SchemaReleased("v1") {
		t.Errorf("SchemaReleased: v2 %v, v1 %v; want true, false", crd.SchemaReleased("v2"), crd.SchemaReleased("v1"))
	}
	_, err := strategy.Validators{}.ValidateCreate(crd, "v2", map[string]interface{}{
		"apiVersion": "example.com/v2", "kind": "Foo",
		"metadata": map[string]interface{}{"name": "f", "namespace": "default"},
	}, "default")
	if want := `the schema of version "v2" of CustomResourceDefinition foos.example.com was released before its validator was built`; err == nil || err.Error() != want {
		t.Errorf("ValidateCreate after ReleaseSchema: %v, want %q", err, want)
	}
}
