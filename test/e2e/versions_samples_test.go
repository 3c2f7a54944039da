package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/strategy"
)

// corpusSamples are the corpus's sample objects by set (loadParitySets):
// TestVersionParityCorpus sends them to each minor's server as well.
type corpusSamples struct {
	sets  map[string]*paritySet
	names []string
}

// sampleDiff tells the lines of the samples in versionsDisagreements.
const sampleDiff = corpusDiff + "sample "

// versionSamples sends the corpus's samples to minor m's server and checks
// them with the engine emulating it, set by set: the CRDs a set's samples
// need are created on the server for real (a CRD the minor refuses leaves
// its samples out; its own verdict is versionCorpus's), then each sample
// is a dry-run create with fieldValidation=Warn, as TestServerParity sends
// them. The engine's answer is prune.Document's with the server's
// validation and defaults, on the set's CRDs as the minor accepted them.
// Compared: refused, with the fields and types of the errors; refused as
// input (neither decodes it); or allowed, with the object stored.
func versionSamples(t *testing.T, cl versionClients, m kubeversion.Minor, samples corpusSamples, tally *minorTally) []versionDiff {
	t.Helper()
	ctx := context.Background()
	var diffs []versionDiff
	for _, name := range samples.names {
		set := samples.sets[name]
		if len(set.crs) == 0 {
			continue
		}
		reg, ready := versionSetCRDs(ctx, t, cl, set)
		type pair struct{ server, emulation versionVerdict }
		answers := make([]*pair, len(set.crs))
		inTurn(parityRequests, len(set.crs), func(_, i int) {
			cr := set.crs[i]
			c := ready[cr.gvk.GroupKind()]
			if c == nil {
				return
			}
			server, stored := serverSample(ctx, cl.dyn, c, cr)
			emulation, kept := emulateSample(t, reg, cr)
			if server.verdict == "allowed" && emulation.verdict == "allowed" {
				want := normalizeServerObject(stored, cr.doc.Object)
				got := normalizeServerObject(kept, cr.doc.Object)
				if d := cmp.Diff(want, got); d != "" {
					emulation = versionVerdict{"allowed, stored otherwise", d}
				}
			}
			answers[i] = &pair{server, emulation}
		})
		for i, cr := range set.crs {
			a := answers[i]
			if a == nil {
				continue
			}
			tally.samples++
			if a.server.verdict != "allowed" {
				tally.serverRefusedSamples++
			}
			if a.server.verdict != a.emulation.verdict {
				diffs = append(diffs, versionDiff{m, sampleDiff + cr.where, a.server.verdict, a.emulation.verdict})
				t.Logf("%s on %s: the server: %s; the engine: %s", cr.where, m, a.server.messages, a.emulation.messages)
				continue
			}
			tally.samplesSame++
		}
	}
	return diffs
}

// versionSetCRDs creates on the server the CRDs of set that its samples
// need, and returns those it accepted, by group and kind, with the engine's
// registry of them.
func versionSetCRDs(ctx context.Context, t *testing.T, cl versionClients, set *paritySet) (*schema.Registry, map[runtimeschema.GroupKind]*parityCRD) {
	t.Helper()
	reg := schema.NewRegistry()
	ready := map[runtimeschema.GroupKind]*parityCRD{}
	for _, cr := range set.crs {
		gk := cr.gvk.GroupKind()
		if _, seen := ready[gk]; seen {
			continue
		}
		ready[gk] = nil
		c := set.byGK[gk]
		if err := replaceCRD(ctx, cl.crd, c.obj); err != nil {
			t.Logf("%s: the server refuses the CRD: %v", c.where, err)
			continue
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.obj)
		if err != nil {
			t.Fatal(err)
		}
		def, ok, err := schema.FromObject(obj, strategy.Validators{})
		if err != nil || !ok {
			t.Errorf("%s: the server accepts the CRD, the engine reads it: %v", c.where, err)
			continue
		}
		reg.Add(def)
		ready[gk] = c
	}
	return reg, ready
}

// serverSample is the server's verdict on creating the sample cr, and the
// object it would store.
func serverSample(ctx context.Context, dyn dynamic.Interface, c *parityCRD, cr *parityCR) (versionVerdict, map[string]interface{}) {
	obj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(cr.doc.Object)}
	gvr := cr.gvk.GroupVersion().WithResource(c.obj.Spec.Names.Plural)
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if c.obj.Spec.Scope == apiextensionsv1.NamespaceScoped {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		ri = dyn.Resource(gvr).Namespace(ns)
	}
	got, err := createDryRun(ctx, ri, obj)
	if err == nil {
		return versionVerdict{verdict: "allowed"}, got.Object
	}
	v, ok := statusVerdict(err, "allowed")
	if !ok {
		return versionVerdict{"refused as input", err.Error()}, nil
	}
	return v, nil
}

// emulateSample is the engine's verdict on creating the sample cr (a copy
// of it: prune.Document changes what it reads), and the object it stores.
func emulateSample(t *testing.T, reg *schema.Registry, cr *parityCR) (versionVerdict, map[string]interface{}) {
	b, err := cr.doc.Encode()
	if err != nil {
		t.Error(err)
		return versionVerdict{verdict: "error: " + err.Error()}, nil
	}
	docs, err := document.Read(bytes.NewReader(b), cr.doc.Source.File)
	if err != nil || len(docs) != 1 {
		return versionVerdict{"refused as input", fmt.Sprint(err)}, nil
	}
	res, err := prune.Document(docs[0], reg, prune.Options{Defaults: true, Validate: strategy.Validators{}})
	var input *document.InputError
	switch {
	case errors.As(err, &input):
		return versionVerdict{"refused as input", err.Error()}, nil
	case err != nil:
		t.Errorf("%s: %v", cr.where, err)
		return versionVerdict{verdict: "error: " + err.Error()}, nil
	case res.Status == prune.Invalid:
		var errs field.ErrorList
		for _, e := range res.Errors {
			errs = append(errs, &field.Error{Field: e.Field, Type: errorTypeOf(e.Type), Detail: e.Detail})
		}
		return refusedVerdict(errs), nil
	case res.Status != prune.Checked:
		return versionVerdict{verdict: "status " + string(res.Status)}, nil
	}
	// The object stored: the document as prune writes it, read again.
	out, err := docs[0].Encode()
	if err != nil {
		t.Errorf("%s: %v", cr.where, err)
		return versionVerdict{verdict: "error: " + err.Error()}, nil
	}
	stored, err := document.Read(bytes.NewReader(out), cr.doc.Source.File)
	if err != nil || len(stored) != 1 {
		t.Errorf("%s: prune's output does not read back: %v", cr.where, err)
		return versionVerdict{verdict: fmt.Sprint("error: ", err)}, nil
	}
	return versionVerdict{verdict: "allowed"}, stored[0].Object
}
