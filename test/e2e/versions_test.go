package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/internal/builtin"
	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdtest"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// VersionsEnv runs the version parity test: "1" for every minor answered,
// or a list of them ("1.31,1.37"). .ci/run's version parity target sets it;
// without it the test is skipped, saying so.
const VersionsEnv = "KUBECTL_CRD_E2E_VERSIONS"

// VersionsRecordEnv, set, makes the version parity test write the
// disagreements it finds into versionsDisagreements (for the minors it ran)
// instead of holding it to them: what the real servers answered, never
// typed.
const VersionsRecordEnv = "KUBECTL_CRD_E2E_VERSIONS_RECORD"

const (
	versionsDir           = "test/e2e/testdata/versions"
	versionsDisagreements = versionsDir + "/disagreements.txt"
	// versionsTable is where the test writes its table of agreement per
	// minor, for docs/versions.md.
	versionsTable       = "_output/versions-parity.md"
	versionsCorpusTable = "_output/versions-parity-corpus.md"
)

// The ports of the version parity test's servers, one at a time: neither
// the suite's nor hack/test-apiserver.sh's, below the ephemeral range
// (TestPortsDocumented).
const (
	defaultVersionsAPIServerPort = 26643
	defaultVersionsEtcdPort      = 22579
)

var (
	versionsAPIServerPort = envInt("KUBECTL_CRD_E2E_VERSIONS_APISERVER_PORT", defaultVersionsAPIServerPort)
	versionsEtcdPort      = envInt("KUBECTL_CRD_E2E_VERSIONS_ETCD_PORT", defaultVersionsEtcdPort)
	versionsPortsSet      = os.Getenv("KUBECTL_CRD_E2E_VERSIONS_APISERVER_PORT") != "" || os.Getenv("KUBECTL_CRD_E2E_VERSIONS_ETCD_PORT") != ""
)

// versionDiff is one question on which a minor's real server and the
// engine emulating that minor answer differently.
type versionDiff struct {
	minor             kubeversion.Minor
	what              string
	server, emulation string
}

// String is its line in versionsDisagreements.
func (d versionDiff) String() string {
	return fmt.Sprintf("%s\t%s\tserver: %s\temulation: %s", d.minor, d.what, d.server, d.emulation)
}

// minorTally counts the answers compared on one minor.
type minorTally struct {
	minor                    kubeversion.Minor
	server                   string // its /version
	crds, crdsSame           int    // the CRDs of our own cases
	cases, casesSame         int    // their objects: creates and updates
	corpus, corpusSame       int    // the corpus's apiextensions.k8s.io/v1 CRDs
	serverRefusedCorpus      int
	samples, samplesSame     int // the corpus's samples of the CRDs the minor accepts
	serverRefusedSamples     int
	serverRefusedOwn, ownCRD int
	took                     time.Duration
}

// TestVersionParity: for each minor answered (1.31 to 1.37), that minor's
// real API server (test/apiserver built at the minor's k8s.io modules,
// hack/test-apiserver-minor.sh; 1.37's is the suite's own) against the
// engine emulating it (kubeversion.Use), on the version-sensitive cases of
// testdata/versions: each CRD accepted or refused, with the fields the
// server drops from it, each object created or refused, each update
// allowed or refused, with the refusals' fields and types. Where they
// differ it is a disagreement: each must be listed in
// testdata/versions/disagreements.txt, and each listed one must still be
// found, so that how exact the emulation is gets measured, not hidden. The
// table of agreement per minor goes to _output/versions-parity.md.
func TestVersionParity(t *testing.T) {
	versionParity(t, false)
}

// TestVersionParityCorpus is TestVersionParity on every
// apiextensions.k8s.io/v1 CRD of the corpus: accepted or refused, with the
// fields and types of the errors, and what is dropped. Its table goes to
// _output/versions-parity-corpus.md.
func TestVersionParityCorpus(t *testing.T) {
	versionParity(t, true)
}

func versionParity(t *testing.T, ofCorpus bool) {
	minors := versionsToRun(t)
	root := repoRoot()
	var (
		suites  []*crdtest.Suite
		crds    []*document.Document
		samples corpusSamples
	)
	if ofCorpus {
		crds = readCorpusV1CRDs(t)
		samples.sets, samples.names = loadParitySets(t, corpus.Dir(t))
	} else {
		suites = readVersionSuites(t, root)
	}
	t.Cleanup(func() {
		if _, err := kubeversion.Use(kubeversion.Embedded); err != nil {
			t.Error(err)
		}
	})
	var (
		found   []versionDiff
		tallies []minorTally
	)
	for _, m := range minors {
		t.Run(m.String(), func(t *testing.T) {
			tally, diffs := versionParityOf(t, root, m, suites, crds, samples)
			tallies = append(tallies, tally)
			found = append(found, diffs...)
		})
	}
	if t.Failed() {
		return // a minor did not run whole: its disagreements are not all known
	}
	writeVersionsTable(t, root, ofCorpus, tallies, found)
	checkVersionDiffs(t, root, ofCorpus, minors, found)
}

// corpusDiff tells the lines of TestVersionParityCorpus in
// versionsDisagreements from those of TestVersionParity.
const corpusDiff = "corpus "

// versionsToRun skips the test unless VersionsEnv is set, and returns the
// minors it names.
func versionsToRun(t *testing.T) []kubeversion.Minor {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	env := os.Getenv(VersionsEnv)
	if env == "" {
		t.Skipf("the version parity test against a real server of each minor: run by .ci/run's version parity target (%s=1 go test -run %s ./test/e2e)", VersionsEnv, t.Name())
	}
	if os.Getenv(EnvKubeconfig) != "" {
		t.Skipf("starts servers of its own; %s is set", EnvKubeconfig)
	}
	if env == "1" {
		return kubeversion.Supported()
	}
	var out []kubeversion.Minor
	for _, s := range strings.Split(env, ",") {
		m, err := kubeversion.Parse(s)
		if err != nil {
			t.Fatalf("%s: %v", VersionsEnv, err)
		}
		out = append(out, m)
	}
	return out
}

// readVersionSuites reads testdata/versions/*.test.yaml: suites of
// kubectl crd test, without expectations (what each minor's server
// answers is the expectation).
func readVersionSuites(t *testing.T, root string) []*crdtest.Suite {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, versionsDir, "*.test.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d suites in %s: %v", len(files), versionsDir, err)
	}
	var out []*crdtest.Suite
	for _, f := range files {
		ss, err := crdtest.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if len(s.CRDs) != 1 {
				t.Fatalf("%s: %d CRDs; a suite of the version parity test has one", f, len(s.CRDs))
			}
			for _, c := range s.Cases {
				if c.Expect != nil || len(c.OldCRDs) > 0 {
					t.Fatalf("%s: case %q: the version parity test takes no expect and no oldCRD", f, c.Name)
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// readCorpusV1CRDs reads the corpus's apiextensions.k8s.io/v1 CRDs (the
// only ones a server creates), as TestCRDValidationCorpus does.
func readCorpusV1CRDs(t *testing.T) []*document.Document {
	t.Helper()
	dir := corpus.Dir(t)
	var out []*document.Document
	for _, f := range corpus.CRDFiles(t, dir) {
		docs, err := document.Read(bytes.NewReader(corpus.Read(t, dir, f)), f.LocalPath)
		if err != nil {
			continue
		}
		for _, d := range docs {
			if d.Object["apiVersion"] == "apiextensions.k8s.io/v1" && d.Object["kind"] == "CustomResourceDefinition" {
				out = append(out, d)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no apiextensions.k8s.io/v1 CRD in the corpus")
	}
	return out
}

// minorServerBinary builds the test API server of minor m and returns its
// path: the suite's own for the newest (setup built it).
func minorServerBinary(t *testing.T, root string, m kubeversion.Minor) string {
	t.Helper()
	if m == kubeversion.Embedded {
		return filepath.Join(root, "_output", "bin", "crd-test-apiserver")
	}
	start := time.Now()
	build := exec.Command(filepath.Join(root, "hack", "test-apiserver-minor.sh"), m.String())
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test API server of %s: %v\n%s", m, err, out)
	}
	t.Logf("the test API server of %s built (or found up to date) in %v", m, time.Since(start).Round(time.Second))
	return filepath.Join(root, "_output", "bin", "crd-test-apiserver-"+m.String())
}

// versionClients are the clients of one minor's server.
type versionClients struct {
	crd apiextensionsclient.Interface
	dyn dynamic.Interface
}

// versionParityOf runs the cases and the corpus on minor m: its server
// started, the engine emulating it.
func versionParityOf(t *testing.T, root string, m kubeversion.Minor, suites []*crdtest.Suite, crds []*document.Document, samples corpusSamples) (minorTally, []versionDiff) {
	start := time.Now()
	tally := minorTally{minor: m}
	bin := minorServerBinary(t, root, m)
	apiPort, etcdPort, err := serverPorts(versionsAPIServerPort, versionsEtcdPort, versionsPortsSet)
	if err != nil {
		t.Fatalf("%v (set KUBECTL_CRD_E2E_VERSIONS_APISERVER_PORT / KUBECTL_CRD_E2E_VERSIONS_ETCD_PORT)", err)
	}
	if apiPort != versionsAPIServerPort {
		t.Logf("the default ports are taken: the server of %s listens on %d, etcd on %d", m, apiPort, etcdPort)
	}
	server, err := startServer(bin, t.TempDir(), apiPort, etcdPort)
	if err != nil {
		t.Fatal(err)
	}
	defer server.stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", server.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.WarningHandler = rest.NoWarnings{}
	info, err := discovery.NewDiscoveryClientForConfigOrDie(cfg).ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.GitVersion, "v"+m.String()+".") {
		t.Fatalf("the server built for %s says it is %s", m, info.GitVersion)
	}
	tally.server = info.GitVersion
	cl := versionClients{crd: apiextensionsclient.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
	answer, err := kubeversion.Use(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server %s, engine: %s", info.GitVersion, answer)

	var diffs []versionDiff
	for _, s := range suites {
		diffs = append(diffs, versionSuite(t, cl, m, s, &tally)...)
	}
	if len(crds) > 0 {
		diffs = append(diffs, versionCorpus(t, cl, m, crds, &tally)...)
		diffs = append(diffs, versionSamples(t, cl, m, samples, &tally)...)
	}
	tally.took = time.Since(start).Round(time.Second)
	for _, d := range diffs {
		t.Logf("DISAGREE %s", d)
	}
	t.Logf("%s (%s): own CRDs %d/%d agree, their objects %d/%d, corpus CRDs %d/%d (the server refuses %d), corpus samples %d/%d (the server refuses %d), in %v",
		m, tally.server, tally.crdsSame, tally.crds, tally.casesSame, tally.cases, tally.corpusSame, tally.corpus, tally.serverRefusedCorpus,
		tally.samplesSame, tally.samples, tally.serverRefusedSamples, tally.took)
	return tally, diffs
}

// versionSuite runs one suite on minor m: its CRD created on the server
// and checked by the engine, then, when both accept it, each case.
func versionSuite(t *testing.T, cl versionClients, m kubeversion.Minor, s *crdtest.Suite, tally *minorTally) []versionDiff {
	t.Helper()
	ctx := context.Background()
	file := filepath.Base(s.Source.File)
	crdDoc := s.CRDs[0]
	name, _, _ := unstructured.NestedString(crdDoc.Object, "metadata", "name")
	var diffs []versionDiff
	theirs, stored, err := createCRDOn(ctx, t, cl, crdDoc.Object)
	if err != nil {
		t.Fatalf("%s: creating the CRD: %v", file, err)
	}
	defer func() {
		if err := cl.crd.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s: deleting the CRD: %v", file, err)
		}
	}()
	ours := emulateCRD(t, crdDoc.Object)
	tally.crds++
	if stored == nil {
		tally.serverRefusedOwn++
	}
	t.Logf("%s on %s: the CRD: the server: %s", file, m, theirs.verdict)
	if theirs.verdict != ours.verdict {
		diffs = append(diffs, versionDiff{m, file + ": the CRD", theirs.verdict, ours.verdict})
		t.Logf("%s on %s: the server's errors: %s; the engine's: %s", file, m, theirs.messages, ours.messages)
		return diffs
	}
	tally.crdsSame++
	if stored == nil {
		return diffs
	}
	res, err := crdtest.NewRunner(crdtest.Options{Server: strategy.Validators{}, Builtins: builtin.Kinds{}}).Run(ctx, s)
	if err != nil {
		t.Fatalf("%s: the engine: %v", file, err)
	}
	gvr := runtimeschema.GroupVersionResource{Group: stored.Spec.Group, Version: stored.Spec.Versions[0].Name, Resource: stored.Spec.Names.Plural}
	for i, c := range s.Cases {
		tally.cases++
		server := serverCase(ctx, t, cl.dyn.Resource(gvr), c)
		emulation := observedVerdict(res.Cases[i].Observed)
		t.Logf("%s on %s: case %q: the server: %s", file, m, c.Name, server.verdict)
		if server.verdict != emulation.verdict {
			diffs = append(diffs, versionDiff{m, fmt.Sprintf("%s: case %q", file, c.Name), server.verdict, emulation.verdict})
			t.Logf("%s, case %q on %s: the server's errors: %s; the engine's: %s", file, c.Name, m, server.messages, emulation.messages)
			continue
		}
		tally.casesSame++
	}
	return diffs
}

// versionCorpus sends every corpus CRD to minor m's server as a dry-run
// create and checks it with the engine, several at a time.
func versionCorpus(t *testing.T, cl versionClients, m kubeversion.Minor, crds []*document.Document, tally *minorTally) []versionDiff {
	t.Helper()
	ctx := context.Background()
	type pair struct {
		server, emulation versionVerdict
		err               error
	}
	answers := make([]pair, len(crds))
	inTurn(parityRequests, len(crds), func(_, i int) {
		theirs, err := serverCRDDryRun(ctx, cl.dyn, crds[i].Object)
		answers[i] = pair{theirs, emulateCRD(t, crds[i].Object), err}
	})
	var diffs []versionDiff
	for i, d := range crds {
		a := answers[i]
		if a.err != nil {
			t.Errorf("%s: dry-run create: %v", d.Source, a.err)
			continue
		}
		tally.corpus++
		if strings.HasPrefix(a.server.verdict, "refused") {
			tally.serverRefusedCorpus++
		}
		if a.server.verdict != a.emulation.verdict {
			diffs = append(diffs, versionDiff{m, corpusDiff + d.Source.String(), a.server.verdict, a.emulation.verdict})
			t.Logf("%s on %s: the server's errors: %s; the engine's: %s", d.Source, m, a.server.messages, a.emulation.messages)
			continue
		}
		tally.corpusSame++
	}
	return diffs
}

// versionVerdict is an answer to one question, as compared: accepted (with
// the fields of the CRD dropped), allowed, or refused with the fields and
// types of the errors; messages are the errors' words, for the log.
type versionVerdict struct {
	verdict, messages string
}

// refusedVerdict is the verdict of a refusal with errs.
func refusedVerdict(errs field.ErrorList) versionVerdict {
	var fields, messages []string
	for _, e := range errs {
		fields = append(fields, fmt.Sprintf("%s (%s)", e.Field, e.Type))
		messages = append(messages, e.Error())
	}
	sort.Strings(fields)
	return versionVerdict{"refused: " + strings.Join(fields, "; "), strings.Join(messages, " | ")}
}

// statusVerdict is the server's answer err to a request that creates or
// updates, as a verdict, with allowed for none; ok is false for an answer
// that is not a verdict (the server failed).
func statusVerdict(err error, allowed string) (versionVerdict, bool) {
	if err == nil {
		return versionVerdict{verdict: allowed}, true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Reason != metav1.StatusReasonInvalid || status.Status().Details == nil {
		return versionVerdict{verdict: "error: " + err.Error()}, false
	}
	var errs field.ErrorList
	for _, c := range status.Status().Details.Causes {
		errs = append(errs, &field.Error{Type: field.ErrorType(c.Type), Field: c.Field, Detail: c.Message})
	}
	v := refusedVerdict(errs)
	v.messages = err.Error()
	return v, true
}

// objectVerdict is the verdict of the server on an object.
func objectVerdict(err error) versionVerdict {
	v, _ := statusVerdict(err, "allowed")
	return v
}

// observedVerdict is the engine's verdict on a case.
func observedVerdict(obs *crdtest.Observed) versionVerdict {
	if obs.Result == crdtest.Allowed {
		return versionVerdict{verdict: "allowed"}
	}
	var errs field.ErrorList
	for _, e := range obs.Errors {
		errs = append(errs, &field.Error{Field: e.Field, Detail: e.Message, Type: errorTypeOf(e.Type)})
	}
	v := refusedVerdict(errs)
	v.messages = ""
	for _, e := range obs.Errors {
		v.messages += fmt.Sprintf("%s: %s: %s | ", e.Field, e.Type, e.Message)
	}
	return v
}

// errorTypeOf is the field.ErrorType of its words ("Invalid value").
func errorTypeOf(words string) field.ErrorType {
	for _, t := range []field.ErrorType{field.ErrorTypeNotFound, field.ErrorTypeRequired, field.ErrorTypeDuplicate,
		field.ErrorTypeInvalid, field.ErrorTypeNotSupported, field.ErrorTypeForbidden, field.ErrorTypeTooLong,
		field.ErrorTypeTooMany, field.ErrorTypeInternal, field.ErrorTypeTypeInvalid, field.ErrorTypeTooShort} {
		if t.String() == words {
			return t
		}
	}
	return field.ErrorType(words)
}

// acceptedVerdict is the verdict on a CRD accepted: what of the CRD sent
// the stored one lacks (a field that minor does not know, or a gate
// drops).
func acceptedVerdict(sent, stored map[string]interface{}) versionVerdict {
	var drops []string
	droppedFields(sent["spec"], stored["spec"], "spec", &drops)
	if len(drops) == 0 {
		return versionVerdict{verdict: "accepted"}
	}
	sort.Strings(drops)
	return versionVerdict{verdict: "accepted, dropping " + strings.Join(drops, ", ")}
}

// droppedFields appends to out the paths of the fields of sent that stored
// lacks; fields of a zero value (which the server omits) do not count.
func droppedFields(sent, stored interface{}, path string, out *[]string) {
	switch s := sent.(type) {
	case map[string]interface{}:
		st, ok := stored.(map[string]interface{})
		if !ok {
			return
		}
		for k, v := range s {
			p := path + "." + k
			if sv, ok := st[k]; ok {
				droppedFields(v, sv, p, out)
			} else if !zeroJSON(v) {
				*out = append(*out, p)
			}
		}
	case []interface{}:
		st, ok := stored.([]interface{})
		if !ok || len(st) != len(s) {
			return
		}
		for i := range s {
			droppedFields(s[i], st[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

func zeroJSON(v interface{}) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]interface{}:
		return len(v) == 0
	case []interface{}:
		return len(v) == 0
	case string:
		return v == ""
	case bool:
		return !v
	case int64:
		return v == 0
	case float64:
		return v == 0
	}
	return false
}

// versionsScheme converts CRDs as the server's.
var versionsScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
}()

// emulateCRD is the engine's verdict on creating the CRD obj: decoded as
// the server decodes it (schema.DecodeCRD), then the create's steps and
// validation (strategy.Validators), which drop what the minor's gates
// drop; the CRD as the engine keeps it is that, in v1.
func emulateCRD(t *testing.T, obj map[string]interface{}) versionVerdict {
	js, err := json.Marshal(obj)
	if err != nil {
		t.Error(err)
		return versionVerdict{verdict: "error: " + err.Error()}
	}
	v1, err := schema.DecodeCRD(js)
	if err != nil {
		return versionVerdict{verdict: "error: " + err.Error()}
	}
	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := versionsScheme.Convert(v1, internal, nil); err != nil {
		return versionVerdict{verdict: "error: " + err.Error()}
	}
	if errs, _ := (strategy.Validators{}).ValidateDecodedCRDCreate(internal); len(errs) > 0 {
		return refusedVerdict(errs)
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := versionsScheme.Convert(internal, out, nil); err != nil {
		return versionVerdict{verdict: "error: " + err.Error()}
	}
	kept, err := runtime.DefaultUnstructuredConverter.ToUnstructured(out)
	if err != nil {
		return versionVerdict{verdict: "error: " + err.Error()}
	}
	return acceptedVerdict(obj, kept)
}

// serverCRDDryRun is the server's verdict on creating the CRD obj (a
// dry run; fieldValidation Ignore, as TestCRDValidationCorpus: a field the
// server does not know is dropped, which the verdict says).
func serverCRDDryRun(ctx context.Context, dyn dynamic.Interface, obj map[string]interface{}) (versionVerdict, error) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	got, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Ignore"})
	return crdVerdict(obj, got, err)
}

func crdVerdict(sent map[string]interface{}, got *unstructured.Unstructured, err error) (versionVerdict, error) {
	if err == nil {
		return acceptedVerdict(sent, got.Object), nil
	}
	v, ok := statusVerdict(err, "")
	if !ok {
		return v, err
	}
	return v, nil
}

// createCRDOn creates the CRD obj on the server and waits until it is
// established; stored is nil when the server refuses it.
func createCRDOn(ctx context.Context, t *testing.T, cl versionClients, obj map[string]interface{}) (v versionVerdict, stored *apiextensionsv1.CustomResourceDefinition, err error) {
	t.Helper()
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	got, err := cl.dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{FieldValidation: "Ignore"})
	if v, err = crdVerdict(obj, got, err); err != nil || got == nil {
		return v, nil, err
	}
	waitEstablished(t, cl.dyn, got.GetName())
	stored = &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, stored); err != nil {
		return v, nil, err
	}
	return v, stored, nil
}

// serverCase is the server's verdict on a case: a dry-run create, or the
// old object created and a dry-run update of it to the object.
func serverCase(ctx context.Context, t *testing.T, ri dynamic.ResourceInterface, c *crdtest.Case) versionVerdict {
	t.Helper()
	obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(c.Object.Object)}
	if c.OldObject == nil {
		_, err := createWith(ctx, ri, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return objectVerdict(err)
	}
	old, err := createWith(ctx, ri, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(c.OldObject.Object)}, metav1.CreateOptions{})
	if err != nil {
		v := objectVerdict(err)
		v.verdict = "the old object " + v.verdict
		return v
	}
	defer func() {
		if err := ri.Delete(ctx, old.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Errorf("case %q: deleting the old object: %v", c.Name, err)
		}
	}()
	obj.SetResourceVersion(old.GetResourceVersion())
	_, err = ri.Update(ctx, obj, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	return objectVerdict(err)
}

// writeVersionsTable writes the table of agreement per minor, and the
// disagreements, to _output/versions-parity.md.
func writeVersionsTable(t *testing.T, root string, ofCorpus bool, tallies []minorTally, diffs []versionDiff) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Written by %s (test/e2e/versions_test.go): each minor's real API server against the engine emulating it. -->\n", t.Name())
	if ofCorpus {
		b.WriteString("| Kubernetes | server | corpus CRDs agree | the server refuses | their samples agree | the server refuses | disagreements |\n|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| Kubernetes | server | our CRDs agree | their objects agree | disagreements |\n|---|---|---|---|---|\n")
	}
	for _, x := range tallies {
		n := 0
		for _, d := range diffs {
			if d.minor == x.minor {
				n++
			}
		}
		if ofCorpus {
			fmt.Fprintf(&b, "| %s | %s | %d / %d | %d | %d / %d | %d | %d |\n", x.minor, x.server, x.corpusSame, x.corpus, x.serverRefusedCorpus,
				x.samplesSame, x.samples, x.serverRefusedSamples, n)
		} else {
			fmt.Fprintf(&b, "| %s | %s | %d / %d | %d / %d | %d |\n", x.minor, x.server, x.crdsSame, x.crds, x.casesSame, x.cases, n)
		}
	}
	if len(diffs) > 0 {
		b.WriteString("\n| Kubernetes | what | the server | the emulation |\n|---|---|---|---|\n")
		cell := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
		for _, d := range diffs {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", d.minor, cell(d.what), cell(d.server), cell(d.emulation))
		}
	}
	table := versionsTable
	if ofCorpus {
		table = versionsCorpusTable
	}
	out := filepath.Join(root, filepath.FromSlash(table))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s:\n%s", table, b.String())
}

// checkVersionDiffs holds the disagreements found on the minors run to
// those listed for them (of the corpus, or of our cases), both ways; with
// VersionsRecordEnv it lists them instead.
func checkVersionDiffs(t *testing.T, root string, ofCorpus bool, minors []kubeversion.Minor, diffs []versionDiff) {
	t.Helper()
	ran := map[string]bool{}
	for _, m := range minors {
		ran[m.String()] = true
	}
	file := filepath.Join(root, filepath.FromSlash(versionsDisagreements))
	var header, others []string
	listed := map[string]bool{}
	if f, err := os.Open(file); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			minor, rest, _ := strings.Cut(line, "\t")
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
				header = append(header, line)
			case ran[minor] && strings.HasPrefix(rest, corpusDiff) == ofCorpus:
				listed[line] = true
			default:
				others = append(others, line)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, d := range diffs {
		found[d.String()] = true
	}
	if os.Getenv(VersionsRecordEnv) != "" {
		lines := others
		for l := range found {
			lines = append(lines, l)
		}
		sort.Strings(lines)
		if err := os.WriteFile(file, []byte(strings.Join(append(header, lines...), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d disagreements recorded for %v", versionsDisagreements, len(found), minors)
		return
	}
	for l := range found {
		if !listed[l] {
			t.Errorf("a disagreement not listed in %s (%s=1 records them):\n%s", versionsDisagreements, VersionsRecordEnv, l)
		}
	}
	for l := range listed {
		if !found[l] {
			t.Errorf("listed in %s, no longer a disagreement:\n%s", versionsDisagreements, l)
		}
	}
}

// TestVersionDifferencesSaid: what a run says of the minor that answers
// (kubeversion.Answer.Differences: on stderr, in every report's stamp)
// names a known difference from that minor's real server exactly for the
// minors whose recorded disagreements (testdata/versions/disagreements.txt,
// written by the version parity tests) are not empty. It needs no server.
func TestVersionDifferencesSaid(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(), filepath.FromSlash(versionsDisagreements)))
	if err != nil {
		t.Fatal(err)
	}
	disagree := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			minor, _, _ := strings.Cut(line, "\t")
			disagree[minor]++
		}
	}
	for _, m := range kubeversion.Supported() {
		said := kubeversion.Answer{Minor: m, Code: "1.37.2"}.Differences()
		if (len(said) > 0) != (disagree[m.String()] > 0) {
			t.Errorf("Kubernetes %s: %d disagreements recorded, differences said: %q", m, disagree[m.String()], said)
		}
		delete(disagree, m.String())
	}
	if len(disagree) > 0 {
		t.Errorf("disagreements recorded of minors not answered: %v", disagree)
	}
}
