package schema

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/version"
)

// DeprecationWarning is the warning the API server returns with every
// request for version, when the CRD deprecates it: the version's own
// deprecationWarning, else the server's text. ok is false when the version
// is not deprecated (or not the CRD's), or when its deprecationWarning is
// empty: the server's warning recorder drops an empty text.
//
// apiextensions-apiserver builds the warnings once per CRD when it serves
// it (pkg/apiserver/customresource_handler.go, getOrCreateServingInfoFor,
// and its unexported defaultDeprecationWarning, the same code in 1.31 to
// 1.37): this is that code path, held to the server's warning header by
// the end-to-end test TestDeprecationWarningsAsServer.
func (c *CRD) DeprecationWarning(name string) (warning string, ok bool) {
	v, found := c.Version(name)
	if !found || !v.Deprecated {
		return "", false
	}
	if v.DeprecationWarning != nil {
		return *v.DeprecationWarning, *v.DeprecationWarning != ""
	}
	spec := &c.Object.Spec
	msg := fmt.Sprintf("%s/%s %s is deprecated", spec.Group, name, spec.Names.Kind)
	var newer []string
	for i := range spec.Versions {
		o := &spec.Versions[i]
		if o.Served && !o.Deprecated && version.CompareKubeAwareVersionStrings(name, o.Name) < 0 {
			newer = append(newer, o.Name)
		}
	}
	if len(newer) == 0 {
		return msg, true
	}
	sort.Slice(newer, func(i, j int) bool {
		return version.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0
	})
	return msg + fmt.Sprintf("; use %s/%s %s", spec.Group, newer[0], spec.Names.Kind), true
}
