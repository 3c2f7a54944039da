package update

import (
	"encoding/json"
	"fmt"
	"strings"
)

// canonical renders a JSON value with sorted keys, so that values decoded
// along different paths (int64 or float64 numbers) compare as the server's
// stored bytes would.
func canonical(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// strictEqual is the KEP's strict deep equality, on stored values.
func strictEqual(a, b interface{}) bool { return canonical(a) == canonical(b) }

// mapKey renders the key of a list-type map item: key=value for each of
// x-kubernetes-list-map-keys, as in the server's duplicate-key messages.
func mapKey(keys []string, item interface{}) string {
	obj, _ := item.(map[string]interface{})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v, ok := obj[k]
		if !ok {
			parts = append(parts, k+"=<missing>")
			continue
		}
		parts = append(parts, k+"="+canonical(v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
