package plugin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// cluster is the cluster of the kubeconfig flags. Nothing is contacted until
// a command needs it; the CRD list is fetched once per run.
type cluster struct {
	flags *genericclioptions.ConfigFlags

	// mu guards the clients, made on first use by whichever goroutine
	// checking objects asks first.
	mu sync.Mutex

	client    crdClient
	discovery discovery.CachedDiscoveryInterface
	dynamic   dynamic.Interface
	crds      []*liveCRD // nil until listed

	// kept: the run's remote sources are in the cache (sourcesKept).
	kept atomic.Bool
}

// liveCRD is a CRD as the cluster serves it. Its schemas are converted on
// first use only: a cluster has hundreds of CRDs, a run needs a few.
type liveCRD struct {
	Object *apiextensionsv1.CustomResourceDefinition
	crd    *schema.CRD
}

// CRD returns the converted CRD.
func (l *liveCRD) CRD() *schema.CRD {
	if l.crd == nil {
		l.crd = schema.NewCRD(l.Object)
	}
	return l.crd
}

// GroupKind is the group and kind of the CRD's objects.
func (l *liveCRD) GroupKind() runtimeschema.GroupKind {
	return runtimeschema.GroupKind{Group: l.Object.Spec.Group, Kind: l.Object.Spec.Names.Kind}
}

func newCluster(flags *genericclioptions.ConfigFlags) *cluster { return &cluster{flags: flags} }

// clusterError is a cluster problem: exit 3.
func clusterError(format string, args ...interface{}) error {
	return &ExitError{Code: ExitInternal, Err: fmt.Errorf(format, args...)}
}

// where names the cluster for messages: the server and the context.
func (c *cluster) where() string {
	raw, err := c.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return "the cluster"
	}
	ctxName := raw.CurrentContext
	if c.flags.Context != nil && *c.flags.Context != "" {
		ctxName = *c.flags.Context
	}
	server := ""
	if cfg, err := c.flags.ToRESTConfig(); err == nil {
		server = cfg.Host
	}
	switch {
	case server != "" && ctxName != "":
		return fmt.Sprintf("%s (context %q)", server, ctxName)
	case server != "":
		return server
	case ctxName != "":
		return fmt.Sprintf("context %q", ctxName)
	}
	return "the cluster"
}

const offlineHint = "to work without a cluster, pass --offline and give the CRDs with --crd-file"

// sourcesKept notes that the run's remote sources are in the cache: the
// cluster's errors then say that --offline reads them from there.
func (c *cluster) sourcesKept() { c.kept.Store(true) }

// offlineHint is offlineHint, and that the run's remote sources are in the
// cache when they are.
func (c *cluster) offlineHint() string {
	if c.kept.Load() {
		return offlineHint + "; the remote sources of --crd-file and --old are in the cache now, and --offline reads them from there"
	}
	return offlineHint
}

func (c *cluster) connect() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connectLocked()
}

func (c *cluster) connectLocked() error {
	if c.client != nil {
		return nil
	}
	// client-go would fall back to localhost:8080; say what is missing instead.
	if raw, err := c.flags.ToRawKubeConfigLoader().RawConfig(); err == nil && len(raw.Clusters) == 0 &&
		(c.flags.APIServer == nil || *c.flags.APIServer == "") && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return clusterError("no cluster configured: the kubeconfig has no cluster (set KUBECONFIG or --kubeconfig); %s", c.offlineHint())
	}
	cfg, err := c.flags.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return clusterError("no cluster configured: no kubeconfig found (set KUBECONFIG or --kubeconfig); %s", c.offlineHint())
		}
		return clusterError("kubeconfig: %w", err)
	}
	c.client, err = newCRDClient(cfg)
	if err != nil {
		return clusterError("kubeconfig: %w", err)
	}
	c.discovery, err = c.flags.ToDiscoveryClient()
	if err != nil {
		return clusterError("kubeconfig: %w", err)
	}
	if cfg.Timeout == 0 {
		// --request-timeout=0, no limit: client-go's discovery makes 0 32 s.
		if rc, ok := c.discovery.RESTClient().(*rest.RESTClient); ok && rc.Client != nil {
			rc.Client.Timeout = 0
		}
	}
	return nil
}

// apiError turns a failed request into a message that says what was tried,
// where, and what to do. NotFound is the caller's to handle.
func (c *cluster) apiError(what string, err error) error {
	where := c.where()
	var urlErr *url.Error
	var netErr net.Error
	var credErr *credentialError
	var tooLarge *responseTooLargeError
	switch {
	case errors.As(err, &credErr):
		return clusterError("%s on %s: %v", what, where, credErr)
	case errors.As(err, &tooLarge):
		return clusterError("%s on %s: %v", what, where, tooLarge)
	case apierrors.IsForbidden(err):
		return clusterError("%s on %s: forbidden: %s", what, where, statusMessage(err))
	case apierrors.IsUnauthorized(err):
		return clusterError("%s on %s: unauthorized: the credentials of the kubeconfig were refused (%s)", what, where, statusMessage(err))
	case isCertificateError(err):
		// The server answered: "cannot reach" and --offline would send the user the wrong way.
		return clusterError("%s on %s: TLS: the server's certificate is not trusted: %w (check the kubeconfig's certificate-authority and tls-server-name)", what, where, unwrapURLError(err))
	case errors.As(err, &netErr) && netErr.Timeout():
		return clusterError("%s on %s: timed out (raise --request-timeout?): %w", what, where, err)
	case errors.As(err, &urlErr):
		return clusterError("%s: cannot reach the API server at %s: %w; %s", what, where, urlErr.Err, c.offlineHint())
	}
	return clusterError("%s on %s: %w", what, where, err)
}

// isCertificateError reports whether the TLS handshake failed on the server's certificate.
func isCertificateError(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// unwrapURLError drops the method and URL that a *url.Error adds: the message names the server already.
func unwrapURLError(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}

func statusMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// CRDs lists every CustomResourceDefinition of the cluster, once.
func (c *cluster) CRDs(ctx context.Context) ([]*liveCRD, error) {
	if c.crds != nil {
		return c.crds, nil
	}
	if err := c.connect(); err != nil {
		return nil, err
	}
	var crds []*liveCRD
	opts := metav1.ListOptions{Limit: crdsPerPage}
	for {
		list, err := c.client.List(ctx, opts)
		if err != nil {
			return nil, c.apiError("listing CustomResourceDefinitions", err)
		}
		for i := range list.Items {
			crds = append(crds, newLiveCRD(&list.Items[i]))
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	c.crds = crds
	if c.crds == nil {
		c.crds = []*liveCRD{}
	}
	return c.crds, nil
}

// crdsPerPage is how many CRDs a request lists: a page of the largest
// (etcd takes objects up to 1.5 MiB by default) stays under
// maxResponseBytes, and a cluster of hundreds is read in a few requests.
const crdsPerPage = 50

// CRDsOf returns the CRDs of the cluster that define kinds, found as kubectl
// finds a kind: discovery maps it to its resource, and the CRD of a resource
// is named resource.group (the server allows no other name), read with one
// GET, a few at a time. Listing every CRD instead transfers all of them on
// every run: tens of megabytes on a cluster with hundreds. Wherever that way
// is in doubt (a kind discovery does not map, as when its versions are not
// served or the discovery cache is older than the CRD; a name that is not a
// CRD of the kind), every CRD is listed, as before.
func (c *cluster) CRDsOf(ctx context.Context, kinds map[runtimeschema.GroupKind]bool) ([]*liveCRD, error) {
	if c.crds == nil {
		found, ok, err := c.crdsByName(ctx, kinds)
		if err != nil || ok {
			return found, err
		}
	}
	all, err := c.CRDs(ctx)
	if err != nil {
		return nil, err
	}
	var out []*liveCRD
	for _, l := range all {
		if kinds[l.GroupKind()] {
			out = append(out, l)
		}
	}
	return out, nil
}

// getsInFlight is how many CRDs CRDsOf reads at once.
const getsInFlight = 8

// crdsByName is CRDsOf through discovery; ok is false where it cannot tell.
func (c *cluster) crdsByName(ctx context.Context, kinds map[runtimeschema.GroupKind]bool) (found []*liveCRD, ok bool, err error) {
	if err := c.connect(); err != nil {
		return nil, false, err
	}
	gks := make([]runtimeschema.GroupKind, 0, len(kinds))
	for gk := range kinds {
		gks = append(gks, gk)
	}
	sort.Slice(gks, func(i, j int) bool { return gks[i].String() < gks[j].String() })
	names := make([]string, len(gks))
	for i, gk := range gks {
		resource, err := c.resourceOf(ctx, gk)
		if err != nil || resource == "" {
			return nil, false, err
		}
		names[i] = resource + "." + gk.Group
	}
	got := make([]*apiextensionsv1.CustomResourceDefinition, len(gks))
	errs := make([]error, len(gks))
	var wg sync.WaitGroup
	slots := make(chan struct{}, getsInFlight)
	for i := range gks {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			got[i], errs[i] = c.client.Get(ctx, names[i], metav1.GetOptions{})
		}()
	}
	wg.Wait()
	for i, gk := range gks {
		if apierrors.IsNotFound(errs[i]) {
			return nil, false, nil // not a CRD (an aggregated API), or discovery is out of date
		}
		if errs[i] != nil {
			return nil, false, c.apiError(fmt.Sprintf("getting CustomResourceDefinition %q", names[i]), errs[i])
		}
		l := newLiveCRD(got[i])
		if l.GroupKind() != gk {
			return nil, false, nil
		}
		found = append(found, l)
	}
	return found, true, nil
}

// resourceOf is the resource of a kind, as discovery tells it (the
// preferred version first): "" when no served version has the kind.
func (c *cluster) resourceOf(ctx context.Context, gk runtimeschema.GroupKind) (string, error) {
	ctx, d := c.discoveryClient(ctx)
	groups, err := d.ServerGroupsWithContext(ctx)
	if err != nil {
		return "", c.apiError("discovering the API groups", err)
	}
	for _, g := range groups.Groups {
		if g.Name != gk.Group {
			continue
		}
		versions := []string{g.PreferredVersion.Version}
		for _, v := range g.Versions {
			if v.Version != g.PreferredVersion.Version {
				versions = append(versions, v.Version)
			}
		}
		for _, v := range versions {
			r, err := c.resourceIn(ctx, d, runtimeschema.GroupVersion{Group: gk.Group, Version: v}, gk.Kind)
			if r != "" || err != nil {
				return r, err
			}
		}
	}
	return "", nil
}

// discoveryClient is the discovery client, with ctx and a logger that
// drops client-go's own report of a failure: it is ours to report, in one
// line.
func (c *cluster) discoveryClient(ctx context.Context) (context.Context, discovery.DiscoveryInterfaceWithContext) {
	return klog.NewContext(ctx, logr.Discard()), discovery.ToDiscoveryInterfaceWithContext(c.discovery)
}

// resourceIn is the resource of kind in gv, as discovery tells it: "" when
// gv does not serve kind.
func (c *cluster) resourceIn(ctx context.Context, d discovery.DiscoveryInterfaceWithContext, gv runtimeschema.GroupVersion, kind string) (string, error) {
	list, err := d.ServerResourcesForGroupVersionWithContext(ctx, gv.String())
	if err != nil {
		return "", c.apiError("discovering "+gv.String(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return r.Name, nil
		}
	}
	return "", nil
}

func newLiveCRD(obj *apiextensionsv1.CustomResourceDefinition) *liveCRD {
	return &liveCRD{Object: obj}
}

// Find resolves a name the way kubectl does for resources: the CRD's name
// (plural.group), or its plural, singular, kind or a short name, optionally
// followed by .group. A name matching CRDs of several groups is an error
// that lists them.
func (c *cluster) Find(ctx context.Context, name string) (*liveCRD, error) {
	if strings.Contains(name, ".") && c.crds == nil {
		// Most likely the full name: one GET instead of a LIST.
		if err := c.connect(); err != nil {
			return nil, err
		}
		obj, err := c.client.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return newLiveCRD(obj), nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, c.apiError(fmt.Sprintf("getting CustomResourceDefinition %q", name), err)
		}
	}
	crds, err := c.CRDs(ctx)
	if err != nil {
		return nil, err
	}
	var matches []*liveCRD
	for _, l := range crds {
		if crdMatches(l.Object, name) {
			matches = append(matches, l)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, usageErrorf("no CustomResourceDefinition %q on %s (a name, plural, singular, kind or short name, optionally with .group; see kubectl get crd)", name, c.where())
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.Object.Name
	}
	sort.Strings(names)
	return nil, usageErrorf("%q names several CustomResourceDefinitions on %s: %s; give the full name", name, c.where(), strings.Join(names, ", "))
}

func crdMatches(crd *apiextensionsv1.CustomResourceDefinition, name string) bool {
	if crd.Name == name {
		return true
	}
	resource, group, _ := strings.Cut(name, ".")
	if group != "" && group != crd.Spec.Group {
		return false
	}
	n := crd.Spec.Names
	candidates := append([]string{n.Plural, n.Singular, strings.ToLower(n.Kind)}, n.ShortNames...)
	for _, cand := range candidates {
		if cand != "" && strings.EqualFold(cand, resource) {
			return true
		}
	}
	return false
}

// Serves reports whether the cluster serves kind in group/version by any
// API, built in or aggregated (discovery, cached on disk like kubectl's).
func (c *cluster) Serves(ctx context.Context, gvk runtimeschema.GroupVersionKind) (bool, error) {
	if err := c.connect(); err != nil {
		return false, err
	}
	ctx, d := c.discoveryClient(ctx)
	groups, err := d.ServerGroupsWithContext(ctx)
	if err != nil {
		return false, c.apiError("discovering the API groups", err)
	}
	if !servesGroupVersion(groups, gvk.GroupVersion()) {
		return false, nil
	}
	r, err := c.resourceIn(ctx, d, gvk.GroupVersion(), gvk.Kind)
	return r != "", err
}

func servesGroupVersion(groups *metav1.APIGroupList, gv runtimeschema.GroupVersion) bool {
	for _, g := range groups.Groups {
		if g.Name != gv.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == gv.Version {
				return true
			}
		}
	}
	return false
}

// Namespace is the namespace for objects without one, and whether -n set it.
func (c *cluster) Namespace() (string, bool) {
	ns, explicit, err := c.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false
	}
	return ns, explicit
}

// GetObject reads an object from the cluster; nil when it does not exist.
func (c *cluster) GetObject(ctx context.Context, gvr runtimeschema.GroupVersionResource, namespace, name string) (map[string]interface{}, error) {
	if err := c.dynamicClient(); err != nil {
		return nil, err
	}
	var ri dynamic.ResourceInterface = c.dynamic.Resource(gvr)
	if namespace != "" {
		ri = c.dynamic.Resource(gvr).Namespace(namespace)
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, c.apiError(fmt.Sprintf("getting %s %s/%s", gvr.GroupResource(), namespace, name), err)
	}
	return obj.Object, nil
}

func (c *cluster) dynamicClient() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.connectLocked(); err != nil {
		return err
	}
	if c.dynamic == nil {
		cfg, err := c.flags.ToRESTConfig()
		if err != nil {
			return clusterError("kubeconfig: %w", err)
		}
		if c.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
			return clusterError("kubeconfig: %w", err)
		}
	}
	return nil
}

// ListObjects lists the objects of gvr in every namespace, chunk of them a
// request (kubectl's --chunk-size; 0: all in one), and passes each page to
// page with the number of objects the server says remain after it (-1 when
// it does not say): memory holds one page.
func (c *cluster) ListObjects(ctx context.Context, gvr runtimeschema.GroupVersionResource, chunk int64, page func(items []unstructured.Unstructured, remaining int64) error) error {
	if err := c.dynamicClient(); err != nil {
		return err
	}
	opts := metav1.ListOptions{Limit: chunk}
	for {
		list, err := c.dynamic.Resource(gvr).List(ctx, opts)
		var tooLarge *responseTooLargeError
		if errors.As(err, &tooLarge) {
			return clusterError("%v; a smaller --chunk-size lists fewer objects a request", c.apiError("listing "+gvr.GroupResource().String()+" "+gvr.Version, err))
		}
		if err != nil {
			return c.apiError("listing "+gvr.GroupResource().String()+" "+gvr.Version, err)
		}
		remaining := int64(-1)
		if r := list.GetRemainingItemCount(); r != nil {
			remaining = *r
		} else if list.GetContinue() == "" {
			remaining = 0
		}
		if err := page(list.Items, remaining); err != nil {
			return err
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}
