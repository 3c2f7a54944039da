package document

import (
	"fmt"
	"sort"
	"strconv"

	yamlv2 "go.yaml.in/yaml/v2"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/fieldpath"
)

// keysAlikeError: a mapping has two keys that yaml.v2 keeps apart, being of
// two types (2 and "2", 1 and 1.0, true and "true"), and that
// sigs.k8s.io/yaml's YAMLToJSON converts to one string. It fills its map in
// Go's map order, which changes from run to run: kubectl sends one value or
// the other, at random. No verdict can say which the server gets.
type keysAlikeError struct {
	path fieldpath.Path // the key as converted
	a, b interface{}
}

func (e *keysAlikeError) Error() string {
	return fmt.Sprintf("keys %s and %s of the same mapping both become %s in what kubectl sends, and kubectl sends either value, "+
		"at random from one run to the next: write the key once", describeKey(e.a), describeKey(e.b), strconv.Quote(e.path.String()))
}

// describeKey words a key as yaml.v2 read it, quoted where it is a string.
func describeKey(k interface{}) string {
	switch k := k.(type) {
	case string:
		return strconv.Quote(k) + " (a string)"
	case bool:
		return strconv.FormatBool(k) + " (a boolean)"
	case int, int64, uint64:
		return fmt.Sprint(k) + " (an integer)"
	case float64:
		return strconv.FormatFloat(k, 'g', -1, 64) + " (a number)"
	}
	return fmt.Sprintf("%T", k)
}

// keysAlike finds the first mapping of data whose keys convert alike, as
// sigs.k8s.io/yaml's YAMLToJSON converts them; nil when there is none, or
// when yaml.v2 refuses data (the conversion then says why).
func keysAlike(data []byte) error {
	var v interface{}
	if yamlv2.Unmarshal(data, &v) != nil {
		return nil
	}
	return walkKeysAlike(v, nil, 0)
}

func walkKeysAlike(v interface{}, p fieldpath.Path, depth int) error {
	if depth > maxJSONDepth {
		return nil // the conversion's JSON refuses it
	}
	switch v := v.(type) {
	case []interface{}:
		for i, e := range v {
			if err := walkKeysAlike(e, append(p, fieldpath.Index(i)), depth+1); err != nil {
				return err
			}
		}
	case map[interface{}]interface{}:
		// In an order of their own, not the map's, so that the same key is
		// named on every run.
		keys := make([]convertedKey, 0, len(v))
		for k := range v {
			if s, ok := jsonKey(k); ok { // else the conversion refuses it
				keys = append(keys, convertedKey{s: s, key: k, sortBy: fmt.Sprintf("%T %v", k, k)})
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].s != keys[j].s {
				return keys[i].s < keys[j].s
			}
			return keys[i].sortBy < keys[j].sortBy
		})
		for i, k := range keys {
			if i > 0 && keys[i-1].s == k.s {
				return &keysAlikeError{path: p.Child(fieldpath.Key(k.s)), a: keys[i-1].key, b: k.key}
			}
		}
		for _, k := range keys {
			if err := walkKeysAlike(v[k.key], append(p, fieldpath.Key(k.s)), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

type convertedKey struct {
	s      string      // as converted
	key    interface{} // as yaml.v2 read it
	sortBy string
}

// maxJSONDepth is encoding/json's nesting bound, which the conversion meets.
const maxJSONDepth = 10000

// jsonKey is k as sigs.k8s.io/yaml's convertToJSONableObject writes it.
func jsonKey(k interface{}) (string, bool) {
	switch k := k.(type) {
	case string:
		return k, true
	case int:
		return strconv.Itoa(k), true
	case int64:
		return strconv.FormatInt(k, 10), true
	case float64:
		s := strconv.FormatFloat(k, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, true
	case bool:
		return strconv.FormatBool(k), true
	}
	return "", false
}
