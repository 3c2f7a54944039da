package source

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// lockWorkerEnv makes the test binary, run again by TestConcurrentUpdateLock,
// a run of --update-lock: "URL LOCK CACHE N", the sources URL/0.yaml to
// URL/N-1.yaml, each fetched by a run of its own.
const lockWorkerEnv = "KUBECTL_CRD_TEST_LOCK_WORKER"

// Runs of --update-lock at once, in processes of their own, each with
// sources of its own, lose no pin: each run merges its pins into the lock
// as the run before it wrote it. Read, changed and renamed without a lock
// of the file, runs wrote over each other's pins.
func TestConcurrentUpdateLock(t *testing.T) {
	if spec := os.Getenv(lockWorkerEnv); spec != "" {
		lockWorker(t, spec)
		return
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "kind: CustomResourceDefinition\nmetadata: {name: "+strings.Trim(r.URL.Path, "/")+"}\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	lock := filepath.Join(dir, "kubectl-crd.lock")
	cache := filepath.Join(dir, "cache", "sources")
	const workers, runs = 4, 12
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentUpdateLock$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s/w%d %s %s %d", lockWorkerEnv, srv.URL, w, lock, cache, runs))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("worker %d: %v\n%s", w, err, out)
			}
		}()
	}
	wg.Wait()
	l, err := ReadLock(lock, false)
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for w := 0; w < workers; w++ {
		for i := 0; i < runs; i++ {
			src := fmt.Sprintf("%s/w%d/%d.yaml", srv.URL, w, i)
			p := l.Find(src)
			if p == nil {
				lost = append(lost, src)
				continue
			}
			if want := digestOf(fmt.Sprintf("kind: CustomResourceDefinition\nmetadata: {name: w%d/%d.yaml}\n", w, i)); p.Digest != want {
				t.Errorf("%s: %s, want %s", src, p.Digest, want)
			}
		}
	}
	if len(lost) > 0 || len(l.Sources) != workers*runs {
		t.Errorf("%d pins of %d, lost: %v", len(l.Sources), workers*runs, lost)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // the lock and the cache: nothing left beside the lock
		t.Errorf("the lock's directory holds %v", entries)
	}
}

// lockWorker runs --update-lock's fetch of each source of spec in turn.
func lockWorker(t *testing.T, spec string) {
	var base, lock, cache string
	var n int
	if _, err := fmt.Sscan(spec, &base, &lock, &cache, &n); err != nil {
		t.Fatalf("%s=%q: %v", lockWorkerEnv, spec, err)
	}
	for i := 0; i < n; i++ {
		set, err := Fetch(context.Background(), Options{Dir: cache, Update: true, Insecure: true}, lock, []string{base + "/" + strconv.Itoa(i) + ".yaml"})
		if err != nil {
			t.Fatal(err)
		}
		set.Close()
	}
}
