package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/mtls"
)

// kustomize build runs the function on the custom resources of two corpus
// projects, its crdPaths an https URL and an oci:// artifact on servers of
// loopback that require a client certificate (sourceCertificateAuthority,
// sourceClientCertificate, sourceClientKey, files of the kustomization),
// pinned by a lock the plugin wrote: the output of the same CRDs as local
// files; byte for byte the same from the cache with the servers stopped;
// without the client certificate, a cold cache fails saying what is missing.
func TestSourceKRMKustomize(t *testing.T) {
	client := mtls.NewClient(t, "ci")
	dir := t.TempDir() // the kustomization
	bundle, kedaCRs := sourceBundle(t, "keda@v2.21.0")
	if err := os.MkdirAll(filepath.Join(dir, "crds", "external-dns"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyTo(t, filepath.Join(dir, "crds", "keda-crds.yaml"), bundle)
	files, dnsCRs := ociCorpus(t, "external-dns@v0.23.0", filepath.Join(dir, "crds", "external-dns"))
	resources, seen := "", map[string]bool{}
	for i, cr := range append(kedaCRs, dnsCRs...) {
		data, err := os.ReadFile(cr)
		if err != nil {
			t.Fatal(err)
		}
		if !newIDs(t, data, seen) {
			continue // kustomize refuses an object twice
		}
		name := fmt.Sprintf("cr-%02d-%s", i, filepath.Base(cr))
		copyTo(t, filepath.Join(dir, name), data)
		resources += "- " + name + "\n"
	}
	copyTo(t, filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n"+resources+"transformers:\n- check.yaml\n"))

	srv := newMTLSFileServer(t, client)
	url := srv.put("/releases/v2.21.0/keda-crds.yaml", bundle)
	reg, _ := newMTLSRegistry(t, client) // httptest's certificate: srv's CA is the registry's
	ref, _ := reg.push(t, "crds/external-dns:v0.23.0", files)
	copyTo(t, filepath.Join(dir, "ca.pem"), readTestFile(t, srv.caFile))
	copyTo(t, filepath.Join(dir, "client.crt"), readTestFile(t, client.CertFile))
	copyTo(t, filepath.Join(dir, "client.key"), readTestFile(t, client.KeyFile))

	check := func(crdPaths, extra string) {
		copyTo(t, filepath.Join(dir, "check.yaml"), execCheck(crdPaths, "defaults: true\n"+extra))
	}
	cache := t.TempDir()
	x := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + cache)
	build := func(x *Test) Result { return x.Run(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir) }

	// Two runs: the items written (every finding a warning), and the
	// results that fail the build (failOn's default).
	variants := []string{"failOn: []\n", ""}
	want := make([]Result, len(variants))
	for i, v := range variants {
		check("crds/keda-crds.yaml, crds/external-dns", v)
		want[i] = build(x)
	}
	if want[0].Code != 0 || !strings.Contains(want[0].Stdout, "kind: ScaledObject") || !strings.Contains(want[0].Stdout, "kind: DNSEndpoint") {
		t.Fatalf("local: exit %d\n%s\n%s", want[0].Code, want[0].Stdout, want[0].Stderr)
	}
	if want[1].Code == 0 || !strings.Contains(want[1].Stderr, "[error] keda.sh/") {
		t.Fatalf("local, failOn's default: exit %d\n%s", want[1].Code, want[1].Stderr)
	}

	// The lock, written by the plugin as the docs say, with a cache of its
	// own: the function fetches the sources itself.
	tls := []string{"--source-certificate-authority", srv.caFile, "--source-client-certificate", client.CertFile, "--source-client-key", client.KeyFile}
	lock := filepath.Join(dir, "kubectl-crd.lock")
	args := append([]string{"prune", "--crd-file", url, "--crd-file", ref, "-f", kedaCRs[0], "--lock", lock, "--update-lock"}, tls...)
	if r := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR="+t.TempDir()).Run("kubectl-crd", args...); r.Code > 1 {
		t.Fatalf("--update-lock: exit %d\n%s", r.Code, r.Stderr)
	}
	remote := "lock: kubectl-crd.lock\nsourceCertificateAuthority: ca.pem\nsourceClientCertificate: client.crt\nsourceClientKey: client.key\n"
	norm := strings.NewReplacer(url, "crds/keda-crds.yaml", ref+"/", "crds/external-dns/")
	got := make([]Result, len(variants))
	for i, v := range variants {
		check(url+", "+ref, remote+v)
		got[i] = build(x)
		if g := got[i]; g.Code != want[i].Code || norm.Replace(g.Stdout) != want[i].Stdout || norm.Replace(g.Stderr) != want[i].Stderr {
			t.Fatalf("remote %q: exit %d\n%s\n%s\nwant:\n%s\n%s", v, g.Code, g.Stdout, g.Stderr, want[i].Stdout, want[i].Stderr)
		}
	}

	// A cold cache without the client certificate: the server says what it wants.
	check(url, "sourceCertificateAuthority: ca.pem\n")
	cold := NewTest(t).WithEnv("KUBECTL_CRD_CACHE_DIR=" + t.TempDir())
	if r := build(cold); r.Code == 0 || !strings.Contains(r.Stderr, url+": the server asks for a client certificate, and none was given") {
		t.Errorf("without a client certificate: exit %d\n%s", r.Code, r.Stderr)
	}

	srv.Close() // the network cut: the lock's pins are in the cache
	reg.Close()
	for i, v := range variants {
		check(url+", "+ref, remote+v)
		if again := build(x); again.Code != got[i].Code || again.Stdout != got[i].Stdout || again.Stderr != got[i].Stderr {
			t.Fatalf("servers stopped %q: exit %d\n%s\n%s", v, again.Code, again.Stdout, again.Stderr)
		}
	}
}

func newIDs(t *testing.T, stream []byte, seen map[string]bool) bool {
	t.Helper()
	var ids []string
	for _, doc := range strings.Split("\n"+string(stream), "\n---") {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind == "" {
			continue
		}
		id := o.Kind + "/" + o.Metadata.Namespace + "/" + o.Metadata.Name
		if seen[id] {
			return false
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		seen[id] = true
	}
	return true
}

func copyTo(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// execCheck is a kustomization's CRDCheck run as an exec function, of
// crdPaths and the fields of extra.
func execCheck(crdPaths, extra string) []byte {
	return []byte(`apiVersion: crd.kubectl.dev/v1alpha1
kind: CRDCheck
metadata:
  name: check
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: kubectl-crd
        args: [krm]
crdPaths: [` + crdPaths + "]\n" + extra)
}
