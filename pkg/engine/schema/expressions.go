package schema

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// Expressions are the CEL expressions of the CRD's schemas, every
// version's: each x-kubernetes-validations rule and message expression.
func (c *CRD) Expressions() []string {
	var out []string
	for i := range c.Object.Spec.Versions {
		if s := c.Object.Spec.Versions[i].Schema; s != nil {
			out = appendExpressions(out, s.OpenAPIV3Schema)
		}
	}
	return out
}

func appendExpressions(out []string, s *apiextensionsv1.JSONSchemaProps) []string {
	if s == nil {
		return out
	}
	for _, v := range s.XValidations {
		out = append(out, v.Rule)
		if v.MessageExpression != "" {
			out = append(out, v.MessageExpression)
		}
	}
	for _, p := range s.Properties {
		out = appendExpressions(out, &p)
	}
	if s.Items != nil {
		out = appendExpressions(out, s.Items.Schema)
		for i := range s.Items.JSONSchemas {
			out = appendExpressions(out, &s.Items.JSONSchemas[i])
		}
	}
	if s.AdditionalProperties != nil {
		out = appendExpressions(out, s.AdditionalProperties.Schema)
	}
	for _, list := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			out = appendExpressions(out, &list[i])
		}
	}
	return appendExpressions(out, s.Not)
}
