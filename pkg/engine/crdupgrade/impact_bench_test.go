package crdupgrade_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// BenchmarkImpact is the upgrade of examples/upgrade run on one existing
// object at a time, as a scan of the cluster runs it: read under the new
// CRD, created again under both, written back unchanged.
func BenchmarkImpact(b *testing.B) {
	crd := func(file string) *schema.CRD {
		data, err := os.ReadFile("../../../examples/upgrade/" + file)
		if err != nil {
			b.Fatal(err)
		}
		docs, err := document.Read(bytes.NewReader(data), file)
		if err != nil {
			b.Fatal(err)
		}
		c, _, err := schema.FromObject(docs[0].Object, strategy.Validators{})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	old, new := crd("crd-v1.yaml"), crd("crd-v2.yaml")
	v := strategy.Validators{}
	var objects []*document.Document
	for i := 0; i < 100; i++ {
		docs, err := document.Read(bytes.NewReader([]byte(fmt.Sprintf(`apiVersion: ops.example.com/v1
kind: BackupSchedule
metadata: {name: b%d, namespace: ns%d}
spec: {schedule: "0 2 * * *", retentionDays: %d, compression: zstd, suspend: %v, target: {bucket: backups, prefix: p%d/}}
`, i, i%5, 30+i*i%400, i%10 == 0, i))), "objects.yaml")
		if err != nil {
			b.Fatal(err)
		}
		objects = append(objects, docs[0])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := crdupgrade.Impact(objects[i%len(objects)], old, new, v, "default"); err != nil {
			b.Fatal(err)
		}
	}
}
