package prune_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/testsupport/corpus"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
)

// corpusCRD is one CRD of the corpus, converted once by the engine and once
// by the upstream reference.
type corpusCRD struct {
	file   string
	up     *apiextensionsv1.CustomResourceDefinition
	ours   *schema.CRD
	served map[string]*structuralschema.Structural // upstream; nil when the server would not serve it
}

// crdSet holds the CRDs of one module version of a project
// (crds/<project>/<module>@<version>/...), by group and kind; a later file
// replaces an earlier CRD of the same group and kind, as Registry.Add does.
type crdSet struct {
	name string // <project>/<module>@<version>
	reg  *schema.Registry
	byGK map[runtimeschema.GroupKind]*corpusCRD
}

// upstreamStream splits a file the way kubectl's resource builder does
// (k8s.io/cli-runtime StreamVisitor: YAMLOrJSONDecoder into RawExtensions,
// empty and null documents skipped) and returns each document as JSON.
func upstreamStream(data []byte) ([][]byte, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out [][]byte
	for {
		ext := runtime.RawExtension{}
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		ext.Raw = bytes.TrimSpace(ext.Raw)
		if len(ext.Raw) == 0 || bytes.Equal(ext.Raw, []byte("null")) {
			continue
		}
		out = append(out, ext.Raw)
	}
}

func typeMeta(js []byte) (apiVersion, kind string) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	_ = json.Unmarshal(js, &tm)
	return tm.APIVersion, tm.Kind
}

// upstreamCondition is the NonStructuralSchema condition controller's
// calculateCondition (pkg/controller/nonstructuralschema): reason is "",
// "Violations" or "StructuralError" (then message is all it reports).
func upstreamCondition(crd *apiextensionsv1.CustomResourceDefinition) (reason, message string, errs field.ErrorList) {
	if crd.Spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(field.NewPath("spec", "preserveUnknownFields"), crd.Spec.PreserveUnknownFields, "must be false"))
	}
	for i, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		s, err := upstreamStructural(v.Schema)
		if err != nil {
			return "StructuralError", fmt.Sprintf("failed to check validation schema for version %s: %v", v.Name, err), nil
		}
		errs = append(errs, structuralschema.ValidateStructural(field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema"), s)...)
	}
	if len(errs) == 0 {
		return "", "", nil
	}
	return "Violations", "", errs
}

func errorLines(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}

// setOf is <project>/<module>@<version> of a corpus file.
func setOf(f corpus.File) string { return f.Project + "/" + f.Set() }

// TestCorpus compares the engine with the upstream code paths over every CRD
// and every custom resource of the public corpus (a sample of it, every set
// read, unless KUBECTL_CRD_CORPUS_ALL=1: corpus.Sample).
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("differential test over the whole corpus; skipped with -short")
	}
	dir := corpus.Dir(t)
	start := time.Now()

	sets := map[string]*crdSet{}
	var (
		crdDocs, upstreamRejected, nonStructural, structuralErrors, notServable int
		rejectedSamples                                                         []string
	)
	for _, f := range corpus.Sample(t, corpus.CRDFiles(t, dir)) {
		data := corpus.Read(t, dir, f)
		want, err := upstreamStream(data)
		if err != nil {
			t.Errorf("%s: kubectl's reader fails: %v", f.LocalPath, err)
		}
		docs, err := document.Read(bytes.NewReader(data), f.LocalPath)
		if err != nil {
			if len(want) > 0 {
				t.Errorf("%s: document.Read: %v (kubectl's reader reads %d documents)", f.LocalPath, err, len(want))
			}
			continue
		}
		if len(docs) != len(want) {
			t.Errorf("%s: document.Read gives %d documents, kubectl's reader %d", f.LocalPath, len(docs), len(want))
			continue
		}
		set := sets[setOf(f)]
		if set == nil {
			set = &crdSet{name: setOf(f), reg: schema.NewRegistry(), byGK: map[runtimeschema.GroupKind]*corpusCRD{}}
			sets[set.name] = set
		}
		for i, d := range docs {
			apiVersion, kind := typeMeta(want[i])
			if !schema.IsCRD(apiVersion, kind) {
				continue
			}
			crdDocs++
			where := fmt.Sprintf("%s (document %d)", f.LocalPath, i+1)
			up, uerr := upstreamDecodeCRD(want[i])
			js, err := d.JSON()
			if err != nil {
				t.Fatal(err)
			}
			ours, oerr := schema.DecodeCRD(js)
			switch {
			case uerr != nil && oerr != nil:
				upstreamRejected++
				rejectedSamples = append(rejectedSamples, fmt.Sprintf("%s: %v", where, uerr))
				continue
			case uerr != nil:
				upstreamRejected++
				rejectedSamples = append(rejectedSamples, fmt.Sprintf("%s: %v", where, uerr))
				t.Errorf("%s: the upstream decoder refuses it (%v), DecodeCRD accepts it", where, uerr)
				continue
			case oerr != nil:
				t.Errorf("%s: DecodeCRD: %v (the upstream decoder accepts it)", where, oerr)
				ours = up // go on with the upstream object to check the rest
			case !equality.Semantic.DeepEqual(up, ours):
				t.Errorf("%s: DecodeCRD (-upstream +ours):\n%s", where, cmp.Diff(up, ours))
			}

			c := schema.NewCRD(ours)
			reason, message, uerrs := upstreamCondition(up)
			got := c.Violations()
			switch reason {
			case "StructuralError":
				structuralErrors++
				if len(got) != 1 || !strings.Contains(got[0].Error(), message) {
					t.Errorf("%s: the condition is StructuralError %q; Violations() = %q", where, message, errorLines(got))
				}
			default:
				if reason != "" {
					nonStructural++
				}
				if diff := cmp.Diff(errorLines(uerrs), errorLines(got)); diff != "" {
					t.Errorf("%s: Violations() (-upstream +got):\n%s", where, diff)
				}
			}

			served, err := upstreamServedSchemas(up)
			if err != nil {
				notServable++
				served = nil
			}
			cc := &corpusCRD{file: where, up: up, ours: c, served: served}
			set.reg.Add(c)
			set.byGK[c.GroupKind()] = cc
		}
	}
	if crdDocs == 0 {
		t.Fatalf("no CRD documents in %s", dir)
	}
	var setNames []string
	for n := range sets {
		setNames = append(setNames, n)
	}
	sort.Strings(setNames)
	t.Logf("CRDs: %d documents in %d sets; %d refused by the upstream decoder, %d non-structural, %d StructuralError, %d the server would not serve",
		crdDocs, len(setNames), upstreamRejected, nonStructural, structuralErrors, notServable)
	for _, s := range rejectedSamples {
		t.Logf("  refused: %s", s)
	}

	// findSet picks the CRD for a custom resource: its own module version
	// first, then the project's other ones, then any project's.
	findSet := func(f corpus.File, gk runtimeschema.GroupKind) *crdSet {
		if s := sets[setOf(f)]; s != nil && s.byGK[gk] != nil {
			return s
		}
		for _, sameProject := range []bool{true, false} {
			for _, n := range setNames {
				if strings.HasPrefix(n, f.Project+"/") == sameProject && sets[n].byGK[gk] != nil {
					return sets[n]
				}
			}
		}
		return nil
	}

	var readerVariants int
	var crFiles, unreadable, crDocs, checked, withChanges, withDefaults, refused, noCRD, otherProject, webhookStorage int
	for _, f := range corpus.Sample(t, corpus.CRFiles(t, dir)) {
		crFiles++
		data := corpus.Read(t, dir, f)
		readerVariants += checkReaderVariants(t, f.LocalPath, data)
		for _, defaults := range []bool{false, true} {
			docs, err := document.Read(bytes.NewReader(data), f.LocalPath)
			if err != nil {
				// Templates and deliberately broken samples; kubectl must
				// refuse them too.
				if !defaults {
					unreadable++
					if want, uerr := upstreamStream(data); uerr == nil && len(want) > 0 && !anyJSONInvalid(want) {
						t.Logf("%s: document.Read: %v; kubectl's reader reads %d documents", f.LocalPath, err, len(want))
					}
				}
				break
			}
			for i, d := range docs {
				apiVersion, _ := d.Object["apiVersion"].(string)
				kind, _ := d.Object["kind"].(string)
				if !defaults {
					crDocs++
				}
				gv, err := runtimeschema.ParseGroupVersion(apiVersion)
				if err != nil || kind == "" || schema.IsCRD(apiVersion, kind) {
					continue
				}
				gk := gv.WithKind(kind).GroupKind()
				set := findSet(f, gk)
				if set == nil {
					if !defaults {
						noCRD++
					}
					continue
				}
				if !defaults && !strings.HasPrefix(set.name, f.Project+"/") {
					otherProject++
				}
				cc := set.byGK[gk]
				where := fmt.Sprintf("%s (document %d, defaults=%v, CRD %s)", f.LocalPath, i+1, defaults, cc.file)
				sent := runtime.DeepCopyJSON(d.Object)

				res, err := prune.Document(d, set.reg, prune.Options{Defaults: defaults})
				if cc.served == nil {
					if err == nil {
						t.Errorf("%s: the server would not serve the CRD, Document gives no error", where)
					}
					continue
				}
				var (
					s       *structuralschema.Structural
					servedV bool
				)
				if v, ok := cc.ours.Version(gv.Version); ok && v.Served {
					s, servedV = cc.served[gv.Version], true
				}
				if !servedV {
					if err == nil {
						t.Errorf("%s: version %s is not served, Document gives no error", where, gv.Version)
					}
					continue
				}
				_ = s
				want, unknown, modelled, uerr := upstreamStore(sent, cc.up, cc.served, gv.Version, defaults)
				if uerr == nil && !modelled {
					// Stored through a conversion webhook: only the request decoding is compared.
					want, unknown, uerr = upstreamCoerce(sent, cc.served[gv.Version], gk, cc.ours.PreserveUnknownFields(), defaults)
					if !defaults {
						webhookStorage++
					}
				}
				if uerr != nil {
					if !defaults {
						refused++
					}
					if err == nil {
						t.Errorf("%s: the server refuses the object (%v), Document gives no error", where, uerr)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: Document: %v (the server accepts the object)", where, err)
					continue
				}
				if !defaults {
					checked++
				}
				got, err := d.Reparse()
				if err != nil {
					t.Errorf("%s: the output does not read back: %v", where, err)
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: output (-upstream +got):\n%s", where, diff)
				}
				if diff := cmp.Diff(unknown, sortedPaths(res.Changes, prune.UnknownField, prune.UnknownMetadataField), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: unknown field paths (-upstream +got):\n%s", where, diff)
				}
				if res.Reformatted != "" {
					t.Logf("%s: %s", where, res.Reformatted)
				}
				if len(res.Changes) > 0 {
					if defaults {
						withDefaults++
					} else {
						withChanges++
					}
				}
			}
		}
	}
	t.Logf("CRs: %d files (%d unreadable), %d documents; %d checked (%d with a CRD of another project), %d refused by the server, %d without a CRD in the corpus",
		crFiles, unreadable, crDocs, checked, otherProject, refused, noCRD)
	t.Logf("CRs with changes: %d without defaults, %d with defaults; %d stored through a conversion webhook", withChanges, withDefaults, webhookStorage)
	t.Logf("reader: %d objects compared with kubectl's, in files without their final line break and as Lists", readerVariants)
	t.Logf("corpus test took %v", time.Since(start).Round(time.Millisecond))
	if checked == 0 {
		t.Errorf("no custom resource was checked")
	}
	if readerVariants == 0 {
		t.Errorf("no object was read as a List or without a final line break")
	}
}

// anyJSONInvalid reports whether a document kubectl reads is not an object
// (then kubectl refuses the file as well).
func anyJSONInvalid(docs [][]byte) bool {
	for _, d := range docs {
		var m map[string]interface{}
		if json.Unmarshal(d, &m) != nil {
			return true
		}
		if _, ok, _ := unstructured.NestedString(m, "kind"); !ok {
			return true
		}
	}
	return false
}

func sortedPaths(changes []prune.Change, reasons ...prune.Reason) []string {
	out := pathsOf(changes, reasons...)
	sort.Strings(out)
	return out
}

// checkReaderVariants compares document.Read with kubectl's reader and list
// expansion (the upstream calls) on the file without its final line breaks,
// and on its objects as one List, as kubectl get -o yaml writes them. It
// returns how many objects it compared.
func checkReaderVariants(t *testing.T, name string, data []byte) int {
	t.Helper()
	want, err := upstreamStream(data)
	if err != nil || len(want) == 0 || anyJSONInvalid(want) {
		return 0
	}
	canonical := func(obj interface{}) string {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ours := func(in []byte) []string {
		docs, err := document.Read(bytes.NewReader(in), name)
		if err != nil {
			t.Errorf("%s: document.Read: %v", name, err)
			return nil
		}
		var out []string
		for _, d := range docs {
			for _, o := range d.Objects() {
				out = append(out, canonical(o.Object))
			}
		}
		return out
	}
	kubectl := func(in []byte) []string {
		raws, err := upstreamStream(in)
		if err != nil {
			t.Errorf("%s: kubectl's reader: %v", name, err)
		}
		var out []string
		for _, raw := range raws {
			obj, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
			if err != nil {
				t.Errorf("%s: kubectl's decoding: %v", name, err)
				continue
			}
			if list, ok := obj.(*unstructured.UnstructuredList); ok {
				for _, it := range list.Items {
					out = append(out, canonical(it.Object))
				}
				continue
			}
			out = append(out, canonical(obj.(*unstructured.Unstructured).Object))
		}
		return out
	}
	stripped := bytes.TrimRight(data, "\n")
	if diff := cmp.Diff(kubectl(stripped), ours(stripped)); diff != "" {
		t.Errorf("%s without its final line break: objects (-kubectl +ours):\n%s", name, diff)
	}
	items := make([]interface{}, len(want))
	for i, raw := range want {
		var obj map[string]interface{}
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		items[i] = obj
	}
	list, err := sigsyaml.Marshal(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kubectl(list), ours(list)); diff != "" {
		t.Errorf("%s as one List: objects (-kubectl +ours):\n%s", name, diff)
	}
	return 2 * len(want)
}
