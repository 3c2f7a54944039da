package update

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FuzzMutability: random schemas with random markers, random old and new
// objects: no panic, and an object compared with itself is always allowed.
func FuzzMutability(f *testing.F) {
	for _, seed := range []int64{0, 1, 2, 42, 1 << 40} {
		f.Add(seed, seed+1)
	}
	f.Fuzz(func(t *testing.T, schemaSeed, valueSeed int64) {
		r := rand.New(rand.NewSource(schemaSeed))
		raw := randomSchema(r, 0)
		raw["type"] = "object"
		s, _ := ParseSchema(raw, field.NewPath("schema")) // placement errors do not stop the check
		v := rand.New(rand.NewSource(valueSeed))
		old, _ := randomValue(v, raw, 0).(map[string]interface{})
		new, _ := randomValue(v, raw, 0).(map[string]interface{})
		CheckMutability(s, old, new)
		if got := CheckMutability(s, old, old); len(got) > 0 {
			t.Fatalf("identical objects refused: %+v\nschema %v\nobject %v", got, raw, old)
		}
	})
}

var markers = []interface{}{nil, nil, "Immutable", "AddOnly", "RemoveOnly", "Bogus", 7}

func randomSchema(r *rand.Rand, depth int) map[string]interface{} {
	s := map[string]interface{}{}
	if m := markers[r.Intn(len(markers))]; m != nil {
		s[MutabilityExtension] = m
	}
	if m := markers[r.Intn(len(markers))]; m != nil && r.Intn(3) == 0 {
		s[KeyMutabilityExtension] = m
	}
	kind := r.Intn(5)
	if depth >= 3 {
		kind = 0
	}
	switch kind {
	case 0:
		s["type"] = []string{"string", "integer", "boolean"}[r.Intn(3)]
	case 1:
		s["type"] = "object"
		props := map[string]interface{}{}
		for i := 0; i < 1+r.Intn(3); i++ {
			props[string(rune('a'+i))] = randomSchema(r, depth+1)
		}
		s["properties"] = props
	case 2:
		s["type"] = "object"
		s["additionalProperties"] = randomSchema(r, depth+1)
		if r.Intn(2) == 0 {
			s["x-kubernetes-map-type"] = []string{"granular", "atomic"}[r.Intn(2)]
		}
	default:
		s["type"] = "array"
		items := randomSchema(r, depth+1)
		s["items"] = items
		switch r.Intn(4) {
		case 0:
			s["x-kubernetes-list-type"] = "set"
		case 1:
			s["x-kubernetes-list-type"] = "map"
			s["x-kubernetes-list-map-keys"] = []interface{}{"a"}
		case 2:
			s["x-kubernetes-list-type"] = "atomic"
		}
	}
	return s
}

// randomValue mostly follows the schema, sometimes not (wrong types, nulls).
func randomValue(r *rand.Rand, s map[string]interface{}, depth int) interface{} {
	if r.Intn(12) == 0 || depth > 5 {
		return []interface{}{nil, "x", int64(1), 1.5, true, map[string]interface{}{}, []interface{}{}}[r.Intn(7)]
	}
	switch {
	case s["properties"] != nil:
		obj := map[string]interface{}{}
		for k, sub := range s["properties"].(map[string]interface{}) {
			if r.Intn(3) > 0 {
				obj[k] = randomValue(r, sub.(map[string]interface{}), depth+1)
			}
		}
		return obj
	case s["additionalProperties"] != nil:
		obj := map[string]interface{}{}
		for i := 0; i < r.Intn(3); i++ {
			obj[string(rune('p'+r.Intn(3)))] = randomValue(r, s["additionalProperties"].(map[string]interface{}), depth+1)
		}
		return obj
	case s["items"] != nil:
		var list []interface{}
		for i := 0; i < r.Intn(4); i++ {
			list = append(list, randomValue(r, s["items"].(map[string]interface{}), depth+1))
		}
		return list
	}
	switch s["type"] {
	case "integer":
		return int64(r.Intn(3))
	case "boolean":
		return r.Intn(2) == 0
	}
	return string(rune('a' + r.Intn(3)))
}
