package document

// Conversion: a YAML document to the object kubectl sends, in one parse.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	sigsyaml "sigs.k8s.io/yaml"
)

// toObject converts a YAML document to the object kubectl sends: what
// sigs.k8s.io/yaml's YAMLToJSON (yaml.v2, then encoding/json) and then
// apimachinery's json.Unmarshal (integers as int64) make of it, without
// encoding and decoding JSON in between. Or, where it cannot, the JSON, to be
// decoded: "null" or empty for an empty or null document. dupes is set when a
// mapping may have a key twice: the node tree says which.
//
// Where the round trip has more to it than a walk of the values (aliases,
// merge keys, keys other than strings, NaN, a top level that is not a
// mapping, errors), the round trip itself is made.
func toObject(data []byte) (obj map[string]interface{}, js []byte, dupes bool, err error) {
	if obj, dupes, ok := walkObject(data); ok {
		return obj, nil, dupes, nil
	}
	// Where keys of two types convert alike, the round trip's answer
	// changes from run to run: refused.
	if err := keysAlike(data); err != nil {
		return nil, nil, false, err
	}
	js, err = sigsyaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, false, err
	}
	return nil, bytes.TrimSpace(js), true, nil
}

// walkObject is toObject's conversion without the round trip: ok is false
// where only the round trip itself gives the object exactly.
func walkObject(data []byte) (obj map[string]interface{}, dupes, ok bool) {
	if mayHoldAliases(data) || mayMerge(data) {
		return nil, false, false
	}
	var top v2Mapping
	if yamlv2.Unmarshal(data, &top) != nil || !top.isMapping {
		return nil, false, false
	}
	c := converter{}
	v, ok := c.mapping(top.m, 0)
	if !ok {
		return nil, false, false
	}
	return v.(map[string]interface{}), c.dupes, true
}

// mayHoldAliases reports whether text may hold a YAML alias for
// kubectl's parser (yaml.v2): a "*" and a name ([0-9A-Za-z_-]) where a token
// may start, at the start of a line or after an indicator ("- *a", "k: *a",
// "[*a, *b]"), white space between. A "*" within a scalar, as in many a
// description ("matches *.example.com", "* a list item"), is not one. YAML
// breaks lines at U+0085, U+2028 and U+2029 too, whose last bytes are 0x85,
// 0xA8 and 0xA9; 0xBF ends a byte order mark.
func mayHoldAliases(text []byte) bool {
	for i := 0; ; i++ {
		k := bytes.IndexByte(text[i:], '*')
		if k < 0 {
			return false
		}
		if i += k; i+1 < len(text) && !isAnchorByte(text[i+1]) {
			continue
		}
		j := i
		for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
			j--
		}
		if j == 0 {
			return true
		}
		switch text[j-1] {
		case '\n', '\r', 0x85, 0xA8, 0xA9, 0xBF, ':', '-', '?', ',', '[', '{':
			return true
		}
	}
}

func isAnchorByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
}

// mayMerge reports whether text may hold a YAML merge key: "<<" plain, or
// written otherwise ("\x3c\x3c") under a tag that makes it one (!!merge,
// or spelt with a %TAG handle or a verbatim !<...>).
func mayMerge(text []byte) bool {
	return bytes.Contains(text, []byte("<<")) || bytes.Contains(text, []byte("!!")) ||
		bytes.Contains(text, []byte("!<")) || bytes.Contains(text, []byte("%TAG"))
}

// v2Mapping is a document's top level decoded by yaml.v2 as a list of
// entries, duplicate keys kept, when it is a mapping.
type v2Mapping struct {
	m         yamlv2.MapSlice
	isMapping bool
}

func (t *v2Mapping) UnmarshalYAML(unmarshal func(interface{}) error) error {
	// A sequence would decode into a MapSlice too, item by item: only a
	// mapping decodes into a struct.
	if unmarshal(&struct{}{}) != nil {
		return nil
	}
	if err := unmarshal(&t.m); err != nil {
		return err
	}
	t.isMapping = true
	return nil
}

// maxConvertDepth bounds the walk; deeper documents take the round trip,
// whose JSON decoder has its own limit.
const maxConvertDepth = 1000

type converter struct {
	dupes bool
}

// value is v as the JSON round trip gives it back; ok is false for what
// only the round trip itself gives exactly.
func (c *converter) value(v interface{}, depth int) (interface{}, bool) {
	switch v := v.(type) {
	case nil, bool:
		return v, true
	case string:
		return validUTF8(v), true
	case int:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		// encoding/json writes it, and apimachinery's json reads back an
		// int64 when the text is an integer (1.0 is written 1).
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false // NaN and infinities: the round trip's error
		}
		if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return i, true
		}
		return v, true
	case []interface{}:
		if depth >= maxConvertDepth {
			return nil, false
		}
		out := make([]interface{}, len(v))
		for i, e := range v {
			var ok bool
			if out[i], ok = c.value(e, depth+1); !ok {
				return nil, false
			}
		}
		return out, true
	case yamlv2.MapSlice:
		return c.mapping(v, depth)
	default:
		return nil, false
	}
}

func (c *converter) mapping(m yamlv2.MapSlice, depth int) (interface{}, bool) {
	if depth >= maxConvertDepth {
		return nil, false
	}
	out := make(map[string]interface{}, len(m))
	for _, it := range m {
		// Other keys are converted to strings by sigs.k8s.io/yaml, in an
		// order of its own when two convert alike; invalid UTF-8 is
		// replaced, with the same effect.
		k, ok := it.Key.(string)
		if !ok || !utf8.ValidString(k) {
			return nil, false
		}
		v, ok := c.value(it.Value, depth+1)
		if !ok {
			return nil, false
		}
		out[k] = v // the last value of a key, as yaml.v2 keeps it
	}
	if len(out) != len(m) {
		c.dupes = true
	}
	return out, true
}

// validUTF8 is s as encoding/json writes it: each byte that is not UTF-8
// becomes U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
