package e2e

import (
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/endpoints/request"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/internal/release"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
)

const gitopsDir = "examples/gitops"

// gitopsRender is what Argo CD or Flux applies for the check: the Job, its
// ServiceAccount's ClusterRole and binding, and the ConfigMaps it mounts.
type gitopsRender struct {
	docs       []map[string]interface{}
	job        batchv1.Job
	role       rbacv1.ClusterRole
	binding    rbacv1.ClusterRoleBinding
	configMaps map[string]corev1.ConfigMap // by namespace/name
}

// gitopsBuilds are the two renders of the example, as each tool builds it:
// Argo CD with kustomize's defaults, Flux with the load restrictor off
// (fluxcd/pkg/kustomize: it builds in a chroot of the source's checkout).
var gitopsBuilds = []struct{ name, dir, restrictor string }{
	{"argocd", ".", "LoadRestrictionsRootOnly"},
	{"flux", "flux/check", "LoadRestrictionsNone"},
}

// buildGitops runs the real kustomize on dir (relative to root, a copy of
// examples/gitops) and picks out the check's objects.
func buildGitops(t *testing.T, root, dir, restrictor string) gitopsRender {
	t.Helper()
	r := NewTest(t).Run(kustomize, "build", "--load-restrictor", restrictor, filepath.Join(root, dir))
	if r.Code != 0 {
		t.Fatalf("kustomize build %s: exit %d\n%s", dir, r.Code, r.Stderr)
	}
	out := gitopsRender{configMaps: map[string]corev1.ConfigMap{}}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(r.Stdout), 4096)
	for {
		var doc map[string]interface{}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		out.docs = append(out.docs, doc)
		var into interface{}
		switch doc["kind"] {
		case "Job":
			into = &out.job
		case "ClusterRole":
			into = &out.role
		case "ClusterRoleBinding":
			into = &out.binding
		case "ConfigMap":
			var cm corev1.ConfigMap
			fromMap(t, doc, &cm)
			out.configMaps[cm.Namespace+"/"+cm.Name] = cm
		}
		if into != nil {
			fromMap(t, doc, into)
		}
	}
	if out.job.Name == "" || out.role.Name == "" || out.binding.Name == "" {
		t.Fatalf("kustomize build %s: no Job, ClusterRole or ClusterRoleBinding in\n%s", dir, r.Stdout)
	}
	return out
}

func fromMap(t *testing.T, doc map[string]interface{}, into interface{}) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(doc, into, true); err != nil {
		t.Fatalf("%s %v: %v", doc["kind"], doc["metadata"], err)
	}
}

// copyGitops copies examples/gitops to a temporary directory, with
// crds/gizmos.yaml replaced by crd (a file of the repository) unless empty.
func copyGitops(t *testing.T, crd string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join(repoRoot(), gitopsDir)
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if rel == filepath.Join("crds", "gizmos.yaml") && crd != "" {
			path = filepath.Join(repoRoot(), crd)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// The rules every authenticated user has in a cluster's default RBAC
// (system:discovery and system:public-info-viewer, bound to
// system:authenticated): discovery and /version, which the check reads too.
var discoveryRules = []rbacv1.PolicyRule{{
	Verbs: []string{"get"},
	NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
		"/readyz", "/version", "/version/"},
}}

// readOnly are the verbs that write nothing, of every resource and path.
var readOnly = []rbacv1.PolicyRule{
	{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}},
}

// rbacProxy stands in front of the test API server, which authorizes
// everyone, as the cluster's RBAC authorizer would for one ServiceAccount:
// each request is described as kube-apiserver describes it (its
// RequestInfoFactory: verb, group, resource, name, or the non-resource
// path) and allowed only if rules cover it, by the API server's own
// comparison of rules (component-helpers' Covers, which RBAC's escalation
// check uses); any other is refused with a 403, as the server would.
type rbacProxy struct {
	srv   *httptest.Server
	rules []rbacv1.PolicyRule

	mu       sync.Mutex
	asked    []rbacv1.PolicyRule // every request, as a rule
	refused  []string
	requests []string
}

var requestInfo = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

func startRBACProxy(t *testing.T, rules []rbacv1.PolicyRule) *rbacProxy {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &rbacProxy{rules: rules}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rule, err := asRule(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		covered, _ := rbacvalidation.Covers(p.rules, []rbacv1.PolicyRule{rule})
		p.mu.Lock()
		p.asked = append(p.asked, rule)
		p.requests = append(p.requests, r.Method+" "+r.URL.RequestURI())
		if !covered {
			p.refused = append(p.refused, r.Method+" "+r.URL.RequestURI())
		}
		p.mu.Unlock()
		if !covered {
			forbidden(w, r, rule)
			return
		}
		p.forward(w, r, rt, cfg.Host)
	}))
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	return p
}

// asRule is the request as the one rule that allows exactly it.
func asRule(r *http.Request) (rbacv1.PolicyRule, error) {
	info, err := requestInfo.NewRequestInfo(r)
	if err != nil {
		return rbacv1.PolicyRule{}, err
	}
	if !info.IsResourceRequest {
		return rbacv1.PolicyRule{Verbs: []string{info.Verb}, NonResourceURLs: []string{info.Path}}, nil
	}
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	rule := rbacv1.PolicyRule{Verbs: []string{info.Verb}, APIGroups: []string{info.APIGroup}, Resources: []string{resource}}
	if info.Name != "" {
		rule.ResourceNames = []string{info.Name}
	}
	return rule, nil
}

// forbidden answers as kube-apiserver does when RBAC denies a request.
func forbidden(w http.ResponseWriter, r *http.Request, rule rbacv1.PolicyRule) {
	var status *apierrors.StatusError
	if len(rule.Resources) > 0 {
		name := ""
		if len(rule.ResourceNames) > 0 {
			name = rule.ResourceNames[0]
		}
		status = apierrors.NewForbidden(schema.GroupResource{Group: rule.APIGroups[0], Resource: rule.Resources[0]}, name,
			fmt.Errorf("the example's RBAC does not allow %s", rule.Verbs[0]))
	} else {
		status = apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf("the example's RBAC does not allow %s %s", rule.Verbs[0], r.URL.Path))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(status.Status())
}

func (p *rbacProxy) forward(w http.ResponseWriter, r *http.Request, rt http.RoundTripper, host string) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host, out.Host = "https", strings.TrimPrefix(host, "https://"), ""
	out.Header.Del("Authorization") // the ServiceAccount's; the test server's own credentials go instead
	resp, err := rt.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// kubeconfig stands in for the Pod's in-cluster config: the proxy's
// address and certificate, a token of the ServiceAccount's.
func (p *rbacProxy) kubeconfig(t *testing.T) string {
	t.Helper()
	return faultKubeconfig(t, func(c *clientcmdapi.Cluster) {
		c.Server = p.srv.URL
		c.CertificateAuthority = ""
		c.CertificateAuthorityData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	})
}

func (p *rbacProxy) result() (asked []rbacv1.PolicyRule, refused, requests []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked), slices.Clone(p.refused), slices.Clone(p.requests)
}

// runJob runs the Job's one container as the kubelet would, here: its
// command and args as the manifest has them, the image's binary the built
// one, each volume a directory at its mount path (a ConfigMap's laid out as
// the kubelet's atomic writer lays it out: the keys are links through
// ..data to a hidden directory), the image's environment and the
// container's, and kubeconfig standing in for the in-cluster config.
func runJob(t *testing.T, r gitopsRender, kubeconfig string) Result {
	t.Helper()
	spec := r.job.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("Job %s: want one container and no init container", r.job.Name)
	}
	c := spec.Containers[0]
	mounts := map[string]string{} // mount path: the directory standing in for it
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			t.Fatalf("Job %s: volume %q is not declared", r.job.Name, m.Name)
		}
		mounts[m.MountPath] = volumeDir(t, r, spec.Volumes[i])
	}
	local := func(s string) string {
		for mp, dir := range mounts {
			if s == mp || strings.HasPrefix(s, mp+"/") {
				return dir + strings.TrimPrefix(s, mp)
			}
		}
		return s
	}
	if len(c.Command) == 0 || c.Command[0] != release.ImageBinary {
		t.Fatalf("Job %s: command %q does not run the image's %s", r.job.Name, c.Command, release.ImageBinary)
	}
	var args []string
	for _, a := range append(c.Command[1:], c.Args...) {
		args = append(args, local(a))
	}
	env := append([]string{"KUBECONFIG=" + kubeconfig}, release.ImageEnv...)
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("Job %s: env %s from a source: not run here", r.job.Name, e.Name)
		}
		env = append(env, e.Name+"="+local(e.Value))
	}
	x := NewTest(t).WithDir(t.TempDir())
	x.env = env
	return x.Run("kubectl-crd", args...)
}

// volumeDir makes the directory of one volume: a ConfigMap's files, or an
// empty directory.
func volumeDir(t *testing.T, r gitopsRender, v corev1.Volume) string {
	t.Helper()
	dir := t.TempDir()
	switch {
	case v.EmptyDir != nil:
		return dir
	case v.ConfigMap != nil:
		cm, ok := r.configMaps[r.job.Namespace+"/"+v.ConfigMap.Name]
		if !ok {
			t.Fatalf("Job %s mounts ConfigMap %s/%s, which the build does not make", r.job.Name, r.job.Namespace, v.ConfigMap.Name)
		}
		if len(v.ConfigMap.Items) > 0 || len(cm.Data) == 0 {
			t.Fatalf("ConfigMap %s: items, or no data: not laid out here", cm.Name)
		}
		ts := "..2026_11_28_00_00_00.000000000"
		if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		for key, data := range cm.Data {
			if err := os.WriteFile(filepath.Join(dir, ts, key), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..data", key), filepath.Join(dir, key)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Fatalf("Job %s: volume %s of a kind not run here", r.job.Name, v.Name)
	return ""
}

// bound checks that the ClusterRoleBinding gives the ClusterRole, in every
// namespace, to the Job's ServiceAccount, and returns its rules.
func bound(t *testing.T, r gitopsRender) []rbacv1.PolicyRule {
	t.Helper()
	sa := r.job.Spec.Template.Spec.ServiceAccountName
	want := rbacv1.Subject{Kind: "ServiceAccount", Name: sa, Namespace: r.job.Namespace}
	if sa == "" || !slices.Contains(r.binding.Subjects, want) {
		t.Fatalf("ClusterRoleBinding %s does not bind the Job's ServiceAccount %s/%s: %+v", r.binding.Name, r.job.Namespace, sa, r.binding.Subjects)
	}
	if r.binding.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.role.Name}) {
		t.Fatalf("ClusterRoleBinding %s refers to %+v, not ClusterRole %s", r.binding.Name, r.binding.RoleRef, r.role.Name)
	}
	return r.role.Rules
}

// strictDecode decodes a built-in object as kube-apiserver does with
// fieldValidation=Strict: an unknown or duplicate field is an error.
func strictDecode(doc map[string]interface{}) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, _, err = strictDecoder.Decode(b, nil, nil)
	return err
}

var strictDecoder = serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// The check Job of examples/gitops, as Argo CD and as Flux render it, run
// as its Pod would run it against the test API server through the
// example's RBAC: a CRD new to the cluster and a safe upgrade pass (exit 0),
// examples/krm-upgrade's new CRD fails it (exit 1) naming the gizmos it
// hurts and no other. Every request the check makes is one its
// ClusterRole allows, and reads; the ClusterRole grants no verb that
// writes; and each of its rules is needed: without it, some case is
// refused, and the Job fails (exit 3), never passes.
func TestGitOpsCheckJob(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	x := NewTest(t)
	k := kubectls[0].Path
	const crdName = "crd/gizmos.upgrade.example.com"
	// Gone before and after, with its gizmos: another test's may still be terminating.
	x.Run(k, "delete", crdName, "--ignore-not-found")
	t.Cleanup(func() { x.Run(k, "delete", crdName, "--ignore-not-found") })
	safe, breaking := copyGitops(t, ""), copyGitops(t, filepath.Join(krmUpgradeDir, "crd.yaml"))
	cases := []struct {
		name, root string
		onCluster  bool // the old CRD and the gizmos are on the cluster
		code       int
		hurt       []string
	}{
		{"new to the cluster", safe, false, 0, nil},
		{"safe", safe, true, 0, nil},
		{"breaking", breaking, true, 1, []string{"g1", "g2", "g3"}},
	}
	needed := map[string]map[int]bool{}
	for _, tc := range cases {
		if tc.onCluster {
			gizmosOnCluster(t, x, k, crdName)
		}
		for _, b := range gitopsBuilds {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				r := buildGitops(t, tc.root, b.dir, b.restrictor)
				rules := bound(t, r)
				if ok, writes := rbacvalidation.Covers(readOnly, rules); !ok {
					t.Errorf("ClusterRole %s grants more than reading: %+v", r.role.Name, writes)
				}
				p := startRBACProxy(t, append(slices.Clone(rules), discoveryRules...))
				res := runJob(t, r, p.kubeconfig(t))
				asked, refused, requests := p.result()
				t.Logf("requests: %q", requests)
				if len(refused) > 0 {
					t.Errorf("refused by the example's RBAC: %q", refused)
				}
				if ok, writes := rbacvalidation.Covers(readOnly, asked); !ok {
					t.Errorf("requests that write: %+v", writes)
				}
				checkJobVerdict(t, res, tc.code, tc.hurt)
				if needed[b.name] == nil {
					needed[b.name] = map[int]bool{}
				}
				for i := range rules {
					without := append(slices.Delete(slices.Clone(rules), i, i+1), discoveryRules...)
					p := startRBACProxy(t, without)
					res := runJob(t, r, p.kubeconfig(t))
					if _, refused, _ := p.result(); len(refused) > 0 {
						needed[b.name][i] = true
						if res.Code != 3 {
							t.Errorf("without rule %d, refused %q: exit %d, want 3\n%s%s", i, refused, res.Code, res.Stdout, res.Stderr)
						}
					}
				}
			})
		}
	}
	for _, b := range gitopsBuilds {
		for i, rule := range buildGitops(t, safe, b.dir, b.restrictor).role.Rules {
			if !needed[b.name][i] {
				t.Errorf("%s: rule %d (%+v) of the ClusterRole is needed by no case", b.name, i, rule)
			}
		}
	}
}

// gizmosOnCluster creates examples/krm-upgrade's old Gizmo CRD and its
// gizmos, once.
func gizmosOnCluster(t *testing.T, x *Test, k, crdName string) {
	t.Helper()
	if r := x.Run(k, "get", crdName); r.Code == 0 {
		return
	}
	if r := x.Run(k, "create", "-f", filepath.Join(krmUpgradeDir, "previous", "crd.yaml")); r.Code != 0 {
		t.Fatalf("kubectl create the old CRD: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := x.Run(k, "wait", "--for=condition=Established", "--timeout=60s", crdName); r.Code != 0 {
		t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
	}
	ri := dynamicClient(t).Resource(schema.GroupVersionResource{Group: "upgrade.example.com", Version: "v1", Resource: "gizmos"}).Namespace("default")
	for _, d := range readDocs(t, filepath.Join(repoRoot(), krmUpgradeDir, "gizmos.yaml")) {
		if _, err := createRetrying(t.Context(), ri, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(d.Object)}); err != nil {
			t.Fatalf("%s: %v", d.Source, err)
		}
	}
}

// checkJobVerdict: the exit code, and the gizmos named as hurt, exactly.
func checkJobVerdict(t *testing.T, res Result, code int, hurt []string) {
	t.Helper()
	if res.Code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, code, res.Stdout, res.Stderr)
	}
	var named []string
	for _, line := range strings.Split(res.Stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, "    Gizmo default/"); ok {
			if name, _, ok := strings.Cut(rest, ":"); ok && !slices.Contains(named, name) {
				named = append(named, name)
			}
		}
	}
	if !slices.Equal(named, hurt) {
		t.Errorf("objects hurt %q, want %q\n%s", named, hurt, res.Stdout)
	}
}

// The manifests of examples/gitops, validated by the tool and by the test
// API server. kubectl crd prune, with the CRDs of Argo CD's Application and
// Flux's GitRepository and Kustomization from the corpus, passes every
// manifest, built-in kinds checked against Kubernetes' (and a misspelt field
// of each custom resource fails it). The test API server, those CRDs
// created first, takes a server-side dry-run create of every custom resource
// and CRD; it serves no built-in group but apiextensions.k8s.io, so each
// built-in kind it refuses to map is decoded instead as kube-apiserver
// decodes a request with fieldValidation=Strict.
func TestGitOpsManifests(t *testing.T) {
	requireOwnCluster(t) // it creates CRDs
	dir := corpus.Dir(t)
	crds := []string{
		filepath.Join(dir, "crds", "argo-cd", "argo-cd@v3.6.1", "manifests", "crds", "application-crd.yaml"),
		filepath.Join(dir, "crds", "flux", "flux-kustomize-controller@v1.10.1", "config", "crd", "bases", "kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
		filepath.Join(dir, "crds", "flux", "flux-source-controller@v1.10.1", "config", "crd", "bases", "source.toolkit.fluxcd.io_gitrepositories.yaml"),
	}
	files := []string{filepath.Join(gitopsDir, "argocd", "application.yaml"), filepath.Join(gitopsDir, "flux", "kustomizations.yaml")}
	x := NewTest(t)
	var docs []map[string]interface{}
	for _, b := range gitopsBuilds {
		docs = append(docs, buildGitops(t, filepath.Join(repoRoot(), gitopsDir), b.dir, b.restrictor).docs...)
	}
	for _, f := range files {
		for _, d := range readDocs(t, filepath.Join(repoRoot(), f)) {
			docs = append(docs, d.Object)
		}
	}
	all := filepath.Join(t.TempDir(), "all.yaml")
	writeDocs(t, all, docs)

	prune := []string{"prune", "--offline", "--fail-on-prune"}
	for _, c := range crds {
		prune = append(prune, "--crd-file", c)
	}
	if r := x.Run("kubectl-crd", append(prune, "-f", all)...); r.Code != 0 || r.Stderr != "" {
		t.Errorf("kubectl crd prune: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, typo := range []struct{ file, field, typo string }{
		{files[0], "destination", "destinaton"},
		{files[1], "wait", "wiat"},
	} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), typo.file))
		if err != nil {
			t.Fatal(err)
		}
		in := strings.Replace(string(b), "\n  "+typo.field+":", "\n  "+typo.typo+":", 1)
		r := NewTest(t).WithStdin(in).Run("kubectl-crd", append(prune, "-f", "-")...)
		if want := `pruned unknown field "spec.` + typo.typo + `"`; r.Code != 1 || !strings.Contains(r.Stderr, want) {
			t.Errorf("%s with %q: exit %d, want 1 and %s\n%s", typo.file, typo.typo, r.Code, want, r.Stderr)
		}
	}
	dryRunGitops(t, x, crds, docs)
}

// dryRunGitops creates crds on the test API server, then dry-runs a create
// of every document with kubectl (its default --validate=strict).
func dryRunGitops(t *testing.T, x *Test, crds []string, docs []map[string]interface{}) {
	t.Helper()
	k := kubectls[0].Path
	for _, c := range crds {
		if r := x.Run(k, "create", "-f", c, "-o", "name"); r.Code != 0 {
			t.Fatalf("kubectl create -f %s: exit %d\n%s", c, r.Code, r.Stderr)
		}
		t.Cleanup(func() { x.Run(k, "delete", "-f", c) })
	}
	for _, c := range crds {
		if r := x.Run(k, "wait", "--for=condition=Established", "--timeout=60s", "-f", c); r.Code != 0 {
			t.Fatalf("kubectl wait: exit %d\n%s", r.Code, r.Stderr)
		}
	}
	builtins := 0
	for _, d := range docs {
		file := filepath.Join(t.TempDir(), "doc.yaml")
		writeDocs(t, file, []map[string]interface{}{d})
		name := fmt.Sprintf("%s %v", d["kind"], d["metadata"].(map[string]interface{})["name"])
		apiVersion, _ := d["apiVersion"].(string)
		served := !builtin.IsBuiltin(apiVersion) || strings.HasPrefix(apiVersion, "apiextensions.k8s.io/")
		var r Result
		// Right after a CRD is established, its kind may not map for a moment.
		for try := 0; try == 0 || served && r.Code != 0 && noMatchRE.MatchString(r.Stderr) && try < 50; try++ {
			if try > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			r = x.Run(k, "create", "--dry-run=server", "-f", file)
		}
		switch {
		case r.Code == 0:
		case !served && noMatchRE.MatchString(r.Stderr):
			builtins++
			if err := strictDecode(d); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		default:
			t.Errorf("%s: kubectl create --dry-run=server: exit %d\n%s", name, r.Code, r.Stderr)
		}
	}
	if builtins == 0 {
		t.Error("no built-in kind was decoded: has the test API server gained their groups? Then the dry-runs above cover them")
	}
}

func writeDocs(t *testing.T, file string, docs []map[string]interface{}) {
	t.Helper()
	var b strings.Builder
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The KRM function in a kustomize build, as a GitOps repository's CI runs
// it before a merge (or Argo CD's repo server with kustomize.buildOptions
// --enable-alpha-plugins --enable-exec): examples/krm-upgrade fails closed on
// a DataLoss and Invalid upgrade, on a Breaking one (a scope change, which
// the server refuses) too, nothing on stdout and exit 1, and passes the safe
// upgrade of examples/gitops/crds, writing the objects.
func TestGitOpsKustomizeFailsClosed(t *testing.T) {
	x := NewTest(t)
	safe, err := os.ReadFile(filepath.Join(repoRoot(), gitopsDir, "crds", "gizmos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		crd  string // the new CRD; "" keeps the example's
		code int
		want []string
	}{
		{"DataLoss and Invalid", "", 1, []string{`loses "spec.name" under the new CRD`, "a create of it again would be refused under the new CRD"}},
		{"Breaking", strings.Replace(string(safe), "scope: Namespaced", "scope: Cluster", 1), 1,
			[]string{`the server would refuse the CRD update: spec.scope: Invalid value: "Cluster": field is immutable`}},
		{"safe", string(safe), 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if r := x.Run("cp", "-r", filepath.Join(repoRoot(), krmUpgradeDir)+"/.", dir); r.Code != 0 {
				t.Fatal(r.Stderr)
			}
			if tc.crd != "" {
				if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(tc.crd), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.Code, tc.code, r.Stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stderr, "[error] ") || !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks an error result with %q:\n%s", w, r.Stderr)
				}
			}
			if tc.code != 0 && r.Stdout != "" {
				t.Errorf("a failed build wrote on stdout:\n%s", r.Stdout)
			}
			if tc.code == 0 && (strings.Count(r.Stdout, "---\napiVersion: upgrade.example.com/v1\nkind: Gizmo\n") != 4 || !strings.Contains(r.Stdout, "color:")) {
				t.Errorf("the safe build's output lacks the new CRD or the gizmos:\n%s", r.Stdout)
			}
		})
	}
}

// What Argo CD reads of examples/gitops: every object of the check is a
// PreSync hook replaced before the next one is created (so that the Job
// and what it needs exist, in that phase, before anything of the sync),
// and nothing else is a hook: the CRDs are applied in the sync, after it.
// What Flux applies carries no hook annotation. The paths the Application
// and the Kustomizations name are directories of the repository that
// kustomize builds as each tool builds them.
func TestGitOpsWiring(t *testing.T) {
	root := filepath.Join(repoRoot(), gitopsDir)
	for _, b := range gitopsBuilds {
		for _, d := range buildGitops(t, root, b.dir, b.restrictor).docs {
			meta := d["metadata"].(map[string]interface{})
			annotations, _ := meta["annotations"].(map[string]interface{})
			labels, _ := meta["labels"].(map[string]interface{})
			check := labels["app.kubernetes.io/name"] == "gizmo-crd-check"
			hook := map[string]interface{}{
				"argocd.argoproj.io/hook":               "PreSync",
				"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
			}
			if b.name != "argocd" || !check {
				hook = nil
			}
			var got map[string]interface{}
			for k, v := range annotations {
				if strings.HasPrefix(k, "argocd.argoproj.io/") {
					if got == nil {
						got = map[string]interface{}{}
					}
					got[k] = v
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(hook) {
				t.Errorf("%s: %s %s: Argo CD annotations %v, want %v", b.name, d["kind"], meta["name"], got, hook)
			}
		}
	}
	var paths []string
	for _, f := range []string{filepath.Join("argocd", "application.yaml"), filepath.Join("flux", "kustomizations.yaml")} {
		for _, d := range readDocs(t, filepath.Join(root, f)) {
			spec := d.Object["spec"].(map[string]interface{})
			if source, ok := spec["source"].(map[string]interface{}); ok {
				paths = append(paths, source["path"].(string))
			} else if p, ok := spec["path"].(string); ok {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) != 3 {
		t.Fatalf("paths %q, want the Application's and the two Kustomizations'", paths)
	}
	for i, p := range paths {
		restrictor := "LoadRestrictionsNone" // Flux's
		if i == 0 {
			restrictor = "LoadRestrictionsRootOnly" // Argo CD's default
		}
		if r := NewTest(t).Run(kustomize, "build", "--load-restrictor", restrictor, filepath.Join(repoRoot(), p)); r.Code != 0 {
			t.Errorf("kustomize build %s: exit %d\n%s", p, r.Code, r.Stderr)
		}
	}
}
