package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-crd/kubectl-crd/internal/buildinfo"
)

// fakeHelmEnv makes the test binary a crd-helm that fails as it says
// (fakeHelm): for what kubectl-crd makes of how its companion ends.
const fakeHelmEnv = "KUBECTL_CRD_TEST_FAKE_HELM"

// renderHelperEnv makes the test binary a run of kubectl-crd that renders
// the chart it names (renderHelper), for TestRenderSignal to interrupt.
const renderHelperEnv = "KUBECTL_CRD_TEST_RENDER"

// fakeHelmPIDEnv names the file where the fake crd-helm writes its
// process id when it starts.
const fakeHelmPIDEnv = "KUBECTL_CRD_TEST_FAKE_HELM_PID"

func TestMain(m *testing.M) {
	if chart := os.Getenv(renderHelperEnv); chart != "" {
		os.Exit(renderHelper(chart))
	}
	if mode := os.Getenv(fakeHelmEnv); mode != "" {
		if p := os.Getenv(fakeHelmPIDEnv); p != "" {
			os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o600)
		}
		os.Exit(fakeHelm(mode))
	}
	os.Exit(m.Run())
}

// renderHelper renders chart as kubectl-crd does, and closes the fetcher.
func renderHelper(chart string) int {
	os.Unsetenv(renderHelperEnv) // not for the companion
	// A cache of its own: without one, the cache's temporary directory is the cache's to remove.
	cache, err := os.MkdirTemp(filepath.Dir(chart), "cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	f, err := New(Options{Dir: cache})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer f.Close()
	if _, err := f.render(context.Background(), "src", chart); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// fakeHelm is crd-helm that never ends ("hang"), dies of Go's "out of
// memory" ("oom", Linux; "watchdog-and-oom" as its watchdog's line is
// written), panics ("panic"), does not know a flag ("old"), or fails as
// crd-helm does, exit 2, with a message of 10 MB ("loud") or writing its
// arguments ("args"); or renders no CRD ("none").
func fakeHelm(mode string) int {
	switch mode {
	case "hang":
		time.Sleep(time.Hour)
	case "oom", "watchdog-and-oom":
		if mode == "watchdog-and-oom" { // its watchdog's line as an allocation fails
			fmt.Fprintln(os.Stderr, "rendering the chart used more than 64 MiB of memory, the bound: it was stopped")
		}
		limitAddressSpace()
		var held [][]byte
		for size := 1 << 20; ; size *= 2 {
			held = append(held, make([]byte, size))
		}
	case "panic":
		panic("a bug")
	case "old": // a crd-helm of a release before the flags it is given
		fmt.Fprintf(os.Stderr, "flag provided but not defined: -max-memory\nUsage of render:\n  -build string\n    \tthe build of kubectl-crd that runs crd-helm\n")
		return 2
	case "loud": // a chart's fail of 10 MB
		os.Stderr.WriteString("rendering the chart: " + strings.Repeat("x", 10<<20) + "\n")
		return 2
	case "args":
		fmt.Fprintln(os.Stderr, strings.Join(os.Args[1:], " "))
		return 2
	case "none": // a chart that renders no CRD
		fmt.Printf(`{"build": %q, "files": []}`+"\n", buildinfo.Version())
		return 0
	}
	return 3
}

// fakeCompanion makes the test binary the companion, failing as mode says.
func fakeCompanion(t *testing.T, mode string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(CompanionEnv, exe)
	t.Setenv(fakeHelmEnv, mode)
	chart := filepath.Join(t.TempDir(), "chart")
	os.MkdirAll(chart, 0o755)
	os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.0.0\n"), 0o600)
	return chart
}

// renderWithin renders chart with f, failing the test unless it ends
// within d.
func renderWithin(t *testing.T, f *Fetcher, chart string, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := f.render(context.Background(), "src", chart)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("rendering did not end within %v", d)
		return nil
	}
}

// Rendering is bounded in time (the fetch timeout: 2 minutes, or
// --request-timeout): a crd-helm that never ends is stopped, and the
// chart is refused, exit 2. It hung the run.
func TestRenderTimeout(t *testing.T) {
	chart := fakeCompanion(t, "hang")
	f, err := New(Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = renderWithin(t, f, chart, 20*time.Second)
	var se *Error
	if !errors.As(err, &se) || !se.Input || err.Error() != "src: rendering the chart took longer than 300ms, the bound: it was stopped" {
		t.Errorf("%#v", err)
	}
}

// What Go's runtime writes when crd-helm dies is never handed on (a
// goroutine dump on the user's terminal): out of memory is the chart's,
// past the bound, exit 2; a crash is ours, named by its first line, exit
// 3. crd-helm's own message, exit 2, is the chart's; the bound is handed
// to it (--max-memory, $KUBECTL_CRD_HELM_MEMORY or 1024 MiB).
func TestRenderDeaths(t *testing.T) {
	for _, tc := range []struct {
		mode, memory string
		input        bool
		want         string
	}{
		{"oom", "64", true, "src: rendering the chart used more than 64 MiB of memory, the bound: it was stopped"},
		{"watchdog-and-oom", "64", true, "src: rendering the chart used more than 64 MiB of memory, the bound: it was stopped"},
		{"panic", "", false, "crashed: panic: a bug"},
		{"loud", "", true, "src: rendering the chart: xxxx"},
		{"old", "", true, " does not know the flags of kubectl-crd of build " + buildinfo.Version() + " (-max-memory): install both from the same release"},
		{"args", "", true, "--max-memory 1024"},
		{"args", "64", true, "--max-memory 64"},
		{"args", "lots", true, "src: $KUBECTL_CRD_HELM_MEMORY=lots: want a number of MiB (1024 unless set)"},
	} {
		if strings.HasSuffix(tc.mode, "oom") && (runtime.GOOS != "linux" || raceEnabled) {
			continue
		}
		chart := fakeCompanion(t, tc.mode)
		t.Setenv(ChartMemoryEnv, tc.memory)
		f, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = renderWithin(t, f, chart, time.Minute)
		f.Close()
		var se *Error
		if !errors.As(err, &se) || se.Input != tc.input || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "goroutine") {
			t.Errorf("%s: input %v: %v\nwant input %v: %s", tc.mode, se != nil && se.Input, err, tc.input, tc.want)
		}
		if len(err.Error()) > 65<<10 {
			t.Errorf("%s: a message of %d bytes", tc.mode, len(err.Error()))
		}
		// crd-helm's message is about the chart, which the source names.
		if tc.mode == "args" && tc.memory != "lots" && !strings.HasPrefix(err.Error(), "src: render --build ") {
			t.Errorf("crd-helm's message: %v", err)
		}
	}
}

// A Set says which of its arguments were Helm charts (check-update's -f
// takes charts only): a chart on disk, even one that renders no CRD, is
// one; a plain OCI artifact, which MayBeChart cannot tell from a chart by
// its reference, is not, nor is an argument the Set does not hold.
func TestSetIsChart(t *testing.T) {
	chart := fakeCompanion(t, "none")
	reg := newTestRegistry(t)
	plain, _ := reg.push(t, "crds/app:v1", "a.yaml", crdA)
	if !MayBeChart(chart) || !MayBeChart(plain) {
		t.Fatalf("MayBeChart: %s %v, %s %v", chart, MayBeChart(chart), plain, MayBeChart(plain))
	}
	set, err := Fetch(context.Background(), Options{Dir: filepath.Join(t.TempDir(), "sources")}, "", []string{chart, plain})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if names, ok := set.Names(chart); !ok || len(names) != 0 {
		t.Errorf("the chart's files: %v %v, want none", names, ok)
	}
	for arg, want := range map[string]bool{chart: true, plain: false, "elsewhere": false} {
		if got := set.IsChart(arg); got != want {
			t.Errorf("IsChart(%s) = %v, want %v", arg, got, want)
		}
	}
}
