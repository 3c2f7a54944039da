package strategy

import (
	"fmt"
	"math"
	"sort"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// RuleCostLimit is the server's limit on the estimated cost of one rule
// (validation.StaticEstimatedCostLimit): a CRD with a rule over it is refused.
const RuleCostLimit uint64 = validation.StaticEstimatedCostLimit

// RuleCosts estimates, as the server's CRD validation does when it creates
// crd (a v1 CRD as read), the cost of each x-kubernetes-validations rule:
// the worst-case cost of one evaluation, compiled by the server's code,
// times how often it may run (the product of maxItems and maxProperties
// above it, or CEL's own bound when one is missing). The map is keyed by
// each rule's path in the document: spec.versions[0].schema.openAPIV3Schema
// .properties.spec.x-kubernetes-validations[0]. The limit is RuleCostLimit.
// A schema the server cannot compile has no costs (its validation says why).
func (Validators) RuleCosts(crd map[string]interface{}) (map[string]uint64, uint64, error) {
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(crd, v1); err != nil {
		return nil, RuleCostLimit, err
	}
	w := costWalk{out: map[string]uint64{}, env: environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())}
	for i, v := range v1.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		s := &apiextensionsinternal.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, s, nil); err != nil {
			return nil, RuleCostLimit, err
		}
		p := fieldpath.Path{fieldpath.Key("spec"), fieldpath.Key("versions"), fieldpath.Index(i), fieldpath.Key("schema"), fieldpath.Key("openAPIV3Schema")}
		if err := w.walk(s, validation.RootCELContext(s), p); err != nil {
			return nil, RuleCostLimit, err
		}
	}
	return w.out, RuleCostLimit, nil
}

type costWalk struct {
	out map[string]uint64
	env *environment.EnvSet
}

// walk descends as the server's ValidateCustomResourceDefinitionOpenAPISchema
// does, with the CEL context of each node.
func (w *costWalk) walk(s *apiextensionsinternal.JSONSchemaProps, ctx *validation.CELSchemaContext, p fieldpath.Path) error {
	if len(s.XValidations) > 0 {
		if err := w.compile(ctx, p); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		prop := s.Properties[k]
		if err := w.walk(&prop, ctx.ChildPropertyContext(&prop, k), p.Child(fieldpath.Key("properties")).Child(fieldpath.Key(k))); err != nil {
			return err
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		if err := w.walk(s.Items.Schema, ctx.ChildItemsContext(s.Items.Schema), p.Child(fieldpath.Key("items"))); err != nil {
			return err
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		sub := s.AdditionalProperties.Schema
		return w.walk(sub, ctx.ChildAdditionalPropertiesContext(sub), p.Child(fieldpath.Key("additionalProperties")))
	}
	return nil
}

// compile estimates the rules of one node as the server's validation does
// for a create (new expressions, the per-call limit).
func (w *costWalk) compile(ctx *validation.CELSchemaContext, p fieldpath.Path) error {
	info, err := ctx.TypeInfo()
	if err != nil {
		return fmt.Errorf("%s: no CEL type for the rules: %w", p, err)
	}
	if info == nil { // outside a rule's scope: no type and no error (the text %v gave it)
		return fmt.Errorf("%s: no CEL type for the rules: <nil>", p)
	}
	results, err := cel.Compile(info.Schema, info.DeclType, celconfig.PerCallLimit, w.env, cel.NewExpressionsEnvLoader())
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	for i, r := range results {
		cardinality := r.MaxCardinality
		if ctx.MaxCardinality != nil {
			cardinality = *ctx.MaxCardinality
		}
		w.out[p.Child(fieldpath.Key("x-kubernetes-validations")).Child(fieldpath.Index(i)).String()] = timesCapped(r.MaxCost, cardinality)
	}
	return nil
}

// timesCapped is the server's product of a cost and a cardinality
// (validation's multiplyWithOverflowGuard, unexported).
func timesCapped(cost, cardinality uint64) uint64 {
	if cost == 0 || cardinality == 0 {
		return 0
	}
	if math.MaxUint/cost < cardinality {
		return math.MaxUint
	}
	return cost * cardinality
}
