package e2e

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// EnvKubeconfig points the suite at an existing cluster instead of the test
// API server it starts itself. It is not KUBECONFIG on purpose: the suite
// creates and deletes CRDs, and a developer's KUBECONFIG may be production.
const EnvKubeconfig = "KUBECTL_CRD_E2E_KUBECONFIG"

// Ports of the suite's own API server; they differ from hack/test-apiserver.sh's
// defaults so that a server started by hand does not collide, and lie below
// Linux's ephemeral range (32768-60999), from which the kernel gives every
// outgoing connection its local port (TestPortsDocumented).
const (
	defaultAPIServerPort = 26543
	defaultEtcdPort      = 22479
)

var (
	apiserverPort = envInt("KUBECTL_CRD_E2E_APISERVER_PORT", defaultAPIServerPort)
	etcdPort      = envInt("KUBECTL_CRD_E2E_ETCD_PORT", defaultEtcdPort)
	// portsSet says the suite's ports come from the environment: used as
	// they are, never replaced.
	portsSet = os.Getenv("KUBECTL_CRD_E2E_APISERVER_PORT") != "" || os.Getenv("KUBECTL_CRD_E2E_ETCD_PORT") != ""
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// serverPorts returns the ports a server is to listen on: apiserver, etcd
// and etcd+1 (its peer) when all three are free. When one is taken, ports
// set in the environment are an error (whoever set them wants those); the
// defaults give way to ports the kernel picks free, so that a process
// holding a default port (another suite, a connection's local port) does
// not fail the run.
func serverPorts(apiserver, etcd int, set bool) (int, int, error) {
	taken := portsTaken(apiserver, etcd, etcd+1)
	if taken == nil {
		return apiserver, etcd, nil
	}
	if set {
		return 0, 0, fmt.Errorf("%v (the ports set in the environment)", taken)
	}
	for range 50 {
		a, err := kernelPort()
		if err != nil {
			return 0, 0, err
		}
		e, err := kernelPort()
		if err != nil {
			return 0, 0, err
		}
		if a != e && a != e+1 && portsTaken(a, e, e+1) == nil {
			return a, e, nil
		}
	}
	return 0, 0, fmt.Errorf("%v, and no three free ports were found in 50 tries", taken)
}

// portsTaken says which of ports cannot be listened on, on 127.0.0.1.
func portsTaken(ports ...int) error {
	var taken []error
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			taken = append(taken, fmt.Errorf("port %d is taken: %v", p, err))
			continue
		}
		l.Close()
	}
	return errors.Join(taken...)
}

// kernelPort is a loopback port the kernel says is free now.
func kernelPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// testCluster is the cluster the suite runs against.
type testCluster struct {
	kubeconfig string
	// own is true for the suite's own server, whose kubeconfig has the
	// contexts crd-test (namespace default), crd-test-other (namespace
	// other), crd-test-denied (a user refused everything), crd-test-crds-only
	// (a user who may only read CRDs), crd-test-objects-only (a user who may
	// do anything but CRDs) and crd-test-refused (a token refused: 401), and
	// which holds the legacy CRD of testdata/legacy-crd.yaml.
	own    bool
	server *exec.Cmd
	exited chan error // receives once the server process is gone
}

// startCluster starts the test API server (test/apiserver) with its state in
// dir, built by hack/test-apiserver.sh (which stamps the Kubernetes version;
// buildAPIServer), and waits until it is ready.
// buildAPIServer builds the test API server into _output/bin, unless the
// tests use the cluster of EnvKubeconfig.
func buildAPIServer(root string) error {
	if os.Getenv(EnvKubeconfig) != "" {
		return nil
	}
	build := exec.Command(filepath.Join(root, "hack", "test-apiserver.sh"), "build")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the test API server: %v", err)
	}
	return nil
}

func startCluster(root, dir string) (*testCluster, error) {
	if kc := os.Getenv(EnvKubeconfig); kc != "" {
		return &testCluster{kubeconfig: kc}, nil
	}
	a, e, err := serverPorts(apiserverPort, etcdPort, portsSet)
	if err != nil {
		return nil, fmt.Errorf("%v (set KUBECTL_CRD_E2E_APISERVER_PORT / KUBECTL_CRD_E2E_ETCD_PORT)", err)
	}
	// The docs test prints the server's address as it is.
	apiserverPort, etcdPort = a, e
	return startServer(filepath.Join(root, "_output", "bin", "crd-test-apiserver"), dir, apiserverPort, etcdPort,
		"--legacy-crd", filepath.Join(root, "test", "e2e", "testdata", "legacy-crd.yaml"))
}

// startServer starts the test API server bin (the suite's, or one minor's
// for the version parity test) on apiserverPort and etcdPort (and the next
// port, etcd's peer; serverPorts chose them), with its state in dir and the
// further arguments args, and waits until it is ready.
func startServer(bin, dir string, apiserverPort, etcdPort int, args ...string) (*testCluster, error) {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	logFile, err := os.Create(filepath.Join(dir, "apiserver.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	server := exec.Command(bin, append([]string{
		"--port", strconv.Itoa(apiserverPort), "--etcd-port", strconv.Itoa(etcdPort),
		"--data-dir", filepath.Join(dir, "data"), "--kubeconfig-out", kubeconfig}, args...)...)
	server.Stdout, server.Stderr = logFile, logFile
	// Should the test binary die without cleaning up (a panic, a timeout),
	// the kernel kills the server with it.
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := server.Start(); err != nil {
		return nil, err
	}
	c := &testCluster{kubeconfig: kubeconfig, own: true, server: server, exited: make(chan error, 1)}
	go func() { c.exited <- server.Wait() }()

	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz?exclude=informer-sync", apiserverPort)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-c.exited:
			log, _ := os.ReadFile(logFile.Name())
			return nil, fmt.Errorf("the test API server exited (%v):\n%s", err, tail(string(log), 20))
		default:
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if _, err := os.Stat(kubeconfig); err == nil {
					return c, nil
				}
			}
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("the test API server is not ready after 2 minutes; see %s", logFile.Name())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop terminates the server and waits until it is gone.
func (c *testCluster) stop() {
	if c == nil || c.server == nil {
		return
	}
	_ = c.server.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		_ = c.server.Process.Kill()
		<-c.exited
	}
	c.server = nil
}

func tail(s string, n int) string {
	lines := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			lines++
			if lines > n {
				return s[i+1:]
			}
		}
	}
	return s
}
