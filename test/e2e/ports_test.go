package e2e

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPortsDocumented: the test API server's ports, as the suite, the
// server's own defaults and hack/test-apiserver.sh set them, are the ones
// docs/architecture.md gives, and docs/README.md says how the docs show the
// server. (Runs with -short.)
func TestPortsDocumented(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(repoRoot(), filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	find := func(name, text, re string) int {
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s: no match for %s", name, re)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	script, server := read("hack/test-apiserver.sh"), read("test/apiserver/main.go")
	hackPort := find("hack/test-apiserver.sh", script, `CRD_TEST_APISERVER_PORT:-(\d+)`)
	hackEtcd := find("hack/test-apiserver.sh", script, `CRD_TEST_ETCD_PORT:-(\d+)`)
	if p := find("test/apiserver/main.go", server, `"port", (\d+)`); p != hackPort {
		t.Errorf("test/apiserver's default port is %d, hack/test-apiserver.sh's %d", p, hackPort)
	}
	if p := find("test/apiserver/main.go", server, `"etcd-port", (\d+)`); p != hackEtcd {
		t.Errorf("test/apiserver's default etcd port is %d, hack/test-apiserver.sh's %d", p, hackEtcd)
	}
	if hackPort == defaultAPIServerPort || hackEtcd == defaultEtcdPort || hackEtcd+1 == defaultEtcdPort {
		t.Errorf("the suite's ports (%d, %d) collide with hack/test-apiserver.sh's (%d, %d)", defaultAPIServerPort, defaultEtcdPort, hackPort, hackEtcd)
	}
	for _, p := range []int{hackPort, hackEtcd, hackEtcd + 1, defaultAPIServerPort, defaultEtcdPort, defaultEtcdPort + 1} {
		if p == defaultVersionsAPIServerPort || p == defaultVersionsEtcdPort || p == defaultVersionsEtcdPort+1 {
			t.Errorf("the version parity test's ports (%d, %d) collide with port %d", defaultVersionsAPIServerPort, defaultVersionsEtcdPort, p)
		}
	}
	// Linux gives outgoing connections local ports from 32768 to 60999: a
	// default in that range is taken whenever a connection happens to hold it.
	for _, p := range []int{hackPort, hackEtcd + 1, defaultAPIServerPort, defaultEtcdPort + 1, defaultVersionsAPIServerPort, defaultVersionsEtcdPort + 1} {
		if p >= 32768 {
			t.Errorf("port %d is in the ephemeral range (32768-60999)", p)
		}
	}
	arch := read("docs/architecture.md")
	for _, want := range []string{
		"| the end-to-end suite | " + strconv.Itoa(defaultAPIServerPort) + " | " + strconv.Itoa(defaultEtcdPort) + ", " + strconv.Itoa(defaultEtcdPort+1) +
			" | `KUBECTL_CRD_E2E_APISERVER_PORT`, `KUBECTL_CRD_E2E_ETCD_PORT` |",
		" | " + strconv.Itoa(hackPort) + " | " + strconv.Itoa(hackEtcd) + ", " + strconv.Itoa(hackEtcd+1) +
			" | `CRD_TEST_APISERVER_PORT`, `CRD_TEST_ETCD_PORT` |",
		" | " + strconv.Itoa(defaultVersionsAPIServerPort) + " | " + strconv.Itoa(defaultVersionsEtcdPort) + ", " + strconv.Itoa(defaultVersionsEtcdPort+1) +
			" | `KUBECTL_CRD_E2E_VERSIONS_APISERVER_PORT`, `KUBECTL_CRD_E2E_VERSIONS_ETCD_PORT` |",
		"`" + docsAPIServer + "`",
	} {
		if !strings.Contains(arch, want) {
			t.Errorf("docs/architecture.md does not say %q", want)
		}
	}
	if index := read("docs/README.md"); !strings.Contains(index, "`"+docsAPIServer+"`") || !strings.Contains(index, "architecture.md#the-test-api-servers-ports") {
		t.Errorf("docs/README.md does not show the server as %s with a link to its ports", docsAPIServer)
	}
}

// TestServerPortsTaken: a default port taken gives way to free ports the
// kernel picks; a port set in the environment and taken fails. (Runs with
// -short.)
func TestServerPortsTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	for _, c := range []struct{ api, etcd int }{{port, defaultEtcdPort}, {defaultAPIServerPort, port - 1}, {defaultAPIServerPort, port}} {
		a, e, err := serverPorts(c.api, c.etcd, false)
		if err != nil {
			t.Fatalf("defaults %d, %d with %d taken: %v", c.api, c.etcd, port, err)
		}
		if a == port || e == port || e+1 == port {
			t.Errorf("defaults %d, %d with %d taken: got %d, %d", c.api, c.etcd, port, a, e)
		}
		if err := portsTaken(a, e, e+1); err != nil {
			t.Errorf("got %d, %d: %v", a, e, err)
		}
		if _, _, err := serverPorts(c.api, c.etcd, true); err == nil || !strings.Contains(err.Error(), strconv.Itoa(port)) {
			t.Errorf("ports %d, %d set with %d taken: %v, want an error naming it", c.api, c.etcd, port, err)
		}
	}
}
