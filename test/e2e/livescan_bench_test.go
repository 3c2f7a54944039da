package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

var liveObjects = flag.Int("live-objects", 10000, "BenchmarkLiveUpgradeScan: the objects on the test API server")

// liveScan is the benchmark's cluster state, made once: go test calls a
// benchmark once with b.N = 1, then again with the b.N it settles on.
var liveScan struct {
	once sync.Once
	err  error
}

// BenchmarkLiveUpgradeScan times check-update of a CRD upgrade
// (examples/upgrade) against -live-objects objects on the test API server,
// listed by the built binary 500 a page: wall time and the binary's peak
// RSS. The objects are created once, before the timer; a tenth lose a
// field, a seventh are refused by the new maximum. docs/performance.md
// has the numbers:
//
//	go test ./test/e2e -run '^$' -bench LiveUpgradeScan -benchtime 3x
func BenchmarkLiveUpgradeScan(b *testing.B) {
	if !cluster.own {
		b.Skipf("needs the suite's own test API server; %s is set", EnvKubeconfig)
	}
	root := repoRoot()
	liveScan.once.Do(func() { liveScan.err = createLiveScan(b, root) })
	if liveScan.err != nil {
		b.Fatal(liveScan.err)
	}

	args := []string{"check-update", "-f", filepath.Join(root, "examples/upgrade/crd-v2.yaml")}
	env := []string{"KUBECONFIG=" + cluster.kubeconfig, "HOME=" + b.TempDir()}
	// Once untimed, as JSON: every object checked, the hurt ones found.
	out, _, err := runMeasured(filepath.Join(binDir, "kubectl-crd"), append(args, "-o", "json"), env)
	if err != nil {
		b.Fatal(err)
	}
	var report struct {
		Upgrades []struct{ ObjectsChecked, ObjectsHurt int }
	}
	if err := json.Unmarshal(out, &report); err != nil || len(report.Upgrades) != 1 {
		b.Fatalf("%v: %.500s", err, out)
	}
	if got := report.Upgrades[0]; got.ObjectsChecked != *liveObjects || got.ObjectsHurt != hurtBackupSchedules(*liveObjects) {
		b.Fatalf("checked %d, hurt %d; want %d, %d", got.ObjectsChecked, got.ObjectsHurt, *liveObjects, hurtBackupSchedules(*liveObjects))
	}

	b.ResetTimer()
	var peak int64
	for i := 0; i < b.N; i++ {
		_, rss, err := runMeasured(filepath.Join(binDir, "kubectl-crd"), args, env)
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, rss)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(*liveObjects), "objects")
}

// createLiveScan creates the old CRD of examples/upgrade and the objects.
// They stay: the test API server and its state go with the run.
func createLiveScan(b *testing.B, root string) error {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		return err
	}
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling of the creates
	docs, err := document.Read(bytes.NewReader(mustReadTB(b, filepath.Join(root, "examples/upgrade/crd-v1.yaml"))), "crd-v1.yaml")
	if err != nil {
		return err
	}
	old, _, err := schema.FromObject(docs[0].Object, strategy.Validators{})
	if err != nil {
		return err
	}
	crdClient := apiextensionsclient.NewForConfigOrDie(cfg)
	if err := replaceCRD(ctx, crdClient, old.Object); err != nil {
		return err
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	gvr := runtimeschema.GroupVersionResource{Group: "ops.example.com", Version: "v1", Resource: "backupschedules"}
	start := time.Now()
	if err := createBackupSchedules(ctx, dyn.Resource(gvr), *liveObjects); err != nil {
		return err
	}
	b.Logf("created %d objects in %s", *liveObjects, time.Since(start).Round(time.Millisecond))
	return nil
}

// runMeasured runs a command that exits 0 or 1 (findings): its stdout and
// its peak RSS in bytes. The kernel counts in a child's peak the memory of
// the process that starts it with vfork, as Go does, and this test process
// is large: GNU time, a small process of its own, starts the command and
// says its peak. Without it, the peak is 0.
func runMeasured(path string, args, env []string) ([]byte, int64, error) {
	timeOut, err := os.CreateTemp("", "kubectl-crd-time-")
	if err != nil {
		return nil, 0, err
	}
	timeOut.Close()
	defer os.Remove(timeOut.Name())
	cmd := exec.Command(path, args...)
	gnuTime := "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err == nil {
		cmd = exec.Command(gnuTime, append([]string{"-f", "%M", "-o", timeOut.Name(), path}, args...)...)
	}
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		return nil, 0, fmt.Errorf("%s: %v\n%s", filepath.Base(path), err, errOut.String())
	}
	var kib int64
	if data, err := os.ReadFile(timeOut.Name()); err == nil {
		lines := strings.Fields(string(data))
		if len(lines) > 0 {
			kib, _ = strconv.ParseInt(lines[len(lines)-1], 10, 64)
		}
	}
	return out.Bytes(), kib << 10, nil
}

// createBackupSchedules creates n BackupSchedules in 50 namespaces, 8 at a time.
func createBackupSchedules(ctx context.Context, ri dynamic.NamespaceableResourceInterface, n int) error {
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := ri.Namespace(fmt.Sprintf("ns%d", i%50)).Create(ctx, backupSchedule(i), metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := 0; i < n; i++ {
		select {
		case work <- i:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return err
}

// backupSchedule i: every tenth suspended (a field the new CRD drops),
// every seventh kept a year (above the new maximum).
func backupSchedule(i int) *unstructured.Unstructured {
	spec := map[string]interface{}{
		"schedule":      "0 2 * * *",
		"retentionDays": int64(30),
		"compression":   "zstd",
		"target":        map[string]interface{}{"bucket": "backups", "prefix": fmt.Sprintf("p%d/", i)},
	}
	if i%10 == 0 {
		spec["suspend"] = true
	}
	if i%7 == 0 {
		spec["retentionDays"] = int64(365)
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "ops.example.com/v1", "kind": "BackupSchedule",
		"metadata": map[string]interface{}{"name": fmt.Sprintf("b%d", i)},
		"spec":     spec,
	}}
}

func hurtBackupSchedules(n int) int {
	hurt := 0
	for i := 0; i < n; i++ {
		if i%10 == 0 || i%7 == 0 {
			hurt++
		}
	}
	return hurt
}

func mustReadTB(tb testing.TB, file string) []byte {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
