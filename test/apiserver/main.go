// Command crd-test-apiserver is the API server of kubectl-crd's end-to-end tests: the real
// apiextensions-apiserver (the code that serves, prunes and validates custom resources in every
// cluster) on an embedded etcd, on loopback, with a kubeconfig for kubectl and the plugin.
//
// It serves CustomResourceDefinitions and custom resources only: there is no core API, every
// request is anonymous and allowed but those of a few test users (auth.go), and no admission
// plugin runs. Never expose it.
//
// Build it with hack/test-apiserver.sh, which stamps the Kubernetes version into the binary: a
// plain go build reports v0.0.0-master, which the gcloud kubectl dispatcher cannot parse.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/klog/v2"
)

type config struct {
	port          int
	etcdPort      int
	dataDir       string
	kubeconfigOut string
	contextName   string
	legacyCRDs    []string
}

func main() {
	var c config
	flag.IntVar(&c.port, "port", 26443, "HTTPS port on 127.0.0.1")
	flag.IntVar(&c.etcdPort, "etcd-port", 22379, "etcd client port on 127.0.0.1; the etcd peer port is this + 1")
	flag.StringVar(&c.dataDir, "data-dir", "", "directory for etcd data and the serving certificate, kept across restarts (default: a temporary directory removed on exit)")
	flag.StringVar(&c.kubeconfigOut, "kubeconfig-out", "", "where to write the kubeconfig (default: <data-dir>/kubeconfig)")
	flag.StringVar(&c.contextName, "context-name", "crd-test", "kubeconfig context with namespace default; <name>-other has namespace other; <name>-denied, <name>-crds-only and <name>-objects-only have users refused all, all but reading CRDs, and CRDs; <name>-refused a token refused (401)")
	flag.Func("legacy-crd", "an apiextensions.k8s.io/v1beta1 CRD file to write into etcd before the server starts, past validation, like a legacy non-structural CRD of an upgraded cluster (repeatable)", func(f string) error {
		c.legacyCRDs = append(c.legacyCRDs, f)
		return nil
	})
	// Of klog's many flags only --v: they would swamp --help.
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	flag.Var(klogFlags.Lookup("v").Value, "v", "log verbosity")
	flag.Parse()

	// The first SIGTERM/SIGINT shuts down gracefully; stop() then restores the default, so a second one kills.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	go func() { <-ctx.Done(); stop() }()

	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "crd-test-apiserver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	dir := c.dataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "crd-test-apiserver-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	// The kubeconfig names the certificate by path, so that path must not depend on the working directory.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	kubeconfig := c.kubeconfigOut
	if kubeconfig == "" {
		kubeconfig = filepath.Join(dir, "kubeconfig")
	}

	etcd, err := startEtcd(filepath.Join(dir, "etcd"), filepath.Join(dir, "etcd.log"), c.etcdPort)
	if err != nil {
		return fmt.Errorf("starting etcd: %w", err)
	}
	defer etcd.Close()

	// Stop the API server if etcd fails underneath it, rather than serving errors.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case err := <-etcd.Err():
			klog.Errorf("etcd failed: %v", err)
			cancel()
		case <-ctx.Done():
		}
	}()

	if err := seedLegacyCRDs("http://"+etcd.Clients[0].Addr().String(), c.legacyCRDs); err != nil {
		return fmt.Errorf("--legacy-crd: %w", err)
	}
	server, certFile, err := newAPIServer(dir, c.port, etcd.Clients[0].Addr().String())
	if err != nil {
		return err
	}
	serverURL := fmt.Sprintf("https://127.0.0.1:%d", c.port)
	if err := writeKubeconfig(kubeconfig, serverURL, certFile, c.contextName); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	klog.Infof("serving %s, kubeconfig %s", serverURL, kubeconfig)

	// Returns once ctx is cancelled and in-flight requests are done; the deferred etcd.Close follows.
	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// newAPIServer configures the apiextensions-apiserver as its own command does, minus everything
// that needs the core API of a full cluster.
func newAPIServer(dir string, port int, etcdAddr string) (*apiserver.CustomResourceDefinitions, string, error) {
	// The core API options need a kubeconfig (else "unable to load in-cluster configuration");
	// this one's server refuses connections at once.
	noCoreAPI := filepath.Join(dir, "no-core-api.kubeconfig")
	if err := writeDeadKubeconfig(noCoreAPI); err != nil {
		return nil, "", err
	}

	o := options.NewCustomResourceDefinitionsServerOptions(os.Stdout, os.Stderr)
	r := o.RecommendedOptions
	r.Etcd.StorageConfig.Transport.ServerList = []string{"http://" + etcdAddr}
	r.SecureServing.BindAddress = net.IPv4(127, 0, 0, 1)
	r.SecureServing.BindPort = port
	o.ServerRunOptions.ExternalHost = "127.0.0.1" // advertised in discovery; else ":PORT"
	// Config() generates a self-signed certificate here unless one is already there.
	r.SecureServing.ServerCert.CertDirectory = filepath.Join(dir, "certs")
	r.CoreAPI.CoreAPIKubeconfigPath = noCoreAPI
	// Delegated authentication and authorization would send every token to a TokenReview and
	// every request to a SubjectAccessReview of the missing core API: all requests, the server's
	// own included, would fail. Without their options the server allows everything, and every
	// request is anonymous (below).
	r.Authentication = nil
	r.Authorization = nil
	// These plugins need namespaces, services or policy objects from the core API. Those an older
	// minor lacks (MutatingAdmissionPolicy before 1.32) are not named: it refuses unknown ones.
	registered := r.Admission.Plugins.Registered()
	for _, p := range []string{
		"NamespaceLifecycle",
		"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook",
		"MutatingAdmissionPolicy", "ValidatingAdmissionPolicy",
	} {
		if slices.Contains(registered, p) {
			r.Admission.DisablePlugins = append(r.Admission.DisablePlugins, p)
		}
	}
	r.Features.EnablePriorityAndFairness = false // its configuration objects live in the core API

	if err := o.ServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, "", err
	}
	if err := o.Complete(); err != nil {
		return nil, "", err
	}
	if err := o.Validate(); err != nil {
		return nil, "", err
	}
	cfg, err := o.Config()
	if err != nil {
		return nil, "", err
	}

	// Whatever token a request carries, it is system:anonymous (the server's loopback token still
	// makes it system:apiserver), except the test users' and refused tokens (auth.go). Without an
	// authenticator requests would have no user at all.
	cfg.GenericConfig.Authentication.Authenticator = newAuthenticator()
	cfg.GenericConfig.Authorization.Authorizer = newAuthorizer()

	// Config() sets only OpenAPIV3Config; without the v2 config /openapi/v2 is 404.
	cfg.GenericConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(
		openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions),
		openapinamer.NewDefinitionNamer(apiserver.Scheme))
	cfg.GenericConfig.OpenAPIConfig.Info.Title = "crd-test-apiserver"

	server, err := cfg.Complete().New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, "", err
	}
	installAPIsDiscovery(server)
	installNamespaces(server)
	return server, r.SecureServing.ServerCert.CertKey.CertFile, nil
}
